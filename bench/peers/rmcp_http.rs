//! The HTTP baseline: the tuned rmcp handler (`rmcp_ops.rs`, router built once, one process
//! table shared by every session, as `examples/ops.rs` shares its `Ops`) behind rmcp's own
//! `StreamableHttpService`, mounted on an axum router and served with `axum::serve` the way
//! rmcp's docs and tests show: `StreamableHttpServerConfig::default()` (legacy clients get
//! stateful sessions with SSE, 2026-07-28 requests are served statelessly) and
//! `LocalSessionManager`.
//!
//! One change from the docs: `TCP_NODELAY` on every accepted socket. Without it every SSE
//! answer waits for Nagle's timer (~40 ms a call), which would measure the kernel, not rmcp;
//! surface's `serve_http` sets it too.
//!
//! `rmcp-http 127.0.0.1:PORT`

#[path = "rmcp_ops.rs"]
mod rmcp_ops;
#[path = "table.rs"]
mod table;

use axum::serve::ListenerExt;
use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
use rmcp::transport::{StreamableHttpServerConfig, StreamableHttpService};
use std::sync::Arc;

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let addr = std::env::args().nth(1).ok_or("usage: rmcp-http ADDR")?;
    // The router is built once; each session gets a clone of the handler (shared table).
    let ops = rmcp_ops::Ops::new();
    let service = StreamableHttpService::new(
        move || Ok(ops.clone()),
        Arc::new(LocalSessionManager::default()),
        StreamableHttpServerConfig::default(),
    );
    let router = axum::Router::new().nest_service("/mcp", service);
    let listener = tokio::net::TcpListener::bind(&addr).await?.tap_io(|tcp| {
        let _ = tcp.set_nodelay(true);
    });
    eprintln!("rmcp-http: serving MCP over Streamable HTTP at http://{addr}/mcp");
    axum::serve(listener, router).await?;
    Ok(())
}
