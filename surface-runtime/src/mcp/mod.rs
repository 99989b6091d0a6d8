//! The MCP face: serve a rooted bundle of surfaces to agents over the Model Context Protocol.
//!
//! [`McpServer`] takes a core (`Member::new(EXPOSE)`), keyed siblings, bundle-root tools, a
//! client factory, the server's identity and `instructions`, composes them into one immutable
//! generation and answers [`ServedMcp`]: serve connections (stdio, or any reader/writer pair),
//! [`ServedMcp::reroster`] the siblings live, [`ServedMcp::close`].
//!
//! Names on the wire: a cell `k` is `surface://cells/k` (on sibling `t`: `surface://cells/t/k`),
//! a collection adds the template `surface://collections/k/{id}`, a procedure `ns.verb` is the
//! tool `ns_verb` (`t_ns_verb`), a sibling's bespoke tool `t_name`, a root tool stays bare.
//!
//! ```no_run
//! # use surface_runtime::mcp::{McpServer, Member, BundleClient};
//! # async fn run<S: surface_runtime::Surface>(expose: surface_runtime::Expose<S>, client: S::Client) {
//! let served = McpServer::new("ops", "1.0.0")
//!     .instructions("Everything here is about processes, not files.")
//!     .core(Member::new(expose))
//!     .client(move || BundleClient::with_core(client.clone()))
//!     .start()
//!     .expect("the bundle composes");
//! served.serve_stdio().await.expect("stdio serves");
//! # }
//! ```

mod ask_requests;
mod asking;
mod call_line;
mod caller;
mod cancel;
mod clients;
mod completion;
mod config;
mod context;
pub mod contract;
#[cfg(feature = "http")]
mod drain;
mod encode;
mod era;
mod fast;
mod generation;
mod handler_context;
#[cfg(feature = "http")]
mod http;
#[cfg(feature = "auth")]
mod http_auth;
#[cfg(feature = "http")]
mod http_bypass;
#[cfg(feature = "http")]
mod http_call_streams;
#[cfg(feature = "http")]
mod http_conn;
#[cfg(feature = "http")]
mod http_gate;
#[cfg(feature = "http")]
mod http_headers;
#[cfg(feature = "http")]
mod http_options;
#[cfg(feature = "http")]
mod http_response;
#[cfg(feature = "http")]
pub(crate) mod http_sessions;
#[cfg(feature = "http")]
mod http_standalone;
mod hub;
mod jsonrpc;
mod listen_ids;
mod meta_memo;
pub mod observe;
mod prompts;
mod reach;
pub mod registry;
mod requests;
mod resources;
mod results;
mod serve;
mod served;
mod server;
mod session;
mod skills;
mod standalone;
mod stdio_bypass;
mod subscriptions;
pub(crate) mod task_sharing;
mod tasks;
mod transport;
mod views;
mod watch;
mod write_buffer;

pub use crate::audit::{AUDIT_TARGET, Audit};
pub use crate::bundle::{BundleClient, Member, RootTools, Roster, Siblings};
pub use crate::bundle::{DialFactory, OwnedBundle};
pub use crate::table::{resource_uri, scoped_tool_name};
pub use crate::tool::StaticTool;
pub use clients::{BORN_DEAD_DIALS, BORN_DEAD_WINDOW};
pub use config::{
    ASK_TIMEOUT, CLOSE_STALL, ClientFactory, Instructions, MAX_IN_FLIGHT, MAX_LINE, MAX_SUBSCRIPTIONS,
};
pub use generation::CompositionError;
#[cfg(feature = "http")]
pub use http::{HttpServer, HttpService};
#[cfg(feature = "http")]
pub use http_options::HttpOptions;
pub use results::{BRAND, branded, normalize};
pub use serve::{Connection, ServeError, ServedMcp, init_tracing};
pub use server::McpServer;
pub use task_sharing::{TASK_LEASE, TASK_ORDERS, TASK_ORDERS_POLL};
pub use tasks::{
    MAX_REMOTE_WATCHES, MAX_TASKS, MAX_TASKS_PER_SESSION, TASK_POLL_INTERVAL, TASK_TTL, TaskSettings,
};

/// The stdio transport's codec, for fuzzing, tests and the benchmarks: how a line is decoded
/// (and what it is answered when it is no request), how a message is written, the bounds, and
/// the transport itself, which the benchmarks hand rmcp alone to measure what it buys.
#[doc(hidden)]
pub mod __transport {
    pub use super::encode::write_message;
    pub use super::jsonrpc::{Decoded, Kind, Outline, decode_line, outline};
    pub use super::transport::{FastTransport, Limits};
}
