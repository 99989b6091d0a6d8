//! Serving a surface over the wire: a unix socket (many connections) or a pair of streams
//! such as a child's stdio (one connection).
//!
//! Every bound is a [`WireOptions`] setting with a documented default: requests in flight and
//! answers queued per connection (a client that writes without reading stops being read, so
//! the daemon's memory stays flat), watches per connection, the socket file's mode (owner-only
//! by default), the pause after a failed `accept`, and how long a graceful shutdown
//! ([`WireServer::shutdown`], the rule of [`crate::drain`]) waits for the calls in flight.
//!
//! Who calls is decided per connection by the peer's credentials (`SO_PEERCRED`, through
//! tokio): the principal `uid:<n>`, holding the scopes [`WireOptions::grant`] gave that uid.
//! It reaches exactly what it would on the MCP face with those scopes (the same expose map's
//! `scope = …`), and anything else answers as if it did not exist.

use super::protocol::{
    Hello, MAX_FRAME, Progress, Reach, Reply, ReplyFrame, Request, RequestFrame, WIRE_VERSION,
};
use crate::Principal;
use crate::audit::{Audit, Audited};
use crate::batch::{BATCH, write_batches};
use crate::context::{LogLevel, Reporter, ToolContext};
use crate::expose::{ErasedExpose, Expose, Exposure};
use crate::failure::{Failure, FailureKind};
use crate::layer::CallInfo;
use crate::surface::Surface;
use crate::sync::lock;
use futures::StreamExt;
use futures::future::BoxFuture;
use std::collections::{BTreeMap, HashMap};
use std::io;
use std::os::unix::fs::{FileTypeExt, MetadataExt, PermissionsExt};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tokio::io::{AsyncRead, AsyncWrite};
use tokio::net::UnixListener;
use tokio::sync::{Semaphore, mpsc};
use tokio::task::JoinHandle;
use tokio_util::codec::{FramedRead, LinesCodec};
use tokio_util::sync::CancellationToken;

/// The bounds, permissions and grants of a served wire face.
///
/// ```
/// use surface_runtime::wire::WireOptions;
/// let options = WireOptions::default().max_in_flight(16).socket_mode(0o660);
/// assert_eq!(options.get_max_in_flight(), 16);
/// assert_eq!(WireOptions::default().get_socket_mode(), 0o600);
/// // Granting uids opens the socket file to every uid; the grants decide who is served.
/// assert_eq!(WireOptions::default().grant(1000, ["ops.read"]).get_socket_mode(), 0o666);
/// ```
#[derive(Clone, Debug)]
#[must_use = "hand the options to `serve_unix_socket_with` or `serve_streams_with`"]
pub struct WireOptions {
    max_in_flight: usize,
    reply_queue: usize,
    max_watches: usize,
    /// `None`: the default for the grants ([`WireOptions::get_socket_mode`]).
    socket_mode: Option<u32>,
    accept_backoff: Duration,
    grants: BTreeMap<u32, Vec<String>>,
    audit: Audit,
    layers: crate::layer::Layers,
    drain_timeout: Duration,
}

impl Default for WireOptions {
    fn default() -> Self {
        WireOptions {
            max_in_flight: Self::DEFAULT_MAX_IN_FLIGHT,
            reply_queue: Self::DEFAULT_REPLY_QUEUE,
            max_watches: Self::DEFAULT_MAX_WATCHES,
            socket_mode: None,
            accept_backoff: Self::DEFAULT_ACCEPT_BACKOFF,
            grants: BTreeMap::new(),
            audit: Audit::Off,
            layers: crate::layer::Layers::default(),
            drain_timeout: crate::drain::DEFAULT_DRAIN_TIMEOUT,
        }
    }
}

impl WireOptions {
    /// Default of [`max_in_flight`](Self::max_in_flight): 64 requests per connection.
    pub const DEFAULT_MAX_IN_FLIGHT: usize = 64;
    /// Default of [`reply_queue`](Self::reply_queue): 256 frames per connection.
    pub const DEFAULT_REPLY_QUEUE: usize = 256;
    /// Default of [`max_watches`](Self::max_watches): 1,024 watches per connection.
    pub const DEFAULT_MAX_WATCHES: usize = 1024;
    /// Default of [`socket_mode`](Self::socket_mode) without grants: `0o600`, the owner only.
    pub const DEFAULT_SOCKET_MODE: u32 = 0o600;
    /// Default of [`socket_mode`](Self::socket_mode) with grants: `0o666`, every uid may
    /// connect, and the grants decide which are served.
    pub const GRANTED_SOCKET_MODE: u32 = 0o666;
    /// Default of [`accept_backoff`](Self::accept_backoff): 100 ms.
    pub const DEFAULT_ACCEPT_BACKOFF: Duration = Duration::from_millis(100);

    /// How many requests of one connection may run at once (default
    /// [`DEFAULT_MAX_IN_FLIGHT`](Self::DEFAULT_MAX_IN_FLIGHT), at least 1). When that many
    /// run, the server stops reading the connection until one is answered: a client that
    /// writes without reading backs up into its own socket, not into the server's memory.
    /// What one connection can hold is then about `max_in_flight + reply_queue` answers: lower
    /// both where answers are large (whole members of megabytes).
    pub fn max_in_flight(mut self, n: usize) -> Self {
        self.max_in_flight = n.max(1);
        self
    }

