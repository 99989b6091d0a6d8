//! A tool with two clients: the error is at the second.
use surface::tool;
use surface_ui_tests::ops::OpsClient;

/// Counts.
#[tool(read_only)]
async fn count(client: &OpsClient, other: &OpsClient) -> Result<u32, surface::Failure> {
    let _ = other;
    client.load().get().await
}

fn main() {}
