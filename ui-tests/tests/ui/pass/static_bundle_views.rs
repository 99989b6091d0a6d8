//! A tool bound to a view the static roster declares: `bundle!` accepts it, the roster carries
//! the view, and the served face lists it and points the tool at it.

use surface::mcp::{BundleClient, McpServer};
use surface_ui_tests::tenant::{HereTool, TENANT};
use surface::{StaticTool, View, tool};

const PANEL: View = View::new("ui://ops/panel", "<!doctype html><p>panel</p>").prefers_border(false);

/// Shows the panel.
#[tool(read_only, view = PANEL)]
async fn panel(_client: &BundleClient) -> Result<u32, surface::Failure> {
    Ok(0)
}

/// Not bound to any view.
#[tool(read_only)]
async fn plain(_client: &BundleClient) -> Result<u32, surface::Failure> {
    Ok(1)
}

fn main() {
    assert_eq!(PanelTool::VIEW, Some("ui://ops/panel"));
    assert_eq!(PlainTool::VIEW, None);
    let roster = surface::bundle! {
        siblings: { "a" => TENANT, tools: [HereTool] };
        root: [PanelTool, PlainTool];
        views: [PANEL]
    };
    assert_eq!(roster.views, [PANEL]);
    McpServer::new("ops", "0").roster(roster).start().expect("the bundle composes");
}
