use surface::mcp::BundleClient;
use surface::tool;
use surface_ui_tests::tenant::{HereTool, TENANT};

/// Collides with sibling `a`'s `here`.
#[tool(read_only)]
async fn a_here(_client: &BundleClient) -> Result<u32, surface::Failure> {
    Ok(0)
}

fn main() {
    let _roster = surface::bundle! {
        siblings: { "a" => TENANT, tools: [HereTool] };
        root: [AHereTool];
    };
}