    /// How many answer and change frames may wait for one connection's writer (default
    /// [`DEFAULT_REPLY_QUEUE`](Self::DEFAULT_REPLY_QUEUE), at least 1). A full queue holds
    /// back the requests that produce answers, and through them the reading.
    pub fn reply_queue(mut self, n: usize) -> Self {
        self.reply_queue = n.max(1);
        self
    }

    /// How many watches one connection may hold open (default
    /// [`DEFAULT_MAX_WATCHES`](Self::DEFAULT_MAX_WATCHES)); one more is refused with a
    /// sentence saying so.
    pub fn max_watches(mut self, n: usize) -> Self {
        self.max_watches = n;
        self
    }

    /// The permission bits of the socket file, whatever the umask. Without grants the default
    /// is [`DEFAULT_SOCKET_MODE`](Self::DEFAULT_SOCKET_MODE), owner only: then anyone who can
    /// connect can call every exposed procedure, so widen it (`0o660` for a group) only on
    /// purpose. With grants the default is [`GRANTED_SOCKET_MODE`](Self::GRANTED_SOCKET_MODE):
    /// who is served is decided by the peer's uid, not by the file.
    pub fn socket_mode(mut self, mode: u32) -> Self {
        self.socket_mode = Some(mode & 0o777);
        self
    }

    /// Serves connections from `uid` with `scopes` (wire strings a `scopes!` declaration
    /// declares, e.g. `ops.read`; a broader one implies the narrower ones it is declared
    /// over). Repeat for more uids; granting one uid twice adds the scopes up.
    ///
    /// A connection is identified by its peer's credentials (`SO_PEERCRED` on Linux), as the
    /// principal `uid:<n>`, which reaches exactly the exposures its scopes reach (one without a
    /// scope: every served uid). With grants:
    /// - a uid without a grant is refused when it connects (one refusal frame, then the
    ///   connection closes) — except the daemon's own uid, which reaches everything unless it
    ///   is granted something itself;
    /// - the socket file becomes connectable by every uid
    ///   ([`GRANTED_SOCKET_MODE`](Self::GRANTED_SOCKET_MODE), unless
    ///   [`socket_mode`](Self::socket_mode) says otherwise); the granted uids also need search
    ///   permission on the directories above it.
    ///
    /// Without grants, the owner-only socket is the rule and every connection reaches
    /// everything exposed. A scope the served expose map's surface does not declare is refused
    /// when serving starts. Grants apply to unix sockets; a pair of streams
    /// ([`serve_streams_with`]) is its parent's, which is trusted with everything.
    ///
    /// ```
    /// use surface_runtime::wire::WireOptions;
    /// // uid 1000 may read; uid 1001 may read and administer.
    /// let options = WireOptions::default().grant(1000, ["ops.read"]).grant(1001, ["ops.admin"]);
    /// assert_eq!(options.get_grant(1000), Some(&["ops.read".to_owned()][..]));
    /// assert_eq!(options.get_grant(1002), None);
    /// ```
    pub fn grant<S: Into<String>>(mut self, uid: u32, scopes: impl IntoIterator<Item = S>) -> Self {
        let granted = self.grants.entry(uid).or_default();
        for scope in scopes {
            let scope = scope.into();
            if !granted.contains(&scope) {
                granted.push(scope);
            }
        }
        self
    }

    /// Records every mutating call (a procedure exposed `tool(mutates)`) as one `tracing`
    /// event: subject (`uid:<n>`), procedure, outcome, duration — see [`crate::audit`].
    /// Default [`Audit::Off`].
    pub fn audit(mut self, audit: Audit) -> Self {
        self.audit = audit;
        self
    }

    /// Adds a [`CallLayer`](crate::layer::CallLayer): every procedure call on the wire passes
    /// it before it runs (layers in the order added); one it refuses answers the caller the
    /// layer's sentence as a refusal, and the procedure never runs. The layer sees the call as
    /// the MCP face names it (`proc_kill` for `"proc.kill"`) and the caller's principal
    /// (`uid:<n>` on a socket), so the layer an `McpServer` takes works here unchanged.
    ///
    /// ```
    /// use surface_runtime::layer::{CallInfo, CallLayer};
    /// use surface_runtime::wire::WireOptions;
    /// struct NoKills;
    /// impl CallLayer for NoKills {
    ///     fn admit(&self, call: &CallInfo<'_>) -> Result<(), String> {
    ///         match call.tool() {
    ///             "proc_kill" => Err("kills are paused during the freeze".into()),
    ///             _ => Ok(()),
    ///         }
    ///     }
    /// }
    /// let options = WireOptions::default().layer(NoKills);
    /// # let _ = options;
    /// ```
    pub fn layer(mut self, layer: impl crate::layer::CallLayer) -> Self {
        self.layers.push(layer);
        self
    }

