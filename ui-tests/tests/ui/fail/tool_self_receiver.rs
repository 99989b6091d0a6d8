//! `&self` on a bespoke tool: one error, at `&self`.
use surface::tool;
use surface_ui_tests::ops::OpsClient;

pub struct Counter;

impl Counter {
    /// Counts.
    #[tool(read_only)]
    async fn count(&self, client: &OpsClient) -> Result<u32, surface::Failure> {
        client.load().get().await
    }
}

fn main() {}
