//! An ordinary axum web app — a JSON route and a health route — that also serves the ops
//! surface of `examples/ops.rs` over MCP at `/mcp`, through `ServedMcp::http_service()`.
//!
//! ```sh
//! cargo run --example axum_app -- --http 127.0.0.1:8940
//! curl -s http://127.0.0.1:8940/health          # ok
//! curl -s http://127.0.0.1:8940/api/load        # {"cpu":0.0,"procs":2}
//! # and an MCP client at http://127.0.0.1:8940/mcp
//! ```
//!
//! On SIGTERM or Ctrl-C it shuts down gracefully: the MCP calls in flight are answered (new
//! ones get `503`) for at most the drain timeout, then the MCP sessions and their streams end,
//! and axum stops once its connections have closed.

use axum::Router;
use axum::routing::get;
use std::sync::Arc;
use std::time::Duration;

#[allow(dead_code)]
#[path = "ops.rs"]
mod ops;

/// How long a shutdown waits for the MCP calls in flight.
const DRAIN: Duration = Duration::from_secs(10);

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    surface::mcp::init_tracing();
    let mut args = std::env::args().skip(1);
    let addr = match (args.next().as_deref(), args.next()) {
        (None, _) => "127.0.0.1:8940".to_owned(),
        (Some("--http"), Some(addr)) => addr,
        _ => return Err("usage: axum_app [--http ADDR]".into()),
    };

    let ops = Arc::new(ops::Ops::new());
    let served = ops::mcp_server(ops.clone()).start()?;
    let options = surface::mcp::HttpOptions::loopback(0).drain_timeout(DRAIN);
    let mcp = served.http_service_with(&options)?;

    let app = Router::new()
        .route("/health", get(|| async { "ok" }))
        .route(
            "/api/load",
            get(move || async move { axum::Json(ops.load.get()) }),
        )
        .nest_service("/mcp", mcp.clone());

    let listener = tokio::net::TcpListener::bind(&addr).await?;
    eprintln!(
        "axum_app: serving http://{}/mcp beside /health and /api/load",
        listener.local_addr()?
    );
    axum::serve(listener, app)
        .with_graceful_shutdown(async move {
            stopped().await;
            let answered = mcp.shutdown().await;
            eprintln!(
                "axum_app: shutting down ({})",
                if answered {
                    "every MCP call answered"
                } else {
                    "the drain timeout passed"
                }
            );
        })
        .await?;
    Ok(())
}

/// SIGTERM, or Ctrl-C.
async fn stopped() {
    let ctrl_c = tokio::signal::ctrl_c();
    #[cfg(unix)]
    {
        let mut term = tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate())
            .expect("SIGTERM can be handled");
        tokio::select! {
            _ = ctrl_c => {}
            _ = term.recv() => {}
        }
    }
    #[cfg(not(unix))]
    let _ = ctrl_c.await;
}
