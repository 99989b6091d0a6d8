//! What the builder fixes before serving: the `instructions`, how a generation gets its
//! clients, the capabilities announced, and the bounds a session is held to.

use super::clients::Clients;
use super::transport::Limits;
pub use super::transport::{CLOSE_STALL, MAX_IN_FLIGHT, MAX_LINE};
use crate::bundle::{BundleClient, DialFactory};
use rmcp::model::{Implementation, ServerCapabilities, ServerConfig};
use std::sync::Arc;
use tokio_util::sync::CancellationToken;

/// How many URIs one session may watch at once by default (legacy subscriptions and the URIs
/// of its open listen streams together): each costs a task and a feed.
pub const MAX_SUBSCRIPTIONS: usize = 1024;

/// How long a call waits by default for the host's answer to one ask on a legacy session
/// (`elicitation/create`, `sampling/createMessage`, `roots/list`): a person may take a while
/// over a form, but not forever.
pub const ASK_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(300);

/// The bounds the builder sets for every session (each with its documented default).
#[derive(Clone, Debug)]
pub(crate) struct Settings {
    /// URIs one session may watch at once ([`MAX_SUBSCRIPTIONS`]).
    pub(crate) max_subscriptions: usize,
    /// What our transport (stdio, `serve`) holds one connection to: requests in flight
    /// ([`MAX_IN_FLIGHT`]), the longest line ([`MAX_LINE`]) and how long a stalled writer is
    /// waited for at the end ([`CLOSE_STALL`]).
    pub(crate) transport: Limits,
    /// Which calls leave an audit event.
    pub(crate) audit: crate::audit::Audit,
    /// How long one ask waits for the host's answer ([`ASK_TIMEOUT`]).
    pub(crate) ask_timeout: std::time::Duration,
    /// The bounds of MCP tasks (tasks.rs).
    pub(crate) tasks: super::tasks::TaskSettings,
    /// Middleware every call passes (`McpServer::layer`).
    pub(crate) layers: crate::layer::Layers,
    /// The scopes a connection over our transport (stdio, `serve`) is given; `None`: all.
    pub(crate) stdio_scopes: Option<Vec<String>>,
}

impl Default for Settings {
    fn default() -> Self {
        Settings {
            max_subscriptions: MAX_SUBSCRIPTIONS,
            transport: Limits::default(),
            audit: crate::audit::Audit::Off,
            ask_timeout: ASK_TIMEOUT,
            tasks: super::tasks::TaskSettings::default(),
            layers: crate::layer::Layers::default(),
            stdio_scopes: None,
        }
    }
}

/// The server's `instructions`: none, a fixed text, or a function read at every `initialize`
/// and every `server/discover` (an empty result is no `instructions` key).
#[derive(Clone, Default)]
pub enum Instructions {
    /// No instructions.
    #[default]
    None,
    /// A fixed text.
    Text(String),
    /// Read at every `initialize` and `server/discover`.
    Dynamic(Arc<dyn Fn() -> String + Send + Sync>),
}

impl Instructions {
    /// Instructions read from `f` each time a host asks.
    pub fn dynamic(f: impl Fn() -> String + Send + Sync + 'static) -> Self {
        Instructions::Dynamic(Arc::new(f))
    }

    pub(crate) fn read(&self) -> Option<String> {
        let text = match self {
            Instructions::None => return None,
            Instructions::Text(t) => t.clone(),
            Instructions::Dynamic(f) => f(),
        };
        (!text.is_empty()).then_some(text)
    }
}

impl From<&str> for Instructions {
    fn from(s: &str) -> Self {
        Instructions::Text(s.to_owned())
    }
}

impl From<String> for Instructions {
    fn from(s: String) -> Self {
        Instructions::Text(s)
    }
}

/// Produces the live clients of the bundle; re-invoked after every reroster.
pub type ClientFactory = Arc<dyn Fn() -> BundleClient + Send + Sync>;

/// How a generation gets its clients.
#[derive(Clone)]
pub(crate) enum Factory {
    /// Serve fresh: in-process clients, nothing to dial or dispose.
    Bare(ClientFactory),
    /// Bridge: dial a served surface, memoise the connection, re-dial after a drop.
    Dial(DialFactory),
}

impl Factory {
    /// The link one generation reads through: fixed clients, or a memoised dial that ends
    /// when the server closes.
    pub(crate) fn link(&self, closed: &CancellationToken) -> Clients {
        match self {
            Factory::Bare(f) => Clients::Fixed(f()),
            Factory::Dial(f) => Clients::bridged(f.clone(), closed.clone()),
        }
    }
}

/// What `initialize` and `server/discover` announce: every capability the handler serves.
pub(crate) fn server_config(identity: Implementation) -> ServerConfig {
    // Logging (deprecated by rmcp for 2026-07-28) still serves legacy sessions.
    #[allow(deprecated)]
    let capabilities = ServerCapabilities::builder()
        .enable_tools()
        .enable_tool_list_changed()
        .enable_resources()
        .enable_resources_subscribe()
        .enable_resources_list_changed()
        .enable_logging()
        .enable_completions()
        .enable_prompts()
        .enable_prompts_list_changed()
        .build();
    ServerConfig::new(capabilities).with_server_info(identity)
}
