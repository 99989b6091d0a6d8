use surface::mcp::BundleClient;
use surface_ui_tests::tenant::{HereTool, TENANT};
use surface::{View, tool};

const PANEL: View = View::new("ui://ops/panel", "<!doctype html><p>panel</p>");

/// Shows the panel.
#[tool(read_only, view = PANEL)]
async fn panel(_client: &BundleClient) -> Result<u32, surface::Failure> {
    Ok(0)
}

fn main() {
    // The tool is bound to PANEL, and the roster declares no view.
    let _roster = surface::bundle! {
        siblings: { "a" => TENANT, tools: [HereTool] };
        root: [PanelTool];
    };
}
