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
//! (`http_direct.rs` says exactly when); rmcp still answers everything else.
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

use super::drain;
use super::http_direct::{Claim, Direct, Routed};
use super::http_sessions::{SessionSharing, Sessions};
use super::{ServeError, ServedMcp};
use crate::drain::{Drain, Flight};
use bytes::Bytes;
use http_body_util::combinators::BoxBody;
use http_body_util::{BodyExt, Full, Limited};
use hyper::body::Incoming;
use hyper::service::service_fn;
use hyper_util::rt::TokioIo;
use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
use rmcp::transport::streamable_http_server::session::{SessionId, SessionManager, SessionStore};
use rmcp::transport::{StreamableHttpServerConfig, StreamableHttpService};
use serde_json::{Value, json};
use std::convert::Infallible;
use std::net::{IpAddr, SocketAddr};
use std::sync::Arc;
use std::time::Duration;
use tokio::net::TcpListener;
use tokio::task::JoinHandle;
use tokio_util::sync::CancellationToken;

/// Where and how to serve Streamable HTTP.
#[derive(Clone, Debug)]
#[must_use = "hand the options to `ServedMcp::serve_http`"]
pub struct HttpOptions {
    addr: SocketAddr,
    path: String,
    allow_remote: bool,
    allowed_hosts: Vec<String>,
    max_sessions: usize,
    pub(super) session_idle_timeout: Option<Duration>,
    max_body: usize,
    max_connections: usize,
    header_read_timeout: Duration,
    keep_alive_timeout: Duration,
    drain_timeout: Duration,
    /// Where sessions and their SSE events live when several instances serve one surface (set
    /// by `store`, which the backend that offers it defines).
    pub(crate) sharing: Option<Arc<dyn SessionSharing>>,
    /// Where MCP tasks' states live when several instances serve one surface (set by `store`).
    pub(crate) task_sharing: Option<Arc<dyn super::task_sharing::TaskSharing>>,
    /// Who may call, when the endpoint is a protected resource.
    #[cfg(feature = "auth")]
    auth: Option<crate::auth::Auth>,
}

impl HttpOptions {
    /// Serve at `addr` (a loopback address unless [`allow_remote`](Self::allow_remote)); port 0
    /// picks a free port, which [`HttpServer::local_addr`] then reports.
    pub fn new(addr: impl Into<SocketAddr>) -> Self {
        HttpOptions {
            addr: addr.into(),
            path: "/mcp".to_owned(),
            allow_remote: false,
            allowed_hosts: Vec::new(),
            max_sessions: Self::DEFAULT_MAX_SESSIONS,
            session_idle_timeout: Some(Self::DEFAULT_SESSION_IDLE_TIMEOUT),
            max_body: Self::DEFAULT_MAX_BODY,
            max_connections: Self::DEFAULT_MAX_CONNECTIONS,
            header_read_timeout: Self::DEFAULT_HEADER_READ_TIMEOUT,
            keep_alive_timeout: Self::DEFAULT_KEEP_ALIVE_TIMEOUT,
            drain_timeout: Self::DEFAULT_DRAIN_TIMEOUT,
            sharing: None,
            task_sharing: None,
            #[cfg(feature = "auth")]
            auth: None,
        }
    }

    /// Makes the endpoint an OAuth 2.1 protected resource (feature `auth`): every request
    /// needs a bearer token `auth` accepts, the server publishes its Protected Resource
    /// Metadata at `/.well-known/oauth-protected-resource` (and the path-inserted form), and a
    /// legacy session is bound to the subject that opened it (another subject presenting its
    /// `Mcp-Session-Id` is answered `404`, as for an unknown session). See [`crate::auth`].
    ///
    /// With authentication the server may bind a non-loopback address without
    /// [`allow_remote`](Self::allow_remote), and accepts the resource URI's host in `Host`.
    ///
    /// ```
    /// use surface_runtime::auth::Auth;
    /// use surface_runtime::mcp::HttpOptions;
    /// let options = HttpOptions::new(([0, 0, 0, 0], 8443))
    ///     .auth(Auth::jwt("https://auth.example", "https://ops.example/mcp"));
    /// assert!(options.get_auth().is_some());
    /// ```
    #[cfg(feature = "auth")]
    pub fn auth(mut self, auth: crate::auth::Auth) -> Self {
        self.auth = Some(auth);
        self
    }

