//! A tool taking its client by value: the error is at the type and says `&OpsClient`.
use surface::tool;
use surface_ui_tests::ops::OpsClient;

/// Counts.
#[tool(read_only)]
async fn count(client: OpsClient) -> Result<u32, surface::Failure> {
    client.load().get().await
}

fn main() {}
