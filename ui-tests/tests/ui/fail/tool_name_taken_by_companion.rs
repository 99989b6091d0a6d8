//! A type named like the companion `#[tool]` generates (`CountTool`): rustc reports the clash itself (README: rustc's own errors).
use surface::tool;
use surface_ui_tests::ops::OpsClient;

/// Counts.
#[tool(read_only)]
async fn count(client: &OpsClient) -> Result<u32, surface::Failure> {
    client.load().get().await
}

#[allow(non_camel_case_types, dead_code)]
struct CountTool;

fn main() {}
