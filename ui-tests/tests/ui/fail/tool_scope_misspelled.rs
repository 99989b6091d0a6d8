use surface::{scopes, surface, tool};

#[surface]
pub struct Ops {
    #[cell]
    pub load: u32,
}

#[surface]
impl Ops {}

scopes!(Ops {
    read = "ops.read",
    admin = "ops.admin": read,
});

/// The load.
#[tool(read_only, scope = reed)]
async fn peek(client: &OpsClient) -> Result<u32, surface::Failure> {
    client.load().get().await
}

fn main() {}
