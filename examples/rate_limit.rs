//! Per-principal rate limiting as a call layer: the ops surface, where each caller may make
//! `--per-minute N` calls a minute (default 10, with bursts of as many); one more is answered
//! `isError`: "rate limit: … retry after N s".
//!
//! `cargo run --example rate_limit` serves it on stdio, where nobody is identified: every
//! caller shares the `anonymous` bucket. `-- --http ADDR` serves it over Streamable HTTP; with
//! authentication (or a principal your own HTTP layer puts in the request's extensions), each
//! subject has a bucket of its own.
//!
//! The limiter is the `governor` crate's keyed GCRA limiter (no allocation per check, no
//! background task); the layer is `surface::layer::CallLayer`, which every MCP transport
//! passes before a call runs.

#[allow(dead_code)]
#[path = "ops.rs"]
mod ops;

use governor::clock::{Clock, DefaultClock};
use governor::{DefaultKeyedRateLimiter, Quota, RateLimiter};
use std::num::NonZeroU32;
use std::sync::Arc;
use surface::layer::{CallInfo, CallLayer};

/// Above this many callers remembered, the ones whose buckets are full again are forgotten.
const MAX_REMEMBERED: usize = 10_000;

/// Each principal's calls, limited to a quota; callers nobody identified share one bucket.
pub struct RateLimit {
    limiter: DefaultKeyedRateLimiter<String>,
    clock: DefaultClock,
}

impl RateLimit {
    /// `calls` a minute per principal, in bursts of up to `calls`.
    pub fn per_minute(calls: NonZeroU32) -> RateLimit {
        RateLimit {
            limiter: RateLimiter::keyed(Quota::per_minute(calls)),
            clock: DefaultClock::default(),
        }
    }
}

impl CallLayer for RateLimit {
    fn admit(&self, call: &CallInfo<'_>) -> Result<(), String> {
        let who = call.principal().map_or("anonymous", |p| p.subject());
        if self.limiter.len() > MAX_REMEMBERED {
            self.limiter.retain_recent();
        }
        match self.limiter.check_key(&who.to_owned()) {
            Ok(()) => Ok(()),
            Err(not_until) => {
                let wait = not_until.wait_time_from(self.clock.now());
                let seconds = (wait.as_secs_f64().ceil() as u64).max(1);
                Err(format!(
                    "rate limit: {who} made too many calls; retry after {seconds} s"
                ))
            }
        }
    }
}

/// The ops MCP server behind `layer`.
pub fn server(layer: RateLimit) -> surface::mcp::McpServer {
    ops::mcp_server(Arc::new(ops::Ops::new())).layer(layer)
}

const USAGE: &str = "usage: rate_limit [--per-minute N] [--http ADDR]   (no --http: MCP on stdio)";

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let (mut per_minute, mut http) = (NonZeroU32::new(10).unwrap(), None);
    let mut rest = args.iter();
    while let Some(flag) = rest.next() {
        match (flag.as_str(), rest.next()) {
            ("--per-minute", Some(n)) => match n.parse() {
                Ok(n) => per_minute = n,
                Err(_) => {
                    eprintln!("rate_limit: --per-minute takes a whole number above 0, not {n}\n{USAGE}");
                    std::process::exit(2);
                }
            },
            ("--http", Some(addr)) => http = Some(addr.parse::<std::net::SocketAddr>()?),
            _ => {
                eprintln!("{USAGE}");
                std::process::exit(2);
            }
        }
    }
    surface::mcp::init_tracing();
    let served = server(RateLimit::per_minute(per_minute)).start()?;
    match http {
        None => served.serve_stdio().await?,
        Some(addr) => ops::serve_http_with(served, surface::mcp::HttpOptions::new(addr)).await?,
    }
    Ok(())
}