    /// See [`auth`](Self::auth).
    #[cfg(feature = "auth")]
    pub fn get_auth(&self) -> Option<&crate::auth::Auth> {
        self.auth.as_ref()
    }

    /// Whether requests are authenticated.
    fn authenticated(&self) -> bool {
        #[cfg(feature = "auth")]
        return self.auth.is_some();
        #[cfg(not(feature = "auth"))]
        false
    }

    /// Default of [`max_body`](Self::max_body): 4 MiB (rmcp's own default).
    pub const DEFAULT_MAX_BODY: usize = 4 * 1024 * 1024;

    /// The largest request body, in bytes (default [`DEFAULT_MAX_BODY`](Self::DEFAULT_MAX_BODY)):
    /// a larger one answers `413 Payload Too Large` and its session goes on — the HTTP face's
    /// counterpart of `McpServer::max_line` on stdio.
    ///
    /// ```
    /// let options = surface_runtime::mcp::HttpOptions::loopback(0).max_body(64 * 1024);
    /// assert_eq!(options.get_max_body(), 64 * 1024);
    /// ```
    pub fn max_body(mut self, bytes: usize) -> Self {
        self.max_body = bytes;
        self
    }

    /// See [`max_body`](Self::max_body).
    pub fn get_max_body(&self) -> usize {
        self.max_body
    }

    /// Default of [`max_connections`](Self::max_connections): 1,024 connections.
    pub const DEFAULT_MAX_CONNECTIONS: usize = 1024;
    /// Default of [`header_read_timeout`](Self::header_read_timeout): 10 seconds.
    pub const DEFAULT_HEADER_READ_TIMEOUT: Duration = Duration::from_secs(10);
    /// Default of [`keep_alive_timeout`](Self::keep_alive_timeout): 60 seconds.
    pub const DEFAULT_KEEP_ALIVE_TIMEOUT: Duration = Duration::from_secs(60);

    /// How many TCP connections are served at once (default
    /// [`DEFAULT_MAX_CONNECTIONS`](Self::DEFAULT_MAX_CONNECTIONS), at least 1). When that
    /// many are open the server stops accepting: one more connection waits in the kernel's
    /// listen backlog (its client sees a slow connect, or a refusal once the backlog is full)
    /// and is served as soon as an open one closes. Each open connection costs memory (tens of
    /// kB) and a file descriptor: keep it below the process's descriptor limit. An open
    /// `GET` or `subscriptions/listen` stream holds its connection for as long as it lasts.
    ///
    /// ```
    /// let options = surface_runtime::mcp::HttpOptions::loopback(0).max_connections(256);
    /// assert_eq!(options.get_max_connections(), 256);
    /// ```
    pub fn max_connections(mut self, n: usize) -> Self {
        self.max_connections = n.max(1);
        self
    }

    /// See [`max_connections`](Self::max_connections).
    pub fn get_max_connections(&self) -> usize {
        self.max_connections
    }

    /// How long a client may take to send a request's head (request line and headers) once
    /// its first byte has arrived (default
    /// [`DEFAULT_HEADER_READ_TIMEOUT`](Self::DEFAULT_HEADER_READ_TIMEOUT)). Past it the
    /// connection is closed without an answer: a client sending its headers a byte at a time
    /// cannot hold a connection.
    ///
    /// ```
    /// # use std::time::Duration;
    /// let options = surface_runtime::mcp::HttpOptions::loopback(0).header_read_timeout(Duration::from_secs(5));
    /// assert_eq!(options.get_header_read_timeout(), Duration::from_secs(5));
    /// ```
    pub fn header_read_timeout(mut self, timeout: Duration) -> Self {
        self.header_read_timeout = timeout;
        self
    }

