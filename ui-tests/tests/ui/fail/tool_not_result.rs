use surface::{surface, tool};

#[surface]
pub struct Ops {
    #[cell]
    pub load: u32,
}

#[surface]
impl Ops {}

/// A tool.
#[tool(read_only)]
async fn load(client: &OpsClient) -> u32 {
    client.load().get().await.unwrap_or_default()
}

fn main() {}