    /// How long a graceful shutdown ([`WireServer::shutdown`]) waits for the calls in flight
    /// to be answered, and then for each connection's answers to be written (default
    /// [`DEFAULT_DRAIN_TIMEOUT`](crate::drain::DEFAULT_DRAIN_TIMEOUT), 10 s, as on every face).
    /// Past it, the calls still running are dropped and the connections close.
    ///
    /// ```
    /// # use std::time::Duration;
    /// use surface_runtime::wire::WireOptions;
    /// let options = WireOptions::default().drain_timeout(Duration::from_secs(3));
    /// assert_eq!(options.get_drain_timeout(), Duration::from_secs(3));
    /// ```
    pub fn drain_timeout(mut self, timeout: Duration) -> Self {
        self.drain_timeout = timeout;
        self
    }

    /// See [`drain_timeout`](Self::drain_timeout).
    pub fn get_drain_timeout(&self) -> Duration {
        self.drain_timeout
    }

    /// The scopes granted to `uid`, if it was granted any.
    pub fn get_grant(&self, uid: u32) -> Option<&[String]> {
        self.grants.get(&uid).map(Vec::as_slice)
    }

    /// How long to pause after a failed `accept` (out of file descriptors and the like)
    /// before accepting again (default [`DEFAULT_ACCEPT_BACKOFF`](Self::DEFAULT_ACCEPT_BACKOFF));
    /// the pause doubles while failures repeat, up to ten times this.
    pub fn accept_backoff(mut self, pause: Duration) -> Self {
        self.accept_backoff = pause;
        self
    }

    /// See [`max_in_flight`](Self::max_in_flight).
    pub fn get_max_in_flight(&self) -> usize {
        self.max_in_flight
    }

    /// The socket file's mode: [`socket_mode`](Self::socket_mode)'s, or its default for the
    /// grants.
    pub fn get_socket_mode(&self) -> u32 {
        match (self.socket_mode, self.grants.is_empty()) {
            (Some(mode), _) => mode,
            (None, true) => Self::DEFAULT_SOCKET_MODE,
            (None, false) => Self::GRANTED_SOCKET_MODE,
        }
    }

    /// Who a connection from `uid` calls as (`None`: a pair of streams, its parent's), or the
    /// sentence refusing it. `owner` is the daemon's own uid.
    fn admit(&self, expose: &ErasedExpose, uid: Option<u32>, owner: u32) -> Result<Principal, String> {
        let everything = || expose.scopes().iter().map(|s| s.wire);
        let Some(uid) = uid else {
            return Ok(Principal::new(PEER_ISSUER, "stdio").with_scopes(everything()));
        };
        let who = Principal::new(PEER_ISSUER, format!("uid:{uid}"));
        match self.grants.get(&uid) {
            Some(scopes) => Ok(who.with_scopes(scopes.iter().cloned())),
            None if self.grants.is_empty() || uid == owner => Ok(who.with_scopes(everything())),
            None => Err(format!(
                "uid {uid} is not granted this socket: the daemon serves its owner and the uids it grants (`--grant {uid}=SCOPE`)"
            )),
        }
    }

    /// Refuses a grant naming a scope the served surface does not declare.
    fn check_grants(&self, expose: &ErasedExpose) -> io::Result<()> {
        for (uid, scopes) in &self.grants {
            if let Some(scope) = crate::scopes::undeclared(expose.scopes(), scopes) {
                return Err(io::Error::new(
                    io::ErrorKind::InvalidInput,
                    format!(
                        "the grant to uid {uid} names the scope \"{scope}\", which the served surface does not declare (it declares: {})",
                        crate::scopes::listed(expose.scopes().iter().map(|s| s.wire))
                    ),
                ));
            }
        }
        Ok(())
    }
}

/// The issuer of a wire principal: the kernel, which vouches for a socket peer's uid.
const PEER_ISSUER: &str = "unix";

/// A surface served on a unix socket; dropping it (or [`WireServer::close`]) stops accepting
/// and removes the socket file (unless something else has replaced it since); the connections
/// already open go on. [`WireServer::shutdown`] ends them gracefully.
pub struct WireServer {
    path: PathBuf,
    inode: (u64, u64),
    accept: JoinHandle<()>,
    stopping: Stopping,
}

/// What a graceful shutdown of a served wire face tells its connections.
#[derive(Clone)]
struct Stopping {
    /// The calls owed an answer, on every connection.
    calls: Arc<crate::drain::Drain>,
    /// The connections still open (each writing its last answers).
    connections: Arc<crate::drain::Drain>,
    /// Cancelled once the calls are answered (or the drain timeout passed): each connection
    /// ends its watches with a final frame, drops the calls still running, flushes and closes.
    closing: CancellationToken,
    timeout: Duration,
}

impl Stopping {
    fn new(timeout: Duration) -> Stopping {
        Stopping {
            calls: Arc::default(),
            connections: Arc::default(),
            closing: CancellationToken::new(),
            timeout,
        }
    }
}

impl WireServer {
    /// The socket's path.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Stops accepting connections and removes the socket file.
    pub fn close(self) {}

