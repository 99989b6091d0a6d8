//! A tool taking its cancellation token first: at the token, with the order to write.
use surface::{CancellationToken, tool};
use surface_ui_tests::ops::{CountArgs, OpsClient};

/// Counts.
#[tool(read_only)]
async fn count(cancel: CancellationToken, args: CountArgs, client: &OpsClient) -> Result<u32, surface::Failure> {
    let _ = cancel;
    Ok(client.load().get().await?.max(args.min))
}

fn main() {
    let _ = CountTool;
}
