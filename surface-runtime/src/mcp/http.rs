//! The Streamable HTTP transport (feature `http`): one endpoint, both protocol eras.
//!
//! rmcp's `StreamableHttpService` answers the protocol; this module binds it to a socket with
//! hyper's HTTP/1 server and hands it a fresh [`Session`](super::handler::Session) of the one
//! served bundle for every HTTP session it opens:
//!
//! - legacy clients (`initialize`, 2025-11-25 and earlier) get a stateful session named by the
//!   `Mcp-Session-Id` header, with their own `initialize` (and so their own `instructions`
//!   read), their own `resources/subscribe` watches, and the standalone `GET` stream that
//!   carries `updated` and `list_changed` notifications;
//! - 2026-07-28 clients are served statelessly: every request carries its own `_meta`, and
//!   `subscriptions/listen` is one long `POST` whose response streams the notifications.
//!
//! A reroster reaches every live session of every transport, since they all read the same
//! shared state. [`ServedMcp::close`] ends every HTTP session and stops accepting.
//!
//! By default the server binds loopback addresses only and accepts only loopback `Host` and
//! `Origin` headers (DNS-rebinding protection); binding anything else needs
//! [`HttpOptions::allow_remote`].

use super::{ServeError, ServedMcp};
use hyper::body::Incoming;
use hyper::service::service_fn;
use hyper_util::rt::TokioIo;
use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
use rmcp::transport::{StreamableHttpServerConfig, StreamableHttpService};
use std::convert::Infallible;
use std::net::{IpAddr, SocketAddr};
use std::sync::Arc;
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
        }
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
    /// There is no authentication: put the server behind something that has it.
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
            .with_legacy_session_mode(true);
        if self.allow_remote {
            if !self.addr.ip().is_unspecified() {
                hosts.push(self.addr.ip().to_string());
            }
            hosts.extend(self.allowed_hosts.iter().cloned());
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
    stop: CancellationToken,
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

    /// Stops accepting and ends every HTTP session of this server (other transports go on).
    pub async fn shutdown(self) -> Result<(), ServeError> {
        self.stop.cancel();
        self.waiting().await
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
        let stop = self.shared.closed.child_token();
        let shared = self.shared.clone();
        let service = StreamableHttpService::new(
            move || Ok(shared.open_session()),
            Arc::new(LocalSessionManager::default()),
            options.config(stop.clone()),
        );
        let path: Arc<str> = Arc::from(options.path.as_str());
        let accept = tokio::spawn(accept_loop(listener, service, path, stop.clone()));
        Ok(HttpServer {
            local_addr,
            path: options.path,
            stop,
            accept,
        })
    }
}

/// A non-loopback address without `allow_remote` is refused before anything is bound.
fn refuse_remote(options: &HttpOptions) -> Result<(), ServeError> {
    if options.addr.ip().is_loopback() || options.allow_remote {
        return Ok(());
    }
    Err(ServeError(format!(
        "refusing to serve HTTP on {}: it is not a loopback address and the server has no authentication — bind 127.0.0.1 or [::1], or opt in with allow_remote",
        options.addr
    )))
}

type Service = StreamableHttpService<super::handler::Session, LocalSessionManager>;

async fn accept_loop(listener: TcpListener, service: Service, path: Arc<str>, stop: CancellationToken) {
    loop {
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
        let path = path.clone();
        let stop = stop.clone();
        tokio::spawn(async move {
            let handler = service_fn(move |request: hyper::Request<Incoming>| {
                let service = service.clone();
                let path = path.clone();
                async move {
                    if request.uri().path() != &*path {
                        return Ok::<_, Infallible>(not_found());
                    }
                    let ended_session = request.method() == hyper::Method::DELETE;
                    let mut response = service.handle(request).await;
                    // rmcp answers a session DELETE with 202; the SDKs' clients expect 200/204
                    // (the Python client logs "Session termination failed: 202").
                    if ended_session && response.status() == hyper::StatusCode::ACCEPTED {
                        *response.status_mut() = hyper::StatusCode::OK;
                    }
                    Ok(response)
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

fn not_found() -> hyper::Response<http_body_util::combinators::BoxBody<bytes::Bytes, Infallible>> {
    use http_body_util::{BodyExt, Full};
    hyper::Response::builder()
        .status(hyper::StatusCode::NOT_FOUND)
        .body(Full::new(bytes::Bytes::from_static(b"Not Found")).boxed())
        .expect("a static response is valid")
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