    /// See [`header_read_timeout`](Self::header_read_timeout).
    pub fn get_header_read_timeout(&self) -> Duration {
        self.header_read_timeout
    }

    /// How long a connection may stay open with no request on it (default
    /// [`DEFAULT_KEEP_ALIVE_TIMEOUT`](Self::DEFAULT_KEEP_ALIVE_TIMEOUT)): from its opening, or
    /// from the end of its last response, until the first byte of the next request. Past it
    /// the connection is closed (a client reconnects for its next request). A response being
    /// sent, however long (an SSE stream), is never idle.
    ///
    /// ```
    /// # use std::time::Duration;
    /// let options = surface_runtime::mcp::HttpOptions::loopback(0).keep_alive_timeout(Duration::from_secs(15));
    /// assert_eq!(options.get_keep_alive_timeout(), Duration::from_secs(15));
    /// ```
    pub fn keep_alive_timeout(mut self, timeout: Duration) -> Self {
        self.keep_alive_timeout = timeout;
        self
    }

    /// See [`keep_alive_timeout`](Self::keep_alive_timeout).
    pub fn get_keep_alive_timeout(&self) -> Duration {
        self.keep_alive_timeout
    }

    /// Default of [`drain_timeout`](Self::drain_timeout): 10 seconds, as on every face
    /// ([`crate::drain::DEFAULT_DRAIN_TIMEOUT`]).
    pub const DEFAULT_DRAIN_TIMEOUT: Duration = crate::drain::DEFAULT_DRAIN_TIMEOUT;

    /// How long a graceful shutdown ([`HttpServer::shutdown`], [`HttpService::shutdown`])
    /// waits for the calls in flight to be answered (default
    /// [`DEFAULT_DRAIN_TIMEOUT`](Self::DEFAULT_DRAIN_TIMEOUT)). Meanwhile new requests answer
    /// `503`; after it, every session and stream ends whether or not its calls were answered.
    ///
    /// ```
    /// # use std::time::Duration;
    /// let options = surface_runtime::mcp::HttpOptions::loopback(0).drain_timeout(Duration::from_secs(2));
    /// assert_eq!(options.get_drain_timeout(), Duration::from_secs(2));
    /// ```
    pub fn drain_timeout(mut self, timeout: Duration) -> Self {
        self.drain_timeout = timeout;
        self
    }

    /// See [`drain_timeout`](Self::drain_timeout).
    pub fn get_drain_timeout(&self) -> Duration {
        self.drain_timeout
    }

    /// Default of [`max_sessions`](Self::max_sessions): 10,000 sessions.
    pub const DEFAULT_MAX_SESSIONS: usize = 10_000;
    /// Default of [`session_idle_timeout`](Self::session_idle_timeout): 5 minutes.
    pub const DEFAULT_SESSION_IDLE_TIMEOUT: Duration = Duration::from_secs(300);

    /// How many stateful (legacy-era) sessions may be open at once (default
    /// [`DEFAULT_MAX_SESSIONS`](Self::DEFAULT_MAX_SESSIONS)). One more `initialize` answers
    /// `503 Service Unavailable` with a JSON-RPC error saying so; 2026-07-28 requests are
    /// stateless and never count.
    ///
    /// ```
    /// let options = surface_runtime::mcp::HttpOptions::loopback(0).max_sessions(100);
    /// assert_eq!(options.get_max_sessions(), 100);
    /// ```
    pub fn max_sessions(mut self, n: usize) -> Self {
        self.max_sessions = n;
        self
    }

    /// How long a session may go without a message before it is ended (default
    /// [`DEFAULT_SESSION_IDLE_TIMEOUT`](Self::DEFAULT_SESSION_IDLE_TIMEOUT)); its next request
    /// answers `404`, which tells a client to initialize afresh. `None` keeps idle sessions
    /// until they are deleted or the server closes.
    pub fn session_idle_timeout(mut self, timeout: Option<Duration>) -> Self {
        self.session_idle_timeout = timeout;
        self
    }