    /// Shuts down gracefully, e.g. on SIGTERM: stops accepting and removes the socket file;
    /// every open connection answers the requests it reads from now on with a refusal (the
    /// server is shutting down) while its calls in flight are answered, for at most
    /// [`WireOptions::drain_timeout`]; then every watch is sent a final frame (an `err` saying
    /// the server is shutting down, which ends the watch at the client), the calls still
    /// running are dropped, and each connection writes what it was answered and closes (within
    /// the drain timeout again). Answers whether every call in flight was answered in time.
    ///
    /// ```no_run
    /// # async fn f<S: surface_runtime::Surface>(surface: std::sync::Arc<S>, expose: surface_runtime::Expose<S>) {
    /// let server = surface_runtime::wire::serve_unix_socket("/tmp/ops.sock", surface, expose).unwrap();
    /// let _ = tokio::signal::ctrl_c().await; // or SIGTERM, or a `CancellationToken` of yours
    /// let answered = server.shutdown().await;
    /// # let _ = answered;
    /// # }
    /// ```
    pub async fn shutdown(mut self) -> bool {
        let stopping = self.stopping.clone();
        // Refusing before the socket file goes: whoever sees it gone sees refusals.
        stopping.calls.refuse_new();
        self.stop_accepting();
        let answered = stopping.calls.drain(stopping.timeout).await;
        stopping.closing.cancel();
        if !stopping.connections.drain(stopping.timeout).await {
            tracing::warn!(
                "surface wire: a connection did not take its last answers within the drain timeout"
            );
        }
        answered
    }

    fn stop_accepting(&mut self) {
        self.accept.abort();
        // Remove the file only if it is still ours: never another daemon's socket.
        if std::fs::symlink_metadata(&self.path).is_ok_and(|m| (m.dev(), m.ino()) == self.inode) {
            let _ = std::fs::remove_file(&self.path);
        }
    }
}

impl Drop for WireServer {
    fn drop(&mut self) {
        self.stop_accepting();
    }
}

/// Serves `surface` through `expose` on a unix socket at `path`, with the default
/// [`WireOptions`]. Only what `expose` names is reachable; anything else answers as if it did
/// not exist.
///
/// The socket file is created owner-only (`0o600`) whatever the umask, and its owner reaches
/// everything exposed; [`serve_unix_socket_with`] and [`WireOptions::grant`] serve other uids.
/// What is already at `path` is refused, except a stale socket (one nobody listens on), which is
/// replaced: a regular file or directory is never removed, and a live daemon's socket is never
/// taken over.
///
/// ```no_run
/// # async fn f<S: surface_runtime::Surface>(surface: std::sync::Arc<S>, expose: surface_runtime::Expose<S>) {
/// let server = surface_runtime::wire::serve_unix_socket("/tmp/ops.sock", surface, expose).unwrap();
/// # drop(server);
/// # }
/// ```
pub fn serve_unix_socket<S: Surface>(
    path: impl AsRef<Path>,
    surface: Arc<S>,
    expose: Expose<S>,
) -> io::Result<WireServer> {
    serve_unix_socket_with(path, surface, expose, WireOptions::default())
}

/// [`serve_unix_socket`] with explicit bounds and socket mode.
///
/// ```no_run
/// # async fn f<S: surface_runtime::Surface>(surface: std::sync::Arc<S>, expose: surface_runtime::Expose<S>) {
/// use surface_runtime::wire::{WireOptions, serve_unix_socket_with};
/// // The group may connect too.
/// let options = WireOptions::default().socket_mode(0o660);
/// let server = serve_unix_socket_with("/run/ops/ops.sock", surface, expose, options).unwrap();
/// # drop(server);
/// # }
/// ```
pub fn serve_unix_socket_with<S: Surface>(
    path: impl AsRef<Path>,
    surface: Arc<S>,
    expose: Expose<S>,
    options: WireOptions,
) -> io::Result<WireServer> {
    let path = path.as_ref().to_owned();
    let expose = expose.erase();
    options.check_grants(&expose)?;
    clear_stale(&path)?;
    let listener = bind_private(&path, options.get_socket_mode())?;
    let meta = std::fs::symlink_metadata(&path)?;
    // The socket file is this process's: its owner is the daemon's own uid.
    let owner = meta.uid();
    let stopping = Stopping::new(options.drain_timeout);
    let accept = tokio::spawn(accept_loop(
        listener,
        surface,
        expose,
        options,
        owner,
        stopping.clone(),
    ));
    Ok(WireServer {
        path,
        inode: (meta.dev(), meta.ino()),
        accept,
        stopping,
    })
}

/// Refuses what is at `path` unless it is a stale socket, which it removes.
fn clear_stale(path: &Path) -> io::Result<()> {
    let meta = match std::fs::symlink_metadata(path) {
        Ok(meta) => meta,
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(()),
        Err(e) => return Err(e),
    };
    if !meta.file_type().is_socket() {
        return Err(io::Error::new(
            io::ErrorKind::AlreadyExists,
            format!(
                "{} exists and is not a socket: refusing to replace it — remove it or choose another path",
                path.display()
            ),
        ));
    }
    match std::os::unix::net::UnixStream::connect(path) {
        Ok(_) => Err(io::Error::new(
            io::ErrorKind::AddrInUse,
            format!(
                "another daemon is serving {}: refusing to take its socket over — stop it first or choose another path",
                path.display()
            ),
        )),
        // Nobody listens: a socket left behind by a daemon that did not shut down cleanly.
        Err(e) if e.kind() == io::ErrorKind::ConnectionRefused => std::fs::remove_file(path),
        Err(e) => Err(io::Error::new(
            e.kind(),
            format!(
                "{} is a socket that could not be probed ({e}): refusing to replace it",
                path.display()
            ),
        )),
    }
}

