//! Serving a surface over the wire: a unix socket (many connections) or a pair of streams
//! such as a child's stdio (one connection).
//!
//! Every bound is a [`WireOptions`] setting with a documented default: requests in flight and
//! answers queued per connection (a client that writes without reading stops being read, so
//! the daemon's memory stays flat), watches per connection, the socket file's mode (owner-only
//! by default), and the pause after a failed `accept`.

use super::protocol::{Hello, MAX_FRAME, Reply, ReplyFrame, Request, RequestFrame, WIRE_VERSION};
use crate::batch::{BATCH, write_batches};
use crate::expose::{ErasedExpose, Expose, Exposure};
use crate::failure::{Failure, FailureKind};
use crate::surface::Surface;
use crate::sync::lock;
use futures::StreamExt;
use std::collections::HashMap;
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

/// The bounds and permissions of a served wire face.
///
/// ```
/// use surface_runtime::wire::WireOptions;
/// let options = WireOptions::default().max_in_flight(16).socket_mode(0o660);
/// assert_eq!(options.get_max_in_flight(), 16);
/// assert_eq!(WireOptions::default().get_socket_mode(), 0o600);
/// ```
#[derive(Clone, Debug)]
#[must_use = "hand the options to `serve_unix_socket_with` or `serve_streams_with`"]
pub struct WireOptions {
    max_in_flight: usize,
    reply_queue: usize,
    max_watches: usize,
    socket_mode: u32,
    accept_backoff: Duration,
}

impl Default for WireOptions {
    fn default() -> Self {
        WireOptions {
            max_in_flight: Self::DEFAULT_MAX_IN_FLIGHT,
            reply_queue: Self::DEFAULT_REPLY_QUEUE,
            max_watches: Self::DEFAULT_MAX_WATCHES,
            socket_mode: Self::DEFAULT_SOCKET_MODE,
            accept_backoff: Self::DEFAULT_ACCEPT_BACKOFF,
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
    /// Default of [`socket_mode`](Self::socket_mode): `0o600`, the owner only.
    pub const DEFAULT_SOCKET_MODE: u32 = 0o600;
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

    /// The permission bits of the socket file (default
    /// [`DEFAULT_SOCKET_MODE`](Self::DEFAULT_SOCKET_MODE), owner only), whatever the umask:
    /// anyone who can connect can call every exposed procedure, so widen it (`0o660` for a
    /// group) only on purpose.
    pub fn socket_mode(mut self, mode: u32) -> Self {
        self.socket_mode = mode & 0o777;
        self
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

    /// See [`socket_mode`](Self::socket_mode).
    pub fn get_socket_mode(&self) -> u32 {
        self.socket_mode
    }
}

/// A surface served on a unix socket; dropping it (or [`WireServer::close`]) stops accepting
/// and removes the socket file (unless something else has replaced it since).
pub struct WireServer {
    path: PathBuf,
    inode: (u64, u64),
    accept: JoinHandle<()>,
}

impl WireServer {
    /// The socket's path.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Stops accepting connections and removes the socket file.
    pub fn close(self) {}
}

impl Drop for WireServer {
    fn drop(&mut self) {
        self.accept.abort();
        // Remove the file only if it is still ours: never another daemon's socket.
        if std::fs::symlink_metadata(&self.path).is_ok_and(|m| (m.dev(), m.ino()) == self.inode) {
            let _ = std::fs::remove_file(&self.path);
        }
    }
}

/// Serves `surface` through `expose` on a unix socket at `path`, with the default
/// [`WireOptions`]. Only what `expose` names is reachable; anything else answers as if it did
/// not exist.
///
/// The socket file is created owner-only (`0o600`) whatever the umask. What is already at
/// `path` is refused, except a stale socket (one nobody listens on), which is replaced: a
/// regular file or directory is never removed, and a live daemon's socket is never taken over.
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
    clear_stale(&path)?;
    let listener = bind_private(&path, options.socket_mode)?;
    let meta = std::fs::symlink_metadata(&path)?;
    let expose = expose.erase();
    let accept = tokio::spawn(accept_loop(listener, surface, expose, options));
    Ok(WireServer {
        path,
        inode: (meta.dev(), meta.ino()),
        accept,
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
) {
    let mut pause = options.accept_backoff;
    loop {
        match listener.accept().await {
            Ok((stream, _)) => {
                pause = options.accept_backoff;
                let (r, w) = stream.into_split();
                tokio::spawn(serve_connection(surface.clone(), expose, r, w, options.clone()));
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
    serve_connection(surface, expose.erase(), reader, writer, options).await
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
    reader: R,
    writer: W,
    options: WireOptions,
) where
    S: Surface,
    R: AsyncRead + Send + Unpin + 'static,
    W: AsyncWrite + Send + Unpin + 'static,
{
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
    let mut lines = FramedRead::new(reader, LinesCodec::new_with_max_length(MAX_FRAME));
    loop {
        // A permit before reading: with `max_in_flight` requests running, the socket is not
        // read until one of them has queued its answer.
        let permit = tokio::select! {
            permit = permits.clone().acquire_owned() => permit.expect("the semaphore is never closed"),
            _ = gone.cancelled() => break,
        };
        let line = tokio::select! {
            line = lines.next() => line,
            _ = gone.cancelled() => break,
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
        if matches!(frame.request, Request::Watch { .. } | Request::Unwatch { .. }) {
            // In order: a watch is open before any request read after it runs, so a change
            // caused by a later call is never missed.
            if let Some(reply) = handle(&surface, expose, frame, &tx, &watches, &options).await {
                let _ = tx.send(ReplyFrame { id, reply }).await;
            }
            continue;
        }
        let (surface, tx, watches, options) = (surface.clone(), tx.clone(), watches.clone(), options.clone());
        tokio::spawn(async move {
            if let Some(reply) = handle(&surface, expose, frame, &tx, &watches, &options).await {
                let _ = tx.send(ReplyFrame { id, reply }).await;
            }
            drop(permit);
        });
    }
    for (_, w) in lock(&watches).drain() {
        w.abort();
    }
    drop(tx);
    let _ = writer_task.await;
}

async fn handle<S: Surface>(
    surface: &Arc<S>,
    expose: ErasedExpose,
    frame: RequestFrame,
    tx: &mpsc::Sender<ReplyFrame>,
    watches: &Watches,
    options: &WireOptions,
) -> Option<Reply> {
    let resource = |member: &str| {
        let visible = expose.get(member) == Some(Exposure::Resource);
        surface
            .member(member)
            .filter(|_| visible)
            .ok_or_else(|| hidden(S::NAME, "member", member))
    };
    let result = match frame.request {
        Request::Read { member } => resource(&member).map(|m| m.read()),
        Request::ReadItem { member, item } => resource(&member).and_then(|m| m.read_item(&item)),
        Request::Call { procedure, input } => {
            if matches!(expose.get(&procedure), Some(Exposure::Tool { .. })) {
                surface.call(&procedure, input).await
            } else {
                Err(hidden(S::NAME, "procedure", &procedure))
            }
        }
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

fn open_watches(watches: &Watches) -> usize {
    let mut watches = lock(watches);
    // A feed that ended on its own (its member went away) no longer counts.
    watches.retain(|_, task| !task.is_finished());
    watches.len()
}