    /// See [`max_sessions`](Self::max_sessions).
    pub fn get_max_sessions(&self) -> usize {
        self.max_sessions
    }

    /// `127.0.0.1:port`.
    pub fn loopback(port: u16) -> Self {
        HttpOptions::new((IpAddr::from([127, 0, 0, 1]), port))
    }

    /// The endpoint's path (default `/mcp`); every other path answers 404.
    pub fn path(mut self, path: impl Into<String>) -> Self {
        let path = path.into();
        self.path = if path.starts_with('/') {
            path
        } else {
            format!("/{path}")
        };
        self
    }

    /// Permits binding a non-loopback address. Requests must then name, in `Host`, a loopback
    /// name, the bound address, or a host added with [`allowed_host`](Self::allowed_host).
    /// Without [`auth`](Self::auth) anyone who reaches the address may call: put the server
    /// behind something that authenticates, or give it `auth`.
    pub fn allow_remote(mut self, allow: bool) -> Self {
        self.allow_remote = allow;
        self
    }

    /// Accepts `host` (a name, or `name:port`) in the `Host` header besides the loopback names.
    pub fn allowed_host(mut self, host: impl Into<String>) -> Self {
        self.allowed_hosts.push(host.into());
        self
    }

    /// The address to bind.
    pub fn addr(&self) -> SocketAddr {
        self.addr
    }

