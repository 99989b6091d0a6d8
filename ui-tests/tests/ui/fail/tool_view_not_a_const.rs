use surface::mcp::BundleClient;
use surface::tool;

/// Shows the panel.
#[tool(read_only, view = "ui://ops/panel")]
async fn panel(_client: &BundleClient) -> Result<u32, surface::Failure> {
    Ok(0)
}

fn main() {}