/// Binds a socket at `path` with exactly `mode`, never reachable with wider permissions:
/// it is bound inside a fresh owner-only directory next to `path`, given its mode there, then
/// hard-linked into place (which fails rather than replace anything that appeared meanwhile).
fn bind_private(path: &Path, mode: u32) -> io::Result<UnixListener> {
    use std::os::unix::fs::DirBuilderExt;
    static NEXT: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
    let parent = match path.parent() {
        Some(p) if !p.as_os_str().is_empty() => p.to_owned(),
        _ => PathBuf::from("."),
    };
    let name = path.file_name().ok_or_else(|| {
        io::Error::new(
            io::ErrorKind::InvalidInput,
            format!("{} names no file", path.display()),
        )
    })?;
    let private = parent.join(format!(
        ".{}.{}.{}",
        name.to_string_lossy(),
        std::process::id(),
        NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed)
    ));
    std::fs::DirBuilder::new().mode(0o700).create(&private)?;
    let staged = private.join("s");
    let bound = (|| {
        let listener = UnixListener::bind(&staged)?;
        std::fs::set_permissions(&staged, std::fs::Permissions::from_mode(mode))?;
        std::fs::hard_link(&staged, path).map_err(|e| {
            if e.kind() == io::ErrorKind::AlreadyExists {
                io::Error::new(
                    e.kind(),
                    format!(
                        "{} appeared while the socket was being bound: refusing to replace it",
                        path.display()
                    ),
                )
            } else {
                e
            }
        })?;
        Ok(listener)
    })();
    let _ = std::fs::remove_file(&staged);
    let _ = std::fs::remove_dir(&private);
    bound
}

async fn accept_loop<S: Surface>(
    listener: UnixListener,
    surface: Arc<S>,
    expose: ErasedExpose,
    options: WireOptions,
    owner: u32,
    stopping: Stopping,
) {
    let mut pause = options.accept_backoff;
    loop {
        match listener.accept().await {
            Ok((stream, _)) => {
                pause = options.accept_backoff;
                let who = match stream.peer_cred() {
                    Ok(peer) => options.admit(&expose, Some(peer.uid()), owner),
                    Err(e) => Err(format!("the peer's credentials could not be read ({e})")),
                };
                let (r, w) = stream.into_split();
                tokio::spawn(serve_connection(
                    surface.clone(),
                    expose,
                    who,
                    r,
                    w,
                    options.clone(),
                    stopping.clone(),
                ));
            }
            Err(e) => {
                // Out of file descriptors (EMFILE) and the like pass: the connection waits in
                // the backlog, so pause and accept again rather than give up for good.
                tracing::warn!(
                    "surface wire: accepting a connection failed ({e}); accepting again in {} ms",
                    pause.as_millis()
                );
                tokio::time::sleep(pause).await;
                pause = (pause * 2).min(options.accept_backoff * 10);
            }
        }
    }
}

/// Serves `surface` on one connection made of `reader` and `writer` (e.g. this process's
/// stdin and stdout, for `ssh host app serve`), until the reader ends.
pub async fn serve_streams<S: Surface>(
    surface: Arc<S>,
    expose: Expose<S>,
    reader: impl AsyncRead + Send + Unpin + 'static,
    writer: impl AsyncWrite + Send + Unpin + 'static,
) {
    serve_streams_with(surface, expose, reader, writer, WireOptions::default()).await
}

/// [`serve_streams`] with explicit bounds (the socket mode does not apply).
pub async fn serve_streams_with<S: Surface>(
    surface: Arc<S>,
    expose: Expose<S>,
    reader: impl AsyncRead + Send + Unpin + 'static,
    writer: impl AsyncWrite + Send + Unpin + 'static,
    options: WireOptions,
) {
    let never = std::future::pending();
    serve_streams_until(surface, expose, reader, writer, options, never).await;
}

/// [`serve_streams_with`] that shuts down gracefully once `shutdown` completes (e.g. on SIGTERM),
/// by the rule of [`crate::drain`] that [`WireServer::shutdown`] follows: the requests read from
/// then on are refused (the server is shutting down) while the calls in flight are answered, for
/// at most [`WireOptions::drain_timeout`]; then every watch is sent its final frame, the calls
/// still running are dropped, and what was answered is written before it returns (within the
/// drain timeout again). It returns on its own when the reader ends, as [`serve_streams`] does.
/// Answers whether every call in flight was answered.
///
/// ```no_run
/// # async fn f<S: surface_runtime::Surface>(surface: std::sync::Arc<S>, expose: surface_runtime::Expose<S>) {
/// use surface_runtime::wire::{WireOptions, serve_streams_until};
/// let stdin = tokio::io::stdin();
/// let stdout = tokio::io::stdout();
/// let ctrl_c = async {
///     let _ = tokio::signal::ctrl_c().await;
/// };
/// let answered = serve_streams_until(surface, expose, stdin, stdout, WireOptions::default(), ctrl_c).await;
/// # let _ = answered;
/// # }
/// ```
pub async fn serve_streams_until<S: Surface>(
    surface: Arc<S>,
    expose: Expose<S>,
    reader: impl AsyncRead + Send + Unpin + 'static,
    writer: impl AsyncWrite + Send + Unpin + 'static,
    options: WireOptions,
    shutdown: impl Future<Output = ()>,
) -> bool {
    let expose = expose.erase();
    let who = options.admit(&expose, None, 0);
    let stopping = Stopping::new(options.drain_timeout);
    let connection = serve_connection(surface, expose, who, reader, writer, options, stopping.clone());
    let mut connection = std::pin::pin!(connection);
    tokio::select! {
        () = &mut connection => return true,
        () = shutdown => {}
    }
    // The connection goes on reading (and refusing) while its calls are answered.
    stopping.calls.refuse_new();
    let drained = async {
        let answered = stopping.calls.drain(stopping.timeout).await;
        stopping.closing.cancel();
        answered
    };
    let (answered, ()) = tokio::join!(drained, connection);
    answered
}

