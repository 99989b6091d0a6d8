//! A tool that is not `async`: one error at `fn`, with the signature to write.
use surface::tool;
use surface_ui_tests::ops::OpsClient;

/// Counts.
#[tool(read_only)]
fn count(client: &OpsClient) -> Result<u32, surface::Failure> {
    let _ = client;
    Ok(1)
}

fn main() {
    let _ = CountTool;
}
