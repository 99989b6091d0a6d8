//! Middleware around served calls: a [`CallLayer`] sees each call before it runs — the tool,
//! the caller, the arguments — and may refuse it with a sentence, which the caller gets as the
//! call's failure (`isError` on MCP).
//!
//! Why a small trait of our own rather than a `tower::Layer` over a call service: the call
//! path is the server's hot path (a `tools/call` answers in microseconds), and a tower stack
//! around it would box every call's future and clone a service per call, for a readiness
//! (`poll_ready`) that means nothing per call. A layer here is one synchronous check, in the
//! order the layers were added, and with no layer the call pays one empty-slice test. Work
//! that must wait (a remote quota) belongs in the tool, or in tower layers around the HTTP
//! endpoint (`served.http_service()`), which see the HTTP request instead.
//!
//! The face-neutral part lives here; `McpServer::layer` applies layers to every call on every
//! MCP transport (stdio, Streamable HTTP, in memory, their fast paths alike), and
//! `WireOptions::layer` to every call on the wire face (the daemon a CLI dials). One layer
//! value serves both: a call is named as MCP names its tool (`proc_kill`) on each.

use crate::Principal;
use serde_json::{Map, Value};

/// One call about to run, as a [`CallLayer`] sees it.
pub struct CallInfo<'a> {
    tool: &'a str,
    principal: Option<&'a Principal>,
    arguments: Option<&'a Map<String, Value>>,
}

impl<'a> CallInfo<'a> {
    /// A call of `tool` by `principal` (none when the face identifies nobody) with `arguments`.
    pub fn new(
        tool: &'a str,
        principal: Option<&'a Principal>,
        arguments: Option<&'a Map<String, Value>>,
    ) -> Self {
        CallInfo {
            tool,
            principal,
            arguments,
        }
    }

    /// The tool's name as served (`proc_kill`).
    pub fn tool(&self) -> &str {
        self.tool
    }

    /// Who calls: the principal the face identified (a verified bearer token's subject on
    /// Streamable HTTP with authentication), or none.
    pub fn principal(&self) -> Option<&Principal> {
        self.principal
    }

    /// The call's arguments as sent (not yet checked against the tool's input schema).
    pub fn arguments(&self) -> Option<&Map<String, Value>> {
        self.arguments
    }

    /// The size of the arguments as compact JSON, in bytes (0 without arguments); computed
    /// when asked.
    pub fn arguments_size(&self) -> usize {
        struct Count(usize);
        impl std::io::Write for Count {
            fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
                self.0 += buf.len();
                Ok(buf.len())
            }
            fn flush(&mut self) -> std::io::Result<()> {
                Ok(())
            }
        }
        let Some(arguments) = self.arguments else { return 0 };
        let mut count = Count(0);
        // Writing into a counter cannot fail.
        let _ = serde_json::to_writer(&mut count, arguments);
        count.0
    }
}

/// Middleware around every served call: [`admit`](CallLayer::admit) runs before the call and
/// may refuse it with a sentence the caller reads.
///
/// ```
/// use surface_runtime::layer::{CallInfo, CallLayer};
///
/// /// Refuses arguments over 64 KiB.
/// struct MaxArguments(usize);
///
/// impl CallLayer for MaxArguments {
///     fn admit(&self, call: &CallInfo<'_>) -> Result<(), String> {
///         match call.arguments_size() {
///             n if n > self.0 => Err(format!("the arguments of {} are {n} bytes; the limit is {}", call.tool(), self.0)),
///             _ => Ok(()),
///         }
///     }
/// }
///
/// let args = serde_json::json!({"name": "x".repeat(100)});
/// let call = CallInfo::new("proc_spawn", None, args.as_object());
/// assert!(MaxArguments(64 * 1024).admit(&call).is_ok());
/// assert_eq!(
///     MaxArguments(16).admit(&call).unwrap_err(),
///     "the arguments of proc_spawn are 111 bytes; the limit is 16"
/// );
/// ```
pub trait CallLayer: Send + Sync + 'static {
    /// `Ok` lets the call run; `Err(sentence)` refuses it: the call never runs and its caller
    /// gets `sentence` as the call's failure. Say what to do ("retry after 3 s").
    fn admit(&self, call: &CallInfo<'_>) -> Result<(), String>;
}

/// Layers in the order they were added.
#[cfg(any(feature = "mcp", feature = "wire"))]
#[derive(Clone, Default)]
pub(crate) struct Layers(Vec<std::sync::Arc<dyn CallLayer>>);

#[cfg(any(feature = "mcp", feature = "wire"))]
impl std::fmt::Debug for Layers {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{} call layers", self.0.len())
    }
}

#[cfg(any(feature = "mcp", feature = "wire"))]
impl Layers {
    pub(crate) fn push(&mut self, layer: impl CallLayer) {
        self.0.push(std::sync::Arc::new(layer));
    }

    pub(crate) fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// The first refusal of `call`, if any layer refuses it.
    pub(crate) fn admit(&self, call: &CallInfo<'_>) -> Result<(), String> {
        self.0.iter().try_for_each(|layer| layer.admit(call))
    }
}
