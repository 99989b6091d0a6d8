//! A tool whose input follows its client: the error says the order to write.
use surface::tool;
use surface_ui_tests::ops::{CountArgs, OpsClient};

/// Counts.
#[tool(read_only)]
async fn count(client: &OpsClient, args: CountArgs) -> Result<u32, surface::Failure> {
    Ok(client.load().get().await?.max(args.min))
}

fn main() {}
