//! [`ServedMcp`]: a composed bundle being served — its connections (stdio, or any
//! reader/writer pair), its live reroster, its close and graceful shutdown — and the error a
//! connection fails with.

use super::generation::CompositionError;
use super::served::Shared;
use super::{session, stdio_bypass, transport};
use crate::bundle::Siblings;
use rmcp::ServiceExt;
use std::fmt;
use std::sync::Arc;
use tokio::io::{AsyncRead, AsyncWrite};

/// Installs a global `tracing` subscriber that writes warnings and errors to stderr, without
/// colour — what a stdio MCP server wants, since stdout carries the protocol. The library never
/// installs one itself: call this (or install your own) at the top of `main`. Answers false
/// when a global subscriber was already set, and leaves it.
///
/// ```
/// let first = surface_runtime::mcp::init_tracing();
/// assert!(!surface_runtime::mcp::init_tracing(), "the second call finds the first");
/// # let _ = first;
/// ```
pub fn init_tracing() -> bool {
    tracing_subscriber::fmt()
        .with_writer(std::io::stderr)
        .with_ansi(false)
        .with_max_level(tracing::Level::WARN)
        .try_init()
        .is_ok()
}

/// Stdin and stdout for the protocol (see `stdio.rs`).
fn take_stdio() -> Result<crate::stdio::Io, ServeError> {
    crate::stdio::take().map_err(|e| ServeError(format!("stdio could not be taken: {e}")))
}

/// Why serving a connection failed.
pub struct ServeError(pub(super) String);

impl fmt::Debug for ServeError {
    // `main` returning `Result` prints the Debug form: make it the sentence.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(self, f)
    }
}

impl fmt::Display for ServeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "surface-mcp: {}", self.0)
    }
}

impl std::error::Error for ServeError {}

/// A served bundle: open connections on it, reroster it, close it. Cheap to clone.
#[derive(Clone)]
pub struct ServedMcp {
    pub(super) shared: Arc<Shared>,
}

/// One live connection.
pub struct Connection {
    running: rmcp::service::RunningService<rmcp::RoleServer, session::Session>,
}

impl Connection {
    /// Waits until the peer goes away or the server closes.
    pub async fn waiting(self) -> Result<(), ServeError> {
        self.running
            .waiting()
            .await
            .map(drop)
            .map_err(|e| ServeError(e.to_string()))
    }

    /// Ends the connection.
    pub async fn cancel(self) -> Result<(), ServeError> {
        self.running
            .cancel()
            .await
            .map(drop)
            .map_err(|e| ServeError(e.to_string()))
    }
}

impl ServedMcp {
    /// Serves one connection over a reader/writer pair (e.g. the halves of `tokio::io::duplex`),
    /// answering once the peer has opened it (`initialize` or a 2026-07-28 request).
    pub async fn serve<R, W>(&self, reader: R, writer: W) -> Result<Connection, ServeError>
    where
        R: AsyncRead + Send + Unpin + 'static,
        W: AsyncWrite + Send + Unpin + 'static,
    {
        self.serve_under(reader, writer, self.shared.closed.child_token())
            .await
    }

    /// [`serve`](Self::serve), the connection ending when `ct` is cancelled.
    async fn serve_under<R, W>(
        &self,
        reader: R,
        writer: W,
        ct: tokio_util::sync::CancellationToken,
    ) -> Result<Connection, ServeError>
    where
        R: AsyncRead + Send + Unpin + 'static,
        W: AsyncWrite + Send + Unpin + 'static,
    {
        // The same transport as stdio: every hostile line answered, the in-flight bound kept,
        // the plain requests of a session answered off rmcp's loop (stdio_bypass.rs).
        let session = session::Session::open(&self.shared);
        let bypass = stdio_bypass::StdioBypass::new(session.handler().clone(), ct.clone());
        let opened = bypass.opened();
        let draining = session.handler().state.draining.clone();
        let running = session
            .serve_with_ct(
                transport::FastTransport::new(reader, writer, self.shared.settings.transport)
                    .with_bypass(Box::new(bypass))
                    .with_drain(draining, ct.clone()),
                ct,
            )
            .await
            .map_err(|e| ServeError(format!("the connection did not open: {e}")))?;
        let _ = opened.set(Arc::new(running.peer().clone()));
        Ok(Connection { running })
    }

