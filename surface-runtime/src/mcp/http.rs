//! The Streamable HTTP transport (feature `http`): one endpoint, both protocol eras.
//!
//! rmcp's `StreamableHttpService` answers the protocol; this module binds it to a socket with
//! hyper's HTTP/1 server and hands it a fresh [`Handler`](super::session::Handler) of the one
//! served bundle for every HTTP session it opens:
//!
//! - legacy clients (`initialize`, 2025-11-25 and earlier) get a stateful session named by the
//!   `Mcp-Session-Id` header, with their own `initialize` (and so their own `instructions`
//!   read), their own `resources/subscribe` watches, and the standalone `GET` stream that
//!   carries `updated` and `list_changed` notifications;
//! - 2026-07-28 clients are served statelessly: every request carries its own `_meta`, and
//!   `subscriptions/listen` is one long `POST` whose response streams the notifications.
//!
//! A plain request (`tools/call`, `resources/read`, `prompts/get`, the lists) that can make the
//! server write nothing but its answer — no progress token, no 2026-07-28 log level, in a
//! legacy session whose client cannot be asked anything — is answered by the same handler
//! without rmcp's per-request service loop and channels, as `application/json`
//! (`http_bypass.rs` says exactly when); rmcp still answers everything else.
//!
//! A reroster reaches every live session of every transport, since they all read the same
//! shared state. [`ServedMcp::close`] ends every HTTP session and stops accepting.
//!
//! By default the server binds loopback addresses only and accepts only loopback `Host` and
//! `Origin` headers (DNS-rebinding protection); binding anything else needs
//! [`HttpOptions::allow_remote`], or authentication (`HttpOptions::auth`, feature `auth`:
//! every request then needs a bearer token, checked before anything else, and each legacy
//! session belongs to the subject that opened it — `http_auth.rs`).
//!
//! Sessions are bounded: at most [`HttpOptions::max_sessions`] at once (one more `initialize`
//! answers `503` with a JSON-RPC error), each ended after
//! [`HttpOptions::session_idle_timeout`] without a message. A `DELETE` of a session that does
//! not exist (or no longer does) answers `404`, as a `POST` to it does; a body that is not JSON
//! answers `400` with a `-32700` parse error, and JSON that is not a JSON-RPC message `400`
//! with `-32600`.
//!
//! Connections are bounded too, at the listener: at most [`HttpOptions::max_connections`]
//! open (the next waits in the kernel's backlog), each closed when a request's head takes
//! longer than [`HttpOptions::header_read_timeout`] or when it sits without a request for
//! [`HttpOptions::keep_alive_timeout`] (`http_conn.rs`).

use super::http_bypass::HttpBypass;
use super::http_call_streams::CallStreams;
use super::http_gate::{Gate, Service};
use super::http_options::HttpOptions;
use super::http_response::Response;
use super::http_sessions::Sessions;
use super::serve::{ServeError, ServedMcp};
use bytes::Bytes;
use http_body_util::combinators::BoxBody;
use hyper::body::Incoming;
use hyper::service::service_fn;
use hyper_util::rt::TokioIo;
use rmcp::transport::StreamableHttpService;
use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;

use std::convert::Infallible;
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;
use tokio::net::TcpListener;
use tokio::task::JoinHandle;
use tokio_util::sync::CancellationToken;

/// A bound, running Streamable HTTP server.
pub struct HttpServer {
    local_addr: SocketAddr,
    path: String,
    service: HttpService,
    accept: JoinHandle<()>,
}

impl HttpServer {
    /// The address actually bound (the real port when the options asked for port 0).
    pub fn local_addr(&self) -> SocketAddr {
        self.local_addr
    }

    /// `http://<addr><path>`, what clients connect to.
    pub fn url(&self) -> String {
        format!("http://{}{}", self.local_addr, self.path)
    }

    /// Waits until the server stops ([`shutdown`](Self::shutdown) or [`ServedMcp::close`]).
    pub async fn waiting(self) -> Result<(), ServeError> {
        self.accept
            .await
            .map_err(|e| ServeError(format!("the HTTP server stopped abnormally: {e}")))
    }

    /// Shuts down gracefully: new requests answer `503` while the calls in flight are answered
    /// (at most [`HttpOptions::drain_timeout`]), then it stops accepting and ends every HTTP
    /// session and stream of this server (other transports go on). Answers whether every call
    /// in flight was answered in time.
    pub async fn shutdown(self) -> Result<bool, ServeError> {
        let answered = self.service.shutdown().await;
        self.waiting().await.map(|()| answered)
    }
}

