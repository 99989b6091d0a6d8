//! `mutates = true`: the error says to write `mutates`.
use surface::tool;
use surface_ui_tests::ops::OpsClient;

/// Resets.
#[tool(mutates = true)]
async fn reset(client: &OpsClient) -> Result<(), surface::Failure> {
    client.load().set(&0).await
}

fn main() {
    let _ = ResetTool;
}
