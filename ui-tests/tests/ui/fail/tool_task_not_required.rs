use surface::{CancellationToken, surface, tool};

#[surface]
pub struct Ops {
    #[cell]
    pub load: u32,
}

#[surface]
impl Ops {}

/// A tool that takes a while.
#[tool(task = always)]
async fn rebuild(client: &OpsClient, _cancel: CancellationToken) -> Result<(), surface::Failure> {
    client.load().set(&0).await
}

fn main() {}
