//! `bundle!` builds a static roster (core, siblings with their tools, root tools) and checks
//! its names at compile time; the roster then serves like any other.

use std::convert::Infallible;
use surface::mcp::{BundleClient, McpServer};
use surface::{Expose, expose, surface, tool};

#[surface]
pub struct Core {
    #[cell]
    pub banner: String,
    #[collection(key = String)]
    pub rows: String,
}

#[surface]
impl Core {
    #[procedure("who.get")]
    async fn who(&self) -> Result<String, Infallible> {
        Ok("core".into())
    }
}

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

/// The roster's keys.
#[tool(read_only)]
async fn keys(client: &BundleClient) -> Result<Vec<String>, surface::Failure> {
    Ok(client.sibling_keys().map(str::to_owned).collect())
}

const CORE: Expose<Core> = expose!(Core { banner: resource, rows: resource, "who.get": tool });
const TENANT: Expose<Tenant> = expose!(Tenant { entries: resource, "ops.run": tool });

fn main() {
    let roster = surface::bundle! {
        core: CORE;
        siblings: { "a" => TENANT, tools: [HereTool], "b" => TENANT, tools: [HereTool] };
        root: [KeysTool];
    };
    assert!(roster.core.is_some());
    assert_eq!(roster.siblings.keys().collect::<Vec<_>>(), ["a", "b"]);
    let served = McpServer::new("static", "0").roster(roster).start();
    assert!(served.is_ok());
}
