//! The ops example served on stdio exactly as `examples/ops.rs` serves it (`mcp_server` over a
//! live `Ops`, `serve_stdio`, the same current-thread runtime), with one difference: mimalloc as
//! the binary's global allocator. The library sets no allocator; this measures what a binary
//! that picks one gains (`ops-surface` is the same without it).

#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

use std::sync::Arc;
use surface_bench::ops::{Ops, mcp_server};

#[tokio::main(flavor = "current_thread")]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    surface::mcp::init_tracing();
    mcp_server(Arc::new(Ops::new())).start()?.serve_stdio().await?;
    Ok(())
}
