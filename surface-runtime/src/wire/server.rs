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
//!
//! Here: the socket (binding it owner-only, accepting) and the entry points; the options are in
//! `options.rs`, and one connection's reading, calls and writing in `connection.rs`.

use super::connection::{Stopping, serve_connection};
use super::options::WireOptions;
use crate::expose::{ErasedExpose, Expose};
use crate::surface::Surface;
use std::io;
use std::os::unix::fs::{FileTypeExt, MetadataExt, PermissionsExt};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use tokio::io::{AsyncRead, AsyncWrite};
use tokio::net::UnixListener;
use tokio::task::JoinHandle;

/// A surface served on a unix socket; dropping it (or [`WireServer::close`]) stops accepting
/// and removes the socket file (unless something else has replaced it since); the connections
/// already open go on. [`WireServer::shutdown`] ends them gracefully.
pub struct WireServer {
    path: PathBuf,
    inode: (u64, u64),
    accept: JoinHandle<()>,
    stopping: Stopping,
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
