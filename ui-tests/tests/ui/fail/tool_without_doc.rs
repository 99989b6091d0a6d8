//! A bespoke tool with no doc comment: agents would see no description.
use surface::{surface, tool};

#[surface]
pub struct Ops {
    #[cell]
    pub load: u32,
}

#[surface]
impl Ops {}

#[tool(read_only)]
async fn count(client: &OpsClient) -> Result<u32, surface::Failure> {
    client.load().get().await
}

fn main() {
    let _ = CountTool;
}