    /// Serves stdio until the peer closes it. Stdout carries only JSON-RPC from here on: on
    /// unix, file descriptor 1 is pointed at stderr, so a stray print cannot corrupt the
    /// stream. Logs go through `tracing`; the library installs no subscriber (see
    /// [`init_tracing`] for the one the examples use).
    ///
    /// One stdio connection is served fastest on one thread: a second worker adds cross-thread
    /// wake-ups and allocator contention to every call and nothing a single pipe can use
    /// (BENCHMARKS.md measures both). So when called on a multi-thread runtime (a plain
    /// `#[tokio::main]`), the connection is served on a thread of its own running a
    /// current-thread runtime, and this future waits for it; dropping the future ends the
    /// connection. Tools then run on that thread: `tokio::spawn` inside a tool spawns there (and
    /// what it spawned ends with the connection), and `tokio::task::block_in_place` is not
    /// available to them. A server whose tools need the caller's runtime serves with
    /// [`serve_stdio_here`](Self::serve_stdio_here) instead. On a current-thread runtime
    /// the two are the same.
    pub async fn serve_stdio(&self) -> Result<(), ServeError> {
        let multi_thread = tokio::runtime::Handle::try_current()
            .is_ok_and(|h| h.runtime_flavor() == tokio::runtime::RuntimeFlavor::MultiThread);
        if !multi_thread {
            return self.serve_stdio_here().await;
        }
        let (reader, writer) = take_stdio()?;
        let served = self.clone();
        let stop = self.shared.closed.child_token();
        // The caller dropping this future stops the connection on its thread.
        let _stop_on_drop = stop.clone().drop_guard();
        let (done, finished) = tokio::sync::oneshot::channel();
        std::thread::Builder::new()
            .name("surface-stdio".into())
            .spawn(move || {
                let result = tokio::runtime::Builder::new_current_thread()
                    .enable_all()
                    .build()
                    .map_err(|e| ServeError(format!("the stdio runtime did not start: {e}")))
                    .and_then(|runtime| {
                        runtime.block_on(async {
                            served.serve_under(reader, writer, stop).await?.waiting().await
                        })
                    });
                let _ = done.send(result);
            })
            .map_err(|e| ServeError(format!("the stdio thread did not start: {e}")))?;
        finished
            .await
            .unwrap_or_else(|_| Err(ServeError("the stdio thread panicked".into())))
    }

    /// Serves stdio until the peer closes it, on the runtime this is awaited on, whatever its
    /// flavor (see [`serve_stdio`](Self::serve_stdio) for when that matters).
    pub async fn serve_stdio_here(&self) -> Result<(), ServeError> {
        let (reader, writer) = take_stdio()?;
        // Method-first parsing, batched writes and a bound on requests in flight: see transport.rs.
        self.serve(reader, writer).await?.waiting().await
    }

    /// Replaces the siblings whole (the core and root tools never move): re-composes, swaps
    /// one generation atomically, re-dials the client factory, re-opens surviving
    /// subscriptions and ends the rest, and notifies every session that both lists changed.
    /// A refused roster leaves the served bundle exactly as it was. Answers the new keys.
    pub async fn reroster(&self, siblings: Siblings) -> Result<Vec<String>, CompositionError> {
        self.shared.reroster(siblings).await
    }

    /// The sibling keys served now.
    pub fn sibling_keys(&self) -> Vec<String> {
        self.shared.current().sibling_keys()
    }

    /// Closes every connection and subscription.
    pub fn close(&self) {
        self.shared.closed.cancel();
    }

    /// Shuts down every connection served over stdio ([`serve_stdio`](Self::serve_stdio)) or
    /// [`serve`](Self::serve) gracefully, e.g. on SIGTERM or when a `CancellationToken` of
    /// yours fires: each stops reading its input, answers the requests it had read but not
    /// started with -32000 (the server is shutting down), answers every call in flight, ends
    /// its `subscriptions/listen` streams with their final result, flushes its output and
    /// ends — so `serve_stdio` returns. The wait for the calls in flight is bounded by
    /// [`McpServer::drain_timeout`](super::McpServer::drain_timeout) (10 s by default); past it, what still runs is cancelled.
    /// A connection opened after this is shut down as soon as it opens. Streamable HTTP
    /// shuts down with [`HttpServer::shutdown`](super::HttpServer::shutdown) / [`HttpService::shutdown`](super::HttpService::shutdown).
    ///
    /// ```no_run
    /// # async fn run(served: surface_runtime::mcp::ServedMcp) -> Result<(), surface_runtime::mcp::ServeError> {
    /// let stopping = served.clone();
    /// tokio::spawn(async move {
    ///     let _ = tokio::signal::ctrl_c().await; // or SIGTERM, or your token's `cancelled()`
    ///     stopping.shutdown();
    /// });
    /// served.serve_stdio().await // returns once the shutdown has answered what was in flight
    /// # }
    /// ```
    pub fn shutdown(&self) {
        self.shared.draining.cancel();
    }
}
