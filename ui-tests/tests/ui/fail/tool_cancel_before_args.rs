//! The cancellation token between the client and the input: at the token, with the whole order
//! to write (input, client, token), not one the next check would refuse.
use surface::{CancellationToken, tool};
use surface_ui_tests::ops::{CountArgs, OpsClient};

/// Counts.
#[tool(read_only)]
async fn count(client: &OpsClient, cancel: CancellationToken, args: CountArgs) -> Result<u32, surface::Failure> {
    let _ = cancel;
    Ok(client.load().get().await?.max(args.min))
}

fn main() {
    let _ = CountTool;
}