/// The MCP endpoint as a `tower::Service` over `http::Request`s, to mount in a web service of
/// your own — `axum::Router::new().nest_service("/mcp", served.http_service())` — behind your
/// own layers (tracing, CORS, compression, timeouts) and listener (TLS, HTTP/2). It serves
/// whatever path it is handed; sessions, their bounds, the `Host` and `Origin` checks and the
/// direct path are exactly [`ServedMcp::serve_http`]'s, which is a listener around this.
/// Cheap to clone: every clone is the same endpoint.
///
/// Shut it down with [`shutdown`](Self::shutdown) (e.g. in axum's
/// `with_graceful_shutdown`, before the server waits for its connections): the calls in flight
/// are answered, then the sessions and their streams end, so no connection is held open.
#[derive(Clone)]
pub struct HttpService {
    inner: Arc<Endpoint>,
}

struct Endpoint {
    gate: Gate,
    service: Service,
    stop: CancellationToken,
    drain_timeout: Duration,
}

impl HttpService {
    /// Answers one request, which came on a connection whose bearer header was `last_token`.
    fn respond<B>(
        &self,
        request: hyper::Request<B>,
        last_token: super::http_gate::LastToken,
    ) -> impl Future<Output = Response> + Send + use<B>
    where
        B: hyper::body::Body<Data = Bytes> + Send + 'static,
        B::Error: std::error::Error + Send + Sync + 'static,
    {
        let endpoint = self.inner.clone();
        async move { endpoint.gate.handle(&endpoint.service, request, last_token).await }
    }

    /// Where a mounted endpoint's Protected Resource Metadata is asked for (feature `auth`,
    /// with [`HttpOptions::auth`]; none without authentication): the well-known path with
    /// the resource URI's path inserted (RFC 9728 §3.1), e.g.
    /// `/.well-known/oauth-protected-resource/api/mcp` for the resource
    /// `https://app.example/api/mcp`. A router that nests the endpoint (which then sees only
    /// the paths below its mount point) routes this path to it as well; the `401`
    /// challenges' `resource_metadata` names the same URL. Make the resource URI the
    /// endpoint's public URL, mount point included.
    ///
    /// ```no_run
    /// # async fn run(served: surface_runtime::mcp::ServedMcp, options: surface_runtime::mcp::HttpOptions) {
    /// let mcp = served.http_service_with(&options).unwrap();
    /// // axum::Router::new().nest_service("/api/mcp", mcp.clone())
    /// //     .route_service(&mcp.metadata_path().unwrap(), mcp.clone())
    /// let _ = mcp.metadata_path();
    /// # }
    /// ```
    #[cfg(feature = "auth")]
    pub fn metadata_path(&self) -> Option<String> {
        self.inner.gate.guard.as_ref().map(|guard| guard.metadata_path())
    }

    /// Shuts the endpoint down gracefully: new requests answer `503` while the calls in flight
    /// are answered (at most [`HttpOptions::drain_timeout`]), then every session and stream it
    /// serves ends. Answers whether every call in flight was answered in time.
    pub async fn shutdown(&self) -> bool {
        let answered = self.inner.gate.drain.drain(self.inner.drain_timeout).await;
        self.inner.stop.cancel();
        answered
    }
}

impl<B> tower_service::Service<hyper::Request<B>> for HttpService
where
    B: hyper::body::Body<Data = Bytes> + Send + 'static,
    B::Error: std::error::Error + Send + Sync + 'static,
{
    type Response = Response;
    type Error = Infallible;
    type Future = std::pin::Pin<Box<dyn Future<Output = Result<Response, Infallible>> + Send>>;

    fn poll_ready(&mut self, _: &mut std::task::Context<'_>) -> std::task::Poll<Result<(), Infallible>> {
        std::task::Poll::Ready(Ok(()))
    }

    fn call(&mut self, request: hyper::Request<B>) -> Self::Future {
        // A mounted endpoint sees requests, not connections: nothing remembered between them.
        let answer = self.respond(request, Default::default());
        Box::pin(async move { Ok(answer.await) })
    }
}