    fn config(&self, cancel: CancellationToken) -> StreamableHttpServerConfig {
        let mut hosts: Vec<String> = ["localhost", "127.0.0.1", "::1"].map(String::from).to_vec();
        let config = StreamableHttpServerConfig::default()
            .with_cancellation_token(cancel)
            // Legacy clients get stateful sessions; 2026-07-28 requests are always stateless.
            .with_legacy_session_mode(true)
            .with_max_request_body_bytes(self.max_body);
        if self.allow_remote || self.authenticated() {
            if !self.addr.ip().is_unspecified() {
                hosts.push(self.addr.ip().to_string());
            }
            hosts.extend(self.allowed_hosts.iter().cloned());
            // The host clients were told to reach (the resource URI's).
            #[cfg(feature = "auth")]
            if let Some(authority) = self
                .auth
                .as_ref()
                .and_then(|auth| auth.resource().parse::<hyper::Uri>().ok())
                .and_then(|uri| uri.authority().cloned())
                && !hosts.iter().any(|h| h == authority.as_str())
            {
                hosts.push(authority.as_str().to_owned());
            }
            // Browsers on other hosts are the point of a remote bind; keep Origin open.
            config.with_allowed_hosts(hosts)
        } else {
            hosts.extend(self.allowed_hosts.iter().cloned());
            config.with_allowed_hosts(hosts).with_allowed_origins([
                "http://localhost:*",
                "http://127.0.0.1:*",
                "http://[::1]:*",
                "https://localhost:*",
                "https://127.0.0.1:*",
                "https://[::1]:*",
            ])
        }
    }
}

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
    /// Answers one request.
    fn respond<B>(&self, request: hyper::Request<B>) -> impl Future<Output = Response> + Send + use<B>
    where
        B: hyper::body::Body<Data = Bytes> + Send + 'static,
        B::Error: std::error::Error + Send + Sync + 'static,
    {
        let endpoint = self.inner.clone();
        async move { endpoint.gate.handle(&endpoint.service, request).await }
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
        let answer = self.respond(request);
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
        let (local, sessions, direct) = match &options.sharing {
            Some(sharing) => {
                let (local, session_store) = sharing.share(manager);
                config.session_store = Some(session_store);
                // Legacy sessions here are shared too (their events are persisted for resumption
                // elsewhere): only stateless requests take the direct path.
                let sessions = Sessions::shared(local.clone(), sharing.clone());
                (local, sessions, None)
            }
            None => {
                let local = Arc::new(manager);
                (local.clone(), Sessions::local(local.clone()), Some(local))
            }
        };
        let direct = Direct::new(shared.clone(), direct, options, &config, stop.clone());
        let gate = Gate::new(options, path, local, &config, direct)?;
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

/// rmcp's service over one served bundle, its legacy sessions shared across instances when the
/// options say so.
type Service = StreamableHttpService<super::session::Handler, Sessions>;

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
            let handler = service_fn(move |request: hyper::Request<Incoming>| {
                let active = watch.begin();
                let answer = service.respond(request);
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

pub(super) type Response = hyper::Response<BoxBody<Bytes, Infallible>>;

/// What this module adds around rmcp's service: the path, the session cap, and answers rmcp
/// gets wrong for a hostile or broken client (a `DELETE` of no session, a body that is not
/// JSON-RPC). rmcp still answers first wherever it checks `Host` and `Origin`.
struct Gate {
    /// The endpoint's path when it owns its listener; a mounted service serves any path.
    path: Option<Arc<str>>,
    manager: Arc<LocalSessionManager>,
    max_sessions: usize,
    max_body: usize,
    /// Held while an `initialize` creates a session, so the count and the creation agree.
    creating: tokio::sync::Mutex<()>,
    /// Where sessions of other instances are found, when rmcp restores them (a Redis store).
    restorable: Option<Arc<dyn SessionStore>>,
    /// The requests answered without rmcp's per-request machinery (`http_direct.rs`).
    direct: Direct,
    /// The bearer-token check and the sessions' subjects, when the endpoint is protected.
    #[cfg(feature = "auth")]
    guard: Option<super::http_auth::Guard>,
    /// The calls owed an answer, for a graceful shutdown.
    drain: Arc<Drain>,
}

impl Gate {
    fn new(
        options: &HttpOptions,
        path: Option<&str>,
        manager: Arc<LocalSessionManager>,
        config: &StreamableHttpServerConfig,
        direct: Direct,
    ) -> Result<Gate, ServeError> {
        #[cfg(feature = "auth")]
        let guard = match &options.auth {
            Some(auth) => Some(
                super::http_auth::Guard::new(
                    auth.clone(),
                    &options.path,
                    options.max_sessions,
                    options.sharing.clone(),
                )
                .map_err(ServeError)?,
            ),
            None => None,
        };
        Ok(Gate {
            path: path.map(Arc::from),
            manager,
            max_sessions: options.max_sessions,
            max_body: config.max_request_body_bytes,
            creating: tokio::sync::Mutex::new(()),
            restorable: config.session_store.clone(),
            direct,
            #[cfg(feature = "auth")]
            guard,
            drain: Arc::default(),
        })
    }

    /// The answer to a request that would open one session too many, if it would.
    async fn full(&self, id: Value) -> Option<Response> {
        let open = self.manager.sessions.read().await.len();
        (open >= self.max_sessions).then(|| {
            jsonrpc_error(
                hyper::StatusCode::SERVICE_UNAVAILABLE,
                id,
                -32000,
                format!(
                    "surface-mcp: this server already holds {open} sessions, the most it may — end a session you no longer use (DELETE it), or retry later"
                ),
            )
        })
    }

    /// Whether `id` names a session another instance opened, which rmcp is about to restore
    /// here from the store.
    async fn restoring(&self, id: &SessionId) -> bool {
        self.restorable.is_some() && !self.manager.has_session(id).await.unwrap_or(true)
    }

    async fn handle<B>(
        &self,
        service: &Service,
        #[allow(unused_mut)] // mutated with the `auth` feature
        mut request: hyper::Request<B>,
    ) -> Response
    where
        B: hyper::body::Body<Data = Bytes> + Send + 'static,
        B::Error: std::error::Error + Send + Sync + 'static,
    {
        #[cfg(feature = "auth")]
        if let Some(metadata) = self.guard.as_ref().and_then(|guard| guard.metadata(&request)) {
            return metadata;
        }
        if let Some(path) = &self.path
            && request.uri().path() != &**path
        {
            return not_found("Not Found");
        }
        if self.drain.draining() {
            return jsonrpc_error(
                hyper::StatusCode::SERVICE_UNAVAILABLE,
                Value::Null,
                -32000,
                format!("surface-mcp: {}", crate::drain::REFUSAL),
            );
        }
        // Authentication before anything else runs (OAuth 2.1 §5.2).
        #[cfg(feature = "auth")]
        let principal = match &self.guard {
            Some(guard) => match guard.admit(&mut request).await {
                Ok(principal) => Some(principal),
                Err(refused) => return refused,
            },
            None => None,
        };
        let session: Option<SessionId> = request
            .headers()
            .get("mcp-session-id")
            .and_then(|v| v.to_str().ok())
            .map(|s| s.to_owned().into());
        #[cfg(feature = "auth")]
        if let Some(principal) = principal {
            // A session id is no credential: another subject's request names no session.
            if let (Some(guard), Some(id)) = (&self.guard, &session)
                && !guard.may_use(id, &principal).await
            {
                return not_found("Not Found: Session not found");
            }
            request.extensions_mut().insert(principal);
        }
        if let Some(id) = &session
            && self.deleted_elsewhere(id).await
        {
            self.forget(id).await;
            return not_found("Not Found: Session not found");
        }
        if let Some(id) = &session
            && *request.method() != hyper::Method::DELETE
            && self.restoring(id).await
        {
            // A restored session counts against the cap like one opened here.
            let _creating = self.creating.lock().await;
            if let Some(full) = self.full(Value::Null).await {
                return full;
            }
            return match *request.method() {
                hyper::Method::POST => self.post(service, request, session).await,
                _ => service.handle(request).await,
            };
        }
        match *request.method() {
            hyper::Method::DELETE => self.delete(service, request, session).await,
            hyper::Method::POST => self.post(service, request, session).await,
            _ => service.handle(request).await,
        }
    }

    /// Whether `id` is a session held here that the shared store no longer has: another
    /// instance deleted it (or it expired there). The store is the record of which sessions
    /// live, so this costs one store round trip per request on a session, in a shared store
    /// only (the read also pushes the stored expiry back). A store that cannot answer leaves
    /// the session be: an outage does not end every session.
    async fn deleted_elsewhere(&self, id: &SessionId) -> bool {
        let Some(store) = &self.restorable else {
            return false;
        };
        self.manager.has_session(id).await.unwrap_or(false) && matches!(store.load(id).await, Ok(None))
    }

    /// Ends what this instance holds of the session `id`.
    async fn forget(&self, id: &SessionId) {
        let _ = self.manager.close_session(id).await;
        self.direct.closed(id);
        #[cfg(feature = "auth")]
        if let Some(guard) = &self.guard {
            guard.closed(id);
        }
    }

    /// Whether the store knows the session (another instance opened it).
    async fn stored(&self, id: &SessionId) -> bool {
        match &self.restorable {
            Some(store) => matches!(store.load(id).await, Ok(Some(_))),
            None => false,
        }
    }

    async fn delete<B>(
        &self,
        service: &Service,
        request: hyper::Request<B>,
        session: Option<SessionId>,
    ) -> Response
    where
        B: hyper::body::Body + Send + 'static,
        B::Error: std::fmt::Display,
    {
        let existed = match &session {
            Some(id) => self.manager.has_session(id).await.unwrap_or(false) || self.stored(id).await,
            None => true,
        };
        let mut response = service.handle(request).await;
        if response.status() == hyper::StatusCode::ACCEPTED {
            // rmcp closes a session that is not there as if it were, with 202: answer 404, as
            // a POST to it does.
            if !existed {
                return not_found("Not Found: Session not found");
            }
            if let Some(id) = &session {
                self.direct.closed(id);
                #[cfg(feature = "auth")]
                if let Some(guard) = &self.guard {
                    guard.closed(id);
                }
            }
            // The SDKs' clients expect 200/204 (the Python client logs "Session termination
            // failed: 202").
            *response.status_mut() = hyper::StatusCode::OK;
        }
        response
    }

    async fn post<B>(
        &self,
        service: &Service,
        request: hyper::Request<B>,
        session: Option<SessionId>,
    ) -> Response
    where
        B: hyper::body::Body<Data = Bytes> + Send + 'static,
        B::Error: std::error::Error + Send + Sync + 'static,
    {
        // A call is owed its answer until the response body is written whole; a listen is a
        // stream, which a shutdown ends rather than waits for.
        let mut flight = Some(self.drain.flight());
        let response = self.answer(service, request, session, &mut flight).await;
        match flight {
            Some(flight) => drain::hold(response, flight),
            None => response,
        }
    }

    async fn answer<B>(
        &self,
        service: &Service,
        request: hyper::Request<B>,
        session: Option<SessionId>,
        flight: &mut Option<Flight>,
    ) -> Response
    where
        B: hyper::body::Body<Data = Bytes> + Send + 'static,
        B::Error: std::error::Error + Send + Sync + 'static,
    {
        let (mut parts, body) = request.into_parts();
        // Only a body that says it is JSON is judged as JSON-RPC; any other Content-Type keeps
        // rmcp's 415.
        let says_json = parts
            .headers
            .get(hyper::header::CONTENT_TYPE)
            .and_then(|v| v.to_str().ok())
            .is_some_and(|v| {
                let essence = v.split_once(';').map_or(v, |(essence, _)| essence);
                essence.trim().eq_ignore_ascii_case("application/json")
            });
        let body = match Limited::new(body, self.max_body).collect().await {
            Ok(collected) => collected.to_bytes(),
            Err(e) if e.is::<http_body_util::LengthLimitError>() => {
                return plain(
                    hyper::StatusCode::PAYLOAD_TOO_LARGE,
                    format!("Payload Too Large: request body exceeds {} bytes", self.max_body),
                );
            }
            Err(e) => {
                return plain(
                    hyper::StatusCode::BAD_REQUEST,
                    format!("Bad Request: the request body could not be read: {e}"),
                );
            }
        };
        // One parse of the body: the hot path reads the message; a body rmcp will refuse is
        // judged again (slowly, rarely) to say why in JSON-RPC terms.
        let (mut parts, problem, initializes) = if says_json {
            match super::http_direct::parse(&body) {
                Ok(message) => {
                    // A call outside the caller's scopes: the step-up challenge (403).
                    #[cfg(feature = "auth")]
                    if let (Some(guard), Some(principal)) =
                        (&self.guard, parts.extensions.get::<Arc<crate::Principal>>())
                        && let Some(needed) = super::http_auth::Guard::missing_scope(
                            &self.direct.shared().current(),
                            &message,
                            principal,
                        )
                    {
                        return guard.forbidden(needed);
                    }
                    if matches!(&message, rmcp::model::ClientJsonRpcMessage::Request(r)
                        if matches!(r.request, rmcp::model::ClientRequest::SubscriptionsListenRequest(_)))
                    {
                        *flight = None;
                        // rmcp hands these parts on to the listen, with the `taskIds` it drops.
                        if let Some(ids) = super::listen_ids::ListenTaskIds::of(&body) {
                            parts.extensions.insert(ids);
                        }
                    }
                    let initializes = session.is_none()
                        && matches!(&message, rmcp::model::ClientJsonRpcMessage::Request(r)
                            if matches!(r.request, rmcp::model::ClientRequest::InitializeRequest(_)));
                    if initializes {
                        (parts, Problem::Unjudged, true)
                    } else {
                        match self.direct.route(parts, message, session.as_deref()).await {
                            Routed::Answered(response) => return response,
                            Routed::Rmcp(parts) => (parts, Problem::Unjudged, false),
                        }
                    }
                }
                Err(_) => (parts, Problem::of(&body), false),
            }
        } else {
            (parts, Problem::Unjudged, false)
        };
        let claim = Claim::default();
        if initializes {
            parts.extensions.insert(claim.clone());
        }
        #[cfg(feature = "auth")]
        let principal = parts.extensions.get::<Arc<crate::Principal>>().cloned();
        let request = hyper::Request::from_parts(parts, Full::new(body));
        let response = if initializes {
            let _creating = self.creating.lock().await;
            if let Some(full) = self.full(problem.id()).await {
                return full;
            }
            let response = service.handle(request).await;
            if response.status() == hyper::StatusCode::OK
                && let Some(id) = response
                    .headers()
                    .get("mcp-session-id")
                    .and_then(|v| v.to_str().ok())
            {
                self.direct.opened(id, &claim);
                #[cfg(feature = "auth")]
                if let (Some(guard), Some(principal)) = (&self.guard, &principal) {
                    let live = self.manager.sessions.read().await;
                    if let Err(e) = guard.opened(id, principal, |id| live.contains_key(id)).await {
                        // A session whose owner no instance could learn would be refused
                        // everywhere: end it now and say why.
                        drop(live);
                        self.forget(&SessionId::from(id)).await;
                        return jsonrpc_error(
                            hyper::StatusCode::SERVICE_UNAVAILABLE,
                            problem.id(),
                            -32603,
                            format!("surface-mcp: the session could not be recorded: {e}"),
                        );
                    }
                }
            }
            response
        } else {
            service.handle(request).await
        };
        // rmcp answers a body it cannot decode with 415 (after its Host, Origin, Accept and
        // Content-Type checks, which keep their own answers): a JSON-RPC client expects 400
        // and an error object.
        match problem {
            Problem::NotJson(e) if response.status() == hyper::StatusCode::UNSUPPORTED_MEDIA_TYPE => {
                jsonrpc_error(
                    hyper::StatusCode::BAD_REQUEST,
                    Value::Null,
                    -32700,
                    format!("Parse error: the body is not JSON ({e})"),
                )
            }
            Problem::NotJsonRpc { id, why }
                if response.status() == hyper::StatusCode::UNSUPPORTED_MEDIA_TYPE =>
            {
                jsonrpc_error(
                    hyper::StatusCode::BAD_REQUEST,
                    id,
                    -32600,
                    format!("Invalid Request: the body is JSON but not a JSON-RPC message ({why})"),
                )
            }
            _ => response,
        }
    }
}

/// What is wrong with a `POST` body, as JSON-RPC sees it.
enum Problem {
    /// Not JSON by its own account: rmcp answers it.
    Unjudged,
    NotJson(serde_json::Error),
    NotJsonRpc {
        id: Value,
        why: serde_json::Error,
    },
}

impl Problem {
    fn of(body: &[u8]) -> Problem {
        let value: Value = match serde_json::from_slice(body) {
            Ok(v) => v,
            Err(e) => return Problem::NotJson(e),
        };
        let id = value
            .get("id")
            .filter(|id| id.is_string() || id.is_number())
            .cloned()
            .unwrap_or(Value::Null);
        match serde_json::from_value::<rmcp::model::ClientJsonRpcMessage>(value) {
            // Valid once the bytes are read as a tree (numbers as f64, say): rmcp's to judge.
            Ok(_) => Problem::Unjudged,
            Err(why) => Problem::NotJsonRpc { id, why },
        }
    }

    fn id(&self) -> Value {
        match self {
            Problem::NotJsonRpc { id, .. } => id.clone(),
            _ => Value::Null,
        }
    }
}

fn jsonrpc_error(status: hyper::StatusCode, id: Value, code: i64, message: String) -> Response {
    let body = json!({"jsonrpc": "2.0", "id": id, "error": {"code": code, "message": message}});
    jsonrpc_body(status, Bytes::from(body.to_string()))
}

/// An `application/json` answer.
pub(super) fn jsonrpc_body(status: hyper::StatusCode, body: Bytes) -> Response {
    hyper::Response::builder()
        .status(status)
        .header(hyper::header::CONTENT_TYPE, "application/json")
        .body(Full::new(body).boxed())
        .expect("a JSON response is valid")
}

fn plain(status: hyper::StatusCode, text: String) -> Response {
    hyper::Response::builder()
        .status(status)
        .body(Full::new(Bytes::from(text)).boxed())
        .expect("a plain response is valid")
}

fn not_found(text: &'static str) -> Response {
    plain(hyper::StatusCode::NOT_FOUND, text.to_owned())
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
