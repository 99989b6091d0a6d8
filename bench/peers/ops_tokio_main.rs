//! The ops example served on stdio the way a server is ordinarily written: `#[tokio::main]`
//! (the multi-thread runtime), then `serve_stdio`. The library serves the connection on a
//! current-thread runtime of its own; this measures what such a user gets without asking.

use std::sync::Arc;
use surface_bench::ops::{Ops, mcp_server};

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    surface::mcp::init_tracing();
    mcp_server(Arc::new(Ops::new())).start()?.serve_stdio().await?;
    Ok(())
}