/// Serves `surface` on this process's own stdin and stdout (for `ssh host app --wire-stdio`)
/// until stdin ends, or, once `shutdown` completes, shuts down gracefully as
/// [`serve_streams_until`] does. On unix, stdout is kept for the frames alone: file
/// descriptor 1 is pointed at stderr, so a stray `println!` (the handler's or a dependency's)
/// cannot corrupt the stream. Answers whether every call in flight was answered.
///
/// ```no_run
/// # async fn f<S: surface_runtime::Surface>(surface: std::sync::Arc<S>, expose: surface_runtime::Expose<S>) {
/// use surface_runtime::wire::{WireOptions, serve_stdio_until};
/// let ctrl_c = async {
///     let _ = tokio::signal::ctrl_c().await;
/// };
/// let answered = serve_stdio_until(surface, expose, WireOptions::default(), ctrl_c).await.unwrap();
/// # let _ = answered;
/// # }
/// ```
pub async fn serve_stdio_until<S: Surface>(
    surface: Arc<S>,
    expose: Expose<S>,
    options: WireOptions,
    shutdown: impl Future<Output = ()>,
) -> io::Result<bool> {
    let (reader, writer) = crate::stdio::take()?;
    Ok(serve_streams_until(surface, expose, reader, writer, options, shutdown).await)
}

fn hidden(surface: &str, what: &str, name: &str) -> Failure {
    // An unexposed name answers exactly like a name the surface never had.
    Failure::new(
        FailureKind::Unknown,
        format!("{surface} has no {what} \"{name}\""),
    )
}

/// The line for `frame`, or, when it would exceed [`MAX_FRAME`] (which the peer's decoder
/// refuses, dropping the whole connection), an error frame answering the same request.
fn encode(frame: &ReplyFrame) -> Option<String> {
    let line = serde_json::to_string(frame).ok()?;
    if line.len() <= MAX_FRAME {
        return Some(line);
    }
    let what = match frame.reply {
        Reply::Change(_) => "a change on this watch",
        _ => "the answer to this request",
    };
    let refusal = ReplyFrame {
        id: frame.id,
        reply: Reply::Err(Failure::new(
            FailureKind::Error,
            format!(
                "{what} was too large to send: {} bytes, over the wire's limit of {MAX_FRAME} bytes — ask for less (one item rather than the whole member)",
                line.len()
            ),
        )),
    };
    serde_json::to_string(&refusal).ok()
}

type Watches = Arc<Mutex<HashMap<u64, JoinHandle<()>>>>;