impl ServedMcp {
    /// Binds `options`' address and serves the bundle there over Streamable HTTP in the
    /// background, every HTTP session with its own handler over the shared bundle. Refuses a
    /// non-loopback address unless [`HttpOptions::allow_remote`] was given.
    pub async fn serve_http(&self, options: HttpOptions) -> Result<HttpServer, ServeError> {
        refuse_remote(&options)?;
        let listener = TcpListener::bind(options.addr)
            .await
            .map_err(|e| ServeError(format!("could not bind {}: {e}", options.addr)))?;
        let local_addr = listener
            .local_addr()
            .map_err(|e| ServeError(format!("the bound socket has no address: {e}")))?;
        let service = self.endpoint(&options, Some(&options.path))?;
        let accept = tokio::spawn(accept_loop(listener, Limits::of(&options), service.clone()));
        Ok(HttpServer {
            local_addr,
            path: options.path,
            service,
            accept,
        })
    }

    /// The MCP endpoint as a `tower::Service` (see [`HttpService`]) with the default
    /// [`HttpOptions`]: loopback `Host` and `Origin` only, the default bounds. Call it inside a
    /// tokio runtime.
    ///
    /// ```no_run
    /// # async fn run(served: surface_runtime::mcp::ServedMcp) {
    /// let mcp = served.http_service();
    /// // axum::Router::new().route("/", get(home)).nest_service("/mcp", mcp.clone())
    /// # }
    /// ```
    pub fn http_service(&self) -> HttpService {
        self.http_service_with(&HttpOptions::loopback(0))
            .expect("the default options set up no authentication, the one thing that can fail")
    }

    /// [`http_service`](Self::http_service) with `options`' bounds, allowed hosts, store and
    /// authentication; their address and path are the listener's business, not the service's.
    /// Fails only when the authentication cannot be set up.
    pub fn http_service_with(&self, options: &HttpOptions) -> Result<HttpService, ServeError> {
        self.endpoint(options, None)
    }

    /// The one endpoint both [`serve_http`](Self::serve_http) and [`http_service`](Self::http_service)
    /// serve; `path` is checked when given.
    fn endpoint(&self, options: &HttpOptions, path: Option<&str>) -> Result<HttpService, ServeError> {
        let stop = self.shared.closed.child_token();
        let shared = self.shared.clone();
        if let Some(tasks) = &options.task_sharing {
            shared.tasks.share(tasks.clone());
        }
        let mut manager = LocalSessionManager::default();
        manager.session_config.keep_alive = options.session_idle_timeout;
        let mut config = options.config(stop.clone());
        let calls = Arc::new(CallStreams::default());
        let (local, sessions) = match &options.sharing {
            Some(sharing) => {
                let (local, session_store) = sharing.share(manager);
                config.session_store = Some(session_store);
                let sessions = Sessions::shared(local.clone(), sharing.clone(), calls.clone());
                (local, sessions)
            }
            None => {
                let local = Arc::new(manager);
                (local.clone(), Sessions::local(local, calls.clone()))
            }
        };
        // Shared or not, a session this instance opened takes the direct path: what a shared
        // session persists for other instances is its standalone stream's events, which the
        // direct path sends through the session's own peer as rmcp's loop does.
        let bypass = HttpBypass::new(
            shared.clone(),
            (local.clone(), calls),
            options,
            &config,
            stop.clone(),
        );
        let gate = Gate::new(options, path, local, &config, bypass)?;
        let service = StreamableHttpService::new(
            move || Ok(super::session::Handler::open(&shared)),
            Arc::new(sessions),
            config,
        );
        Ok(HttpService::new(gate, service, stop, options))
    }
}

impl HttpService {
    fn new(gate: Gate, service: Service, stop: CancellationToken, options: &HttpOptions) -> HttpService {
        // One endpoint for every connection and request: cloning rmcp's service copies its
        // configuration (the allowed hosts and origins, a dozen strings), so it is shared.
        HttpService {
            inner: Arc::new(Endpoint {
                gate,
                service,
                stop,
                drain_timeout: options.drain_timeout,
            }),
        }
    }
}

/// A non-loopback address without `allow_remote` is refused before anything is bound.
fn refuse_remote(options: &HttpOptions) -> Result<(), ServeError> {
    if options.addr.ip().is_loopback() || options.allow_remote || options.authenticated() {
        return Ok(());
    }
    Err(ServeError(format!(
        "refusing to serve HTTP on {}: it is not a loopback address and the server has no authentication — bind 127.0.0.1 or [::1], give it authentication (HttpOptions::auth), or opt in with allow_remote",
        options.addr
    )))
}

