//! A tool taking its client by `&mut`: the error is at the type.
use surface::tool;
use surface_ui_tests::ops::OpsClient;

/// Counts.
#[tool(read_only)]
async fn count(client: &mut OpsClient) -> Result<u32, surface::Failure> {
    client.load().get().await
}

fn main() {}