async fn serve_connection<S, R, W>(
    surface: Arc<S>,
    expose: ErasedExpose,
    who: Result<Principal, String>,
    reader: R,
    writer: W,
    options: WireOptions,
    stopping: Stopping,
) where
    S: Surface,
    R: AsyncRead + Send + Unpin + 'static,
    W: AsyncWrite + Send + Unpin + 'static,
{
    // Counted until its last answers are written, for a graceful shutdown to wait on.
    let _open = stopping.connections.flight();
    // Bounded: a client that does not read its answers fills this queue, which holds back the
    // requests answering into it, which hold the in-flight permits, which stop the reading.
    let (tx, mut rx) = mpsc::channel::<ReplyFrame>(options.reply_queue);
    // Fires when the writer fails: nobody reads the answers any more, so stop reading requests.
    let gone = CancellationToken::new();
    let writer_gone = gone.clone();
    let writer_task = tokio::spawn(async move {
        let _gone = writer_gone.drop_guard();
        let mut writer = writer;
        // A reply too large to send was already turned into a refusal by `encode`.
        let line = |frame: ReplyFrame, batch: &mut Vec<u8>| {
            if let Some(line) = encode(&frame) {
                batch.extend_from_slice(line.as_bytes());
                batch.push(b'\n');
            }
            0
        };
        let _ = write_batches(&mut rx, &mut writer, BATCH, line, &mut ()).await;
    });
    let mut principal = match who {
        Ok(principal) => Arc::new(principal),
        Err(refusal) => {
            // In place of the greeting, so a dialler says why; then the connection ends.
            tracing::warn!("surface wire: refused a connection: {refusal}");
            let _ = tx
                .send(ReplyFrame {
                    id: 0,
                    reply: Reply::Err(Failure::new(FailureKind::Refused, refusal)),
                })
                .await;
            drop(tx);
            let _ = writer_task.await;
            return;
        }
    };
    let hello = Hello {
        surface: S::NAME.to_owned(),
        wire: WIRE_VERSION,
    };
    let greeting = serde_json::to_value(hello).expect("a greeting serializes");
    if tx
        .send(ReplyFrame {
            id: 0,
            reply: Reply::Ok(greeting),
        })
        .await
        .is_err()
    {
        return;
    }

    let watches: Watches = Arc::default();
    let permits = Arc::new(Semaphore::new(options.max_in_flight));
    // Cancelled when a shutdown closes the connection: the calls still running are dropped.
    let calls = stopping.closing.child_token();
    // Shared by every request of the connection (the grants are not copied per request).
    let options = Arc::new(options);
    let mut lines = FramedRead::new(reader, LinesCodec::new_with_max_length(MAX_FRAME));
    loop {
        // A permit before reading: with `max_in_flight` requests running, the socket is not
        // read until one of them has queued its answer.
        let permit = tokio::select! {
            permit = permits.clone().acquire_owned() => permit.expect("the semaphore is never closed"),
            _ = gone.cancelled() => break,
            _ = stopping.closing.cancelled() => break,
        };
        let line = tokio::select! {
            line = lines.next() => line,
            _ = gone.cancelled() => break,
            _ = stopping.closing.cancelled() => break,
        };
        let Some(Ok(line)) = line else { break };
        let frame: RequestFrame = match serde_json::from_str(&line) {
            Ok(f) => f,
            Err(e) => {
                let f = Failure::new(
                    FailureKind::InvalidInput { field: String::new() },
                    format!("bad frame: {e}"),
                );
                let id = serde_json::from_str::<serde_json::Value>(&line)
                    .ok()
                    .and_then(|v| v.get("id").and_then(|i| i.as_u64()))
                    .unwrap_or(0);
                let _ = tx
                    .send(ReplyFrame {
                        id,
                        reply: Reply::Err(f),
                    })
                    .await;
                continue;
            }
        };
        let id = frame.id;
        if stopping.calls.draining() {
            // Shutting down: nothing new starts; the calls already running are answered.
            let refusal = Failure::new(FailureKind::Refused, crate::drain::REFUSAL);
            let _ = tx
                .send(ReplyFrame {
                    id,
                    reply: Reply::Err(refusal),
                })
                .await;
            continue;
        }
        if let Request::Narrow { scopes } = &frame.request {
            // In order: every request read after it runs with the narrowed scopes.
            let kept = crate::scopes::narrow(expose.scopes(), principal.scopes(), scopes);
            let narrowed = Principal::new(principal.issuer(), principal.subject()).with_scopes(kept);
            principal = Arc::new(narrowed);
            let reply = Reply::Ok(reach_json(&principal, None));
            let _ = tx.send(ReplyFrame { id, reply }).await;
            continue;
        }
        let connection = Connection {
            expose,
            principal: principal.clone(),
            tx: tx.clone(),
            watches: watches.clone(),
            options: Arc::clone(&options),
        };
        if matches!(frame.request, Request::Watch { .. } | Request::Unwatch { .. }) {
            // In order: a watch is open before any request read after it runs, so a change
            // caused by a later call is never missed.
            if let Some(reply) = handle(&surface, &connection, frame).await {
                let _ = tx.send(ReplyFrame { id, reply }).await;
            }
            continue;
        }
        let surface = surface.clone();
        // Owed an answer until it is queued for the writer.
        let flight = stopping.calls.flight();
        let calls = calls.clone();
        tokio::spawn(async move {
            tokio::select! {
                reply = handle(&surface, &connection, frame) => {
                    if let Some(reply) = reply {
                        let tx = &connection.tx;
                        let _ = tx.send(ReplyFrame { id, reply }).await;
                    }
                }
                // A shutdown past its drain timeout drops the call, as a cancelled MCP call is.
                _ = calls.cancelled() => {}
            }
            drop(flight);
            drop(permit);
        });
    }
    let closing = stopping.closing.is_cancelled();
    let open: Vec<(u64, JoinHandle<()>)> = lock(&watches).drain().collect();
    for (id, w) in open {
        w.abort();
        if closing {
            // The final frame of the watch: the client's feed ends on it.
            let end = Failure::new(
                FailureKind::Refused,
                format!("{}; this watch has ended", crate::drain::REFUSAL),
            );
            let _ = tx.try_send(ReplyFrame {
                id,
                reply: Reply::Err(end),
            });
        }
    }
    drop(tx);
    if closing {
        // A peer that stopped reading does not hold the shutdown past its bound.
        let mut writer_task = writer_task;
        if tokio::time::timeout(stopping.timeout, &mut writer_task)
            .await
            .is_err()
        {
            writer_task.abort();
        }
    } else {
        let _ = writer_task.await;
    }
}

/// What a request of one connection runs with.
struct Connection {
    expose: ErasedExpose,
    /// Who calls, with the scopes it holds at the time the request was read.
    principal: Arc<Principal>,
    tx: mpsc::Sender<ReplyFrame>,
    watches: Watches,
    options: Arc<WireOptions>,
}