/// The listener's bounds on connections (see [`HttpOptions::max_connections`],
/// [`HttpOptions::header_read_timeout`] and [`HttpOptions::keep_alive_timeout`]).
#[derive(Clone, Copy)]
struct Limits {
    connections: usize,
    header: Duration,
    idle: Duration,
}

impl Limits {
    fn of(options: &HttpOptions) -> Limits {
        Limits {
            connections: options.max_connections,
            header: options.header_read_timeout,
            idle: options.keep_alive_timeout,
        }
    }
}

async fn accept_loop(listener: TcpListener, limits: Limits, service: HttpService) {
    let stop = service.inner.stop.clone();
    let open = Arc::new(tokio::sync::Semaphore::new(limits.connections));
    loop {
        // A slot before accepting: at the bound, new connections wait in the kernel's backlog.
        let slot = tokio::select! {
            _ = stop.cancelled() => return,
            slot = open.clone().acquire_owned() => match slot {
                Ok(slot) => slot,
                Err(_) => return,
            },
        };
        let (stream, _peer) = tokio::select! {
            _ = stop.cancelled() => return,
            accepted = listener.accept() => match accepted {
                Ok(a) => a,
                Err(e) => {
                    // Out of descriptors and the like: wait a little rather than spin.
                    tracing::warn!("surface-mcp: accepting an HTTP connection failed: {e}");
                    tokio::time::sleep(std::time::Duration::from_millis(50)).await;
                    continue;
                }
            },
        };
        // Small SSE frames must not wait on Nagle's algorithm (a 40 ms stall per event).
        let _ = stream.set_nodelay(true);
        let service = service.clone();
        let stop = stop.clone();
        tokio::spawn(async move {
            let _slot = slot;
            let watch = super::http_conn::Watch::new();
            let stream = super::http_conn::Timed::new(stream, watch.clone(), limits.header, limits.idle);
            // The bearer header this connection's requests carry, remembered between them.
            let last_token = service.inner.gate.connection();
            let handler = service_fn(move |request: hyper::Request<Incoming>| {
                let active = watch.begin();
                // Handed along, not put in the request's extensions (two allocations a request).
                let answer = service.respond(request, last_token.clone());
                async move {
                    let response = answer.await;
                    Ok::<_, Infallible>(response.map(|body| {
                        BoxBody::new(super::http_conn::Tracked {
                            body,
                            active: Some(active),
                        })
                    }))
                }
            });
            let connection =
                hyper::server::conn::http1::Builder::new().serve_connection(TokioIo::new(stream), handler);
            tokio::pin!(connection);
            tokio::select! {
                _ = connection.as_mut() => {}
                _ = stop.cancelled() => {
                    connection.as_mut().graceful_shutdown();
                    let _ = tokio::time::timeout(std::time::Duration::from_secs(1), connection).await;
                }
            }
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paths_are_rooted() {
        assert_eq!(HttpOptions::loopback(0).path("x").path, "/x");
        assert_eq!(HttpOptions::loopback(0).path, "/mcp");
    }

    #[test]
    fn non_loopback_binds_are_refused_unless_allowed() {
        assert!(refuse_remote(&HttpOptions::loopback(0)).is_ok());
        assert!(refuse_remote(&HttpOptions::new(([0u16; 8], 0))).is_err());
        let e = refuse_remote(&HttpOptions::new(([0, 0, 0, 0], 8080))).unwrap_err();
        assert!(e.to_string().contains("allow_remote"), "{e}");
        assert!(refuse_remote(&HttpOptions::new(([0, 0, 0, 0], 8080)).allow_remote(true)).is_ok());
        assert!(refuse_remote(&HttpOptions::new(([0u16, 0, 0, 0, 0, 0, 0, 1], 0))).is_ok());
    }

    #[test]
    fn remote_hosts_are_opt_in() {
        let local = HttpOptions::loopback(0).config(CancellationToken::new());
        assert_eq!(local.allowed_hosts, ["localhost", "127.0.0.1", "::1"]);
        assert!(!local.allowed_origins.is_empty());
        let remote = HttpOptions::new(([10, 0, 0, 5], 80))
            .allow_remote(true)
            .allowed_host("ops.example")
            .config(CancellationToken::new());
        assert_eq!(
            remote.allowed_hosts,
            ["localhost", "127.0.0.1", "::1", "10.0.0.5", "ops.example"]
        );
    }
}
