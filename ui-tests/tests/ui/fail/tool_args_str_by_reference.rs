//! A tool borrowing its input as `&str`: one error at it, naming the owned `String`.
use surface::tool;
use surface_ui_tests::ops::OpsClient;

/// Finds.
#[tool(read_only)]
async fn find(name: &str, client: &OpsClient) -> Result<u32, surface::Failure> {
    Ok(client.load().get().await? + name.len() as u32)
}

fn main() {
    let _ = FindTool;
}