/// A [`Reach`] as the wire carries it; with `lists`, what `principal` reaches of `lists`.
fn reach_json(principal: &Principal, lists: Option<(Vec<String>, Vec<String>)>) -> serde_json::Value {
    let (members, procedures) = lists.unwrap_or_default();
    let reach = Reach {
        subject: principal.subject().to_owned(),
        scopes: principal.scopes().to_vec(),
        members,
        procedures,
    };
    serde_json::to_value(reach).expect("a reach serializes")
}

async fn handle<S: Surface>(surface: &Arc<S>, connection: &Connection, frame: RequestFrame) -> Option<Reply> {
    let Connection {
        expose,
        principal,
        tx,
        watches,
        options,
    } = connection;
    // One rule with the MCP face: the exposure's declared scope against the caller's.
    let reached = |key: &str, exposed: fn(Exposure) -> bool| {
        expose.get(key).is_some_and(exposed) && expose.reaches(key, Some(principal))
    };
    let is_resource = |e: Exposure| e == Exposure::Resource;
    let is_tool = |e: Exposure| matches!(e, Exposure::Tool { .. });
    let resource = |member: &str| {
        surface
            .member(member)
            .filter(|_| reached(member, is_resource))
            .ok_or_else(|| hidden(S::NAME, "member", member))
    };
    let result = match frame.request {
        Request::Read { member } => resource(&member).map(|m| m.read()),
        Request::ReadItem { member, item } => resource(&member).and_then(|m| m.read_item(&item)),
        Request::Call { procedure, input } => match expose.get(&procedure) {
            Some(Exposure::Tool { mutates }) if reached(&procedure, is_tool) => {
                if !options.layers.is_empty() {
                    // Named as the MCP face names the procedure's tool: one layer, every face.
                    let tool = procedure.replace('.', "_");
                    let call = CallInfo::new(&tool, Some(principal), input.as_object());
                    if let Err(refusal) = options.layers.admit(&call) {
                        return Some(Reply::Err(Failure::new(FailureKind::Refused, refusal)));
                    }
                }
                let audited = Audited::start(options.audit, mutates, || input.to_string());
                let reporter = Arc::new(CallProgress {
                    tx: tx.clone(),
                    id: frame.id,
                });
                let ctx = ToolContext::new(CancellationToken::new(), Some(reporter));
                let answer = ctx.scope(surface.call(&procedure, input)).await;
                if let Some(audited) = audited {
                    audited.answered(Some(principal), &procedure, &answer);
                }
                answer
            }
            _ => Err(hidden(S::NAME, "procedure", &procedure)),
        },
        Request::List => {
            let keys = |exposed: fn(Exposure) -> bool| {
                expose
                    .entries()
                    .iter()
                    .filter(|e| reached(e.key, exposed))
                    .map(|e| e.key.to_owned())
                    .collect::<Vec<_>>()
            };
            Ok(reach_json(principal, Some((keys(is_resource), keys(is_tool)))))
        }
        // Answered in order by the reading loop.
        Request::Narrow { .. } => Ok(reach_json(principal, None)),
        Request::Watch { member } => match resource(&member) {
            Ok(_) if open_watches(watches) >= options.max_watches => Err(Failure::new(
                FailureKind::Error,
                format!(
                    "this connection already holds {} watches, the most it may: unwatch one first",
                    options.max_watches
                ),
            )),
            Ok(m) => {
                let mut changes = m.changes();
                let (tx, id) = (tx.clone(), frame.id);
                // Acknowledge before any change can be sent on this id.
                let _ = tx
                    .send(ReplyFrame {
                        id,
                        reply: Reply::Ok(serde_json::Value::Null),
                    })
                    .await;
                let task = tokio::spawn(async move {
                    while let Some(change) = changes.next().await {
                        if tx
                            .send(ReplyFrame {
                                id,
                                reply: Reply::Change(change),
                            })
                            .await
                            .is_err()
                        {
                            return;
                        }
                    }
                });
                lock(watches).insert(id, task);
                return None;
            }
            Err(f) => Err(f),
        },
        Request::Unwatch { watch } => {
            if let Some(task) = lock(watches).remove(&watch) {
                task.abort();
            }
            Ok(serde_json::Value::Null)
        }
    };
    Some(match result {
        Ok(v) => Reply::Ok(v),
        Err(f) => Reply::Err(f),
    })
}

/// Sends a running call's progress to its caller as `progress` frames under the call's id.
struct CallProgress {
    tx: mpsc::Sender<ReplyFrame>,
    id: u64,
}

impl Reporter for CallProgress {
    fn progress(&self, progress: f64, total: Option<f64>, message: Option<String>) -> BoxFuture<'_, ()> {
        let frame = ReplyFrame {
            id: self.id,
            reply: Reply::Progress(Progress {
                progress,
                total,
                message,
            }),
        };
        // Advisory: with the reply queue full (a caller not reading), dropped rather than
        // holding the procedure up.
        let _ = self.tx.try_send(frame);
        Box::pin(std::future::ready(()))
    }

    fn log(&self, _: LogLevel, _: Option<String>, _: serde_json::Value) -> BoxFuture<'_, ()> {
        Box::pin(std::future::ready(()))
    }
}

fn open_watches(watches: &Watches) -> usize {
    let mut watches = lock(watches);
    // A feed that ended on its own (its member went away) no longer counts.
    watches.retain(|_, task| !task.is_finished());
    watches.len()
}
