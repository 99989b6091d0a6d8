//! A tool taking its client in an `Arc`: one error at the type, naming `&OpsClient`.
use std::sync::Arc;
use surface::tool;
use surface_ui_tests::ops::OpsClient;

/// Counts.
#[tool(read_only)]
async fn count(client: Arc<OpsClient>) -> Result<u32, surface::Failure> {
    client.load().get().await
}

fn main() {
    let _ = CountTool;
}
