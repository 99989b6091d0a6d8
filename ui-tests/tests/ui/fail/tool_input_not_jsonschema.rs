use serde::Deserialize;
use surface::{surface, tool};

#[surface]
pub struct Ops {
    #[cell]
    pub load: u32,
}

#[surface]
impl Ops {}

/// Derives `Deserialize` but not `JsonSchema`.
#[derive(Deserialize)]
pub struct Scale {
    pub by: u32,
}

/// A tool.
#[tool(read_only)]
async fn scaled(args: Scale, client: &OpsClient) -> Result<u32, surface::Failure> {
    Ok(client.load().get().await? * args.by)
}

fn main() {}
