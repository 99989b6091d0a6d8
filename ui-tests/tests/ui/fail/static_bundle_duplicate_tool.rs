use std::convert::Infallible;
use surface::mcp::BundleClient;
use surface::{Expose, expose, surface, tool};

#[surface]
pub struct Tenant {
    #[cell]
    pub entries: u32,
}

#[surface]
impl Tenant {
    #[procedure("ops.run")]
    async fn run(&self) -> Result<u32, Infallible> {
        Ok(1)
    }
}

/// Where am I?
#[tool(read_only)]
async fn here(client: &TenantClient) -> Result<u32, surface::Failure> {
    client.ops().run().await
}

/// Collides with sibling `a`'s `here`.
#[tool(read_only)]
async fn a_here(_client: &BundleClient) -> Result<u32, surface::Failure> {
    Ok(0)
}

const TENANT: Expose<Tenant> = expose!(Tenant { "ops.run": tool });

fn main() {
    let _roster = surface::bundle! {
        siblings: { "a" => TENANT, tools: [HereTool] };
        root: [AHereTool];
    };
}
