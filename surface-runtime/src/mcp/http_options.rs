//! [`HttpOptions`]: where and how the Streamable HTTP face serves — the address and path, who
//! may reach it (remote binds, `Host`/`Origin`, authentication), and the bounds on sessions,
//! bodies, connections and the drain.

use super::http_sessions::SessionSharing;
use rmcp::transport::StreamableHttpServerConfig;
use std::net::{IpAddr, SocketAddr};
use std::sync::Arc;
use std::time::Duration;
use tokio_util::sync::CancellationToken;

/// Where and how to serve Streamable HTTP.
#[derive(Clone, Debug)]
#[must_use = "hand the options to `ServedMcp::serve_http`"]
pub struct HttpOptions {
    pub(super) addr: SocketAddr,
    pub(super) path: String,
    pub(super) allow_remote: bool,
    pub(super) allowed_hosts: Vec<String>,
    pub(super) max_sessions: usize,
    pub(super) session_idle_timeout: Option<Duration>,
    pub(super) max_body: usize,
    pub(super) max_connections: usize,
    pub(super) header_read_timeout: Duration,
    pub(super) keep_alive_timeout: Duration,
    pub(super) drain_timeout: Duration,
    /// Where sessions and their SSE events live when several instances serve one surface (set
    /// by `store`, which the backend that offers it defines).
    pub(crate) sharing: Option<Arc<dyn SessionSharing>>,
    /// Where MCP tasks' states live when several instances serve one surface (set by `store`).
    pub(crate) task_sharing: Option<Arc<dyn super::task_sharing::TaskSharing>>,
    /// Who may call, when the endpoint is a protected resource.
    #[cfg(feature = "auth")]
    pub(super) auth: Option<crate::auth::Auth>,
}

impl HttpOptions {
    /// Serve at `addr` (a loopback address unless [`allow_remote`](Self::allow_remote)); port 0
    /// picks a free port, which [`HttpServer::local_addr`](super::HttpServer::local_addr) then reports.
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
    pub(super) fn authenticated(&self) -> bool {
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

    /// How long a graceful shutdown ([`HttpServer::shutdown`](super::HttpServer::shutdown), [`HttpService::shutdown`](super::HttpService::shutdown))
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

    pub(super) fn config(&self, cancel: CancellationToken) -> StreamableHttpServerConfig {
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
