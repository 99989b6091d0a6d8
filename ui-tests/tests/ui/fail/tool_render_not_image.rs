use surface::{CancellationToken, surface, tool};

#[surface]
pub struct Ops {
    #[cell]
    pub load: u32,
}

#[surface]
impl Ops {}

/// Answers a number, not a picture.
#[tool(read_only, render = image)]
async fn chart(client: &OpsClient, _cancel: CancellationToken) -> Result<u32, surface::Failure> {
    client.load().get().await
}

fn main() {}
