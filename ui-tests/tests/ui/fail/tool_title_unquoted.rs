//! An unquoted title: the error says to write `title = "…"`.
use surface::tool;
use surface_ui_tests::ops::OpsClient;

/// Resets.
#[tool(mutates, title = Reset)]
async fn reset(client: &OpsClient) -> Result<(), surface::Failure> {
    client.load().set(&0).await
}

fn main() {
    let _ = ResetTool;
}
