use std::convert::Infallible;
use surface::mcp::McpServer;
use surface::{Cell, Expose, expose, surface};

/// A counter an agent can read, watch and bump.
#[surface]
pub struct Counter {
    /// How far it has counted.
    #[cell]
    pub count: u32,
}

#[surface]
impl Counter {
    /// Adds one and answers the new count.
    #[procedure("count.up")]
    async fn up(&self) -> Result<u32, Infallible> {
        Ok(self.count.update(|c| {
            *c += 1;
            *c
        }))
    }
}

/// Default-deny: only what is named here reaches an agent, checked at compile time.
const EXPOSE: Expose<Counter> = expose!(Counter { count: resource, "count.up": tool(mutates) });

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let counter = Counter { count: Cell::new(0) };
    McpServer::new("counter", "0.1.0")
        .surface(counter, EXPOSE)
        .serve_stdio()
        .await?;
    Ok(())
}
