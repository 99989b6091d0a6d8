//! A tool taking its input by reference: the error says to take it owned.
use surface::tool;
use surface_ui_tests::ops::{CountArgs, OpsClient};

/// Counts.
#[tool(read_only)]
async fn count(args: &CountArgs, client: &OpsClient) -> Result<u32, surface::Failure> {
    Ok(client.load().get().await?.max(args.min))
}

fn main() {}
