//! Dialing a served surface: the socket dispatch behind a typed client, and the owned
//! connection (`client`, `dispose`, `on_close`) a face holds.

use super::protocol::{
    Hello, MAX_FRAME, Progress, Reach, Reply, ReplyFrame, Request, RequestFrame, WIRE_VERSION,
};
use crate::batch::{BATCH, write_batches};
use crate::context::ToolContext;
use crate::dispatch::Dispatch;
use crate::failure::{Failure, FailureKind};
use crate::member::{Change, ChangeStream, Write};
use crate::spec::SurfaceSpec;
use crate::surface::{Surface, SurfaceClient};
use crate::sync::lock;
use futures::future::BoxFuture;
use futures::{FutureExt, StreamExt};
use serde_json::Value;
use std::collections::HashMap;
use std::fmt;
use std::path::Path;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tokio::io::{AsyncRead, AsyncWrite};
use tokio::sync::{mpsc, oneshot};
use tokio_util::codec::{FramedRead, LinesCodec};

/// How a dial waits: for the greeting, and for each answer.
///
/// ```
/// use std::time::Duration;
/// use surface_runtime::wire::DialOptions;
/// let options = DialOptions::default().call_timeout(Duration::from_secs(5));
/// assert_eq!(options.get_call_timeout(), Duration::from_secs(5));
/// assert_eq!(DialOptions::default().get_call_timeout(), DialOptions::DEFAULT_CALL_TIMEOUT);
/// ```
#[derive(Clone, Debug)]
#[must_use = "hand the options to `dial_unix_socket_with` or `dial_child_with`"]
pub struct DialOptions {
    greeting_timeout: Duration,
    call_timeout: Duration,
    watch_buffer: usize,
    scopes: Option<Vec<String>>,
}

impl Default for DialOptions {
    fn default() -> Self {
        DialOptions {
            greeting_timeout: Self::DEFAULT_GREETING_TIMEOUT,
            call_timeout: Self::DEFAULT_CALL_TIMEOUT,
            watch_buffer: Self::DEFAULT_WATCH_BUFFER,
            scopes: None,
        }
    }
}

impl DialOptions {
    /// Default of [`greeting_timeout`](Self::greeting_timeout): 10 s.
    pub const DEFAULT_GREETING_TIMEOUT: Duration = Duration::from_secs(10);
    /// Default of [`call_timeout`](Self::call_timeout): 30 s.
    pub const DEFAULT_CALL_TIMEOUT: Duration = Duration::from_secs(30);
    /// Default of [`watch_buffer`](Self::watch_buffer): 256 changes, as a served member's own
    /// feed keeps.
    pub const DEFAULT_WATCH_BUFFER: usize = 256;

    /// How many changes of one watch wait for a consumer that has not read them (default
    /// [`DEFAULT_WATCH_BUFFER`](Self::DEFAULT_WATCH_BUFFER), at least 1). Past that, changes
    /// are dropped and counted, and once the consumer has read what was buffered it gets one
    /// [`Change::Lagged`] with the count — re-read the member — as a local feed does.
    pub fn watch_buffer(mut self, n: usize) -> Self {
        self.watch_buffer = n.max(1);
        self
    }

    /// How long a dial waits for the served side's greeting (default
    /// [`DEFAULT_GREETING_TIMEOUT`](Self::DEFAULT_GREETING_TIMEOUT)).
    pub fn greeting_timeout(mut self, timeout: Duration) -> Self {
        self.greeting_timeout = timeout;
        self
    }

    /// How long a request (a read, a call, the opening of a watch) waits for its answer
    /// (default [`DEFAULT_CALL_TIMEOUT`](Self::DEFAULT_CALL_TIMEOUT)); then it fails with
    /// [`FailureKind::TimedOut`], its outcome unknown. A call's progress restarts it: a
    /// procedure that keeps reporting (`ctx.progress`) waits as long as it reports. An open
    /// watch's changes have no timeout.
    pub fn call_timeout(mut self, timeout: Duration) -> Self {
        self.call_timeout = timeout;
        self
    }

    /// Dials with these scopes only (wire strings, e.g. `ops.read`): once greeted, the
    /// connection gives up every other scope its uid was granted, so the served side answers
    /// anything outside them as if it did not exist. A connection can only narrow: a scope its
    /// uid was not granted stays out of reach. Default: every scope the uid holds.
    ///
    /// ```
    /// use surface_runtime::wire::DialOptions;
    /// let options = DialOptions::default().scopes(["ops.read"]);
    /// assert_eq!(options.get_scopes(), Some(&["ops.read".to_owned()][..]));
    /// ```
    pub fn scopes<S: Into<String>>(mut self, scopes: impl IntoIterator<Item = S>) -> Self {
        self.scopes = Some(scopes.into_iter().map(Into::into).collect());
        self
    }

    /// See [`call_timeout`](Self::call_timeout).
    pub fn get_call_timeout(&self) -> Duration {
        self.call_timeout
    }

    /// See [`scopes`](Self::scopes).
    pub fn get_scopes(&self) -> Option<&[String]> {
        self.scopes.as_deref()
    }
}

/// How many progress frames of one call wait for its caller; past that, they are dropped.
const PROGRESS_BUFFER: usize = 16;

/// `1.5 s`, `30 s`, `250 ms`: a timeout as a sentence says it.
fn spoken(d: Duration) -> String {
    if d.as_millis().is_multiple_of(1000) {
        format!("{} s", d.as_secs())
    } else if d >= Duration::from_secs(1) {
        format!("{:.1} s", d.as_secs_f64())
    } else {
        format!("{} ms", d.as_millis())
    }
}

/// The signal a dialled connection fires when its transport drops (defined beside
/// [`Dispatch`], which the MCP face needs without the wire face).
pub use crate::dispatch::CloseSignal;

/// A dialled connection the caller owns: the typed client, how to close it, and the signal
/// that fires when its transport drops.
pub struct OwnedConnection<C> {
    /// The typed client over the connection.
    pub client: C,
    dispose: Box<dyn FnOnce() + Send + Sync>,
    closed: CloseSignal,
    dispatch: Arc<SocketDispatch>,
}

impl<C> OwnedConnection<C> {
    /// Who the served side says this connection is, and what it reaches (the `list` frame):
    /// on a unix socket with grants, the uid's scopes, narrowed by
    /// [`DialOptions::scopes`]. A face in front of the connection (a bridge) shows no more.
    ///
    /// ```no_run
    /// # async fn f<S: surface_runtime::Surface>() -> Result<(), surface_runtime::Failure> {
    /// let connection = surface_runtime::wire::dial_unix_socket::<S>("/tmp/ops.sock").await?;
    /// let reach = connection.reach().await?;
    /// println!("{} holds {:?}", reach.subject, reach.scopes);
    /// # Ok(()) }
    /// ```
    pub async fn reach(&self) -> Result<Reach, Failure> {
        let answer = self.dispatch.request(Request::List).await?;
        serde_json::from_value(answer)
            .map_err(|e| transport(false, format!("the served side's reach did not decode: {e}")))
    }

    /// Fires when the transport goes away (the served process exited, the socket closed).
    pub fn on_close(&self) -> CloseSignal {
        self.closed.clone()
    }

    /// Splits into the client, its disposer and its close signal.
    pub fn into_parts(self) -> (C, Box<dyn FnOnce() + Send + Sync>, CloseSignal) {
        (self.client, self.dispose, self.closed)
    }

    /// Closes the transport.
    pub fn dispose(self) {
        (self.dispose)()
    }
}

impl<C> fmt::Debug for OwnedConnection<C> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("OwnedConnection")
            .field("closed", &self.closed.is_closed())
            .finish()
    }
}

fn transport(outcome_unknown: bool, message: impl Into<String>) -> Failure {
    Failure::new(FailureKind::Transport { outcome_unknown }, message)
}

struct Inner {
    spec: &'static SurfaceSpec,
    lines: mpsc::UnboundedSender<String>,
    next_id: AtomicU64,
    pending: Mutex<HashMap<u64, oneshot::Sender<Reply>>>,
    watches: Mutex<HashMap<u64, Feed>>,
    /// Where each running call's progress frames go (to the caller's [`ToolContext`]).
    progress: Mutex<HashMap<u64, mpsc::Sender<Progress>>>,
    watch_buffer: usize,
    closed: CloseSignal,
    call_timeout: Duration,
}

/// A [`Dispatch`] over a wire connection: requests multiplexed by id, watches as frames.
pub struct SocketDispatch {
    inner: Arc<Inner>,
}

impl SocketDispatch {
    fn send(&self, request: Request) -> Result<(u64, oneshot::Receiver<Reply>), Failure> {
        self.send_with(request, |_| {})
    }

    /// [`send`](Self::send), running `register` with the request's id before the line leaves:
    /// a watch's feed exists before any change for it can arrive.
    fn send_with(
        &self,
        request: Request,
        register: impl FnOnce(u64),
    ) -> Result<(u64, oneshot::Receiver<Reply>), Failure> {
        if self.inner.closed.is_closed() {
            return Err(transport(false, "the connection to the served surface is closed"));
        }
        let id = self.inner.next_id.fetch_add(1, Ordering::Relaxed);
        let (tx, rx) = oneshot::channel();
        lock(&self.inner.pending).insert(id, tx);
        let line = serde_json::to_string(&RequestFrame { id, request }).expect("requests serialize");
        if line.len() > MAX_FRAME {
            // The served side's decoder would drop the whole connection: refuse this request only.
            self.forget(id);
            return Err(Failure::new(
                FailureKind::Error,
                format!(
                    "the request was too large to send: {} bytes, over the wire's limit of {MAX_FRAME} bytes",
                    line.len()
                ),
            ));
        }
        register(id);
        if self.inner.lines.send(line).is_err() {
            self.forget(id);
            return Err(transport(false, "the connection to the served surface is closed"));
        }
        Ok((id, rx))
    }

    fn forget(&self, id: u64) {
        lock(&self.inner.pending).remove(&id);
    }

    /// Waits for request `id`'s answer, at most the call timeout.
    async fn answer(
        &self,
        id: u64,
        rx: oneshot::Receiver<Reply>,
    ) -> Result<Result<Reply, oneshot::error::RecvError>, Failure> {
        self.answer_reporting(id, rx, None).await
    }

    /// [`answer`](Self::answer), handing each progress frame of the call to `heard`'s context;
    /// the call timeout counts from the last one, so a call that keeps reporting is not cut off.
    async fn answer_reporting(
        &self,
        id: u64,
        mut rx: oneshot::Receiver<Reply>,
        mut heard: Option<(mpsc::Receiver<Progress>, ToolContext)>,
    ) -> Result<Result<Reply, oneshot::error::RecvError>, Failure> {
        let timeout = self.inner.call_timeout;
        let mut deadline = tokio::time::Instant::now() + timeout;
        loop {
            let progress = async {
                match &mut heard {
                    Some((progress, _)) => progress.recv().await,
                    None => std::future::pending().await,
                }
            };
            tokio::select! {
                answer = &mut rx => {
                    // Progress frames precede their answer on the wire: report what is buffered.
                    if let Some((progress, ctx)) = &mut heard {
                        while let Ok(p) = progress.try_recv() {
                            ctx.report(p.progress, p.total, p.message).await;
                        }
                    }
                    return Ok(answer);
                }
                Some(p) = progress => {
                    deadline = tokio::time::Instant::now() + timeout;
                    if let Some((_, ctx)) = &heard {
                        ctx.report(p.progress, p.total, p.message).await;
                    }
                }
                () = tokio::time::sleep_until(deadline) => {
                    // A late answer finds no waiter and is dropped.
                    self.forget(id);
                    return Err(Failure::new(
                        FailureKind::TimedOut {
                            after_ms: u64::try_from(timeout.as_millis()).unwrap_or(u64::MAX),
                        },
                        format!("the served surface did not answer within {}", spoken(timeout)),
                    ));
                }
            }
        }
    }

    async fn request(&self, request: Request) -> Result<Value, Failure> {
        let (id, rx) = self.send(request)?;
        self.answered(self.answer(id, rx).await?)
    }

    /// A call: its progress frames go to the calling context ([`ToolContext::current`]).
    async fn call(&self, request: Request) -> Result<Value, Failure> {
        let (progress_tx, progress_rx) = mpsc::channel(PROGRESS_BUFFER);
        let register = |id| {
            lock(&self.inner.progress).insert(id, progress_tx);
        };
        let (id, rx) = self.send_with(request, register)?;
        let heard = Some((progress_rx, ToolContext::current()));
        let answer = self.answer_reporting(id, rx, heard).await;
        lock(&self.inner.progress).remove(&id);
        self.answered(answer?)
    }

    fn answered(&self, answer: Result<Reply, oneshot::error::RecvError>) -> Result<Value, Failure> {
        match answer {
            Ok(Reply::Ok(v)) => Ok(v),
            Ok(Reply::Err(f)) => Err(f),
            Ok(Reply::Change(_) | Reply::Progress(_)) => Err(transport(
                true,
                "the served side answered a request with a change",
            )),
            // The reader dropped every pending request when the transport went away.
            Err(_) => Err(transport(
                true,
                "the connection to the served surface dropped while the request was in flight",
            )),
        }
    }
}

impl Dispatch for SocketDispatch {
    fn spec(&self) -> &'static SurfaceSpec {
        self.inner.spec
    }
    fn read<'a>(&'a self, member: &'a str) -> BoxFuture<'a, Result<Value, Failure>> {
        self.request(Request::Read {
            member: member.to_owned(),
        })
        .boxed()
    }
    fn read_item<'a>(&'a self, member: &'a str, id: &'a str) -> BoxFuture<'a, Result<Value, Failure>> {
        self.request(Request::ReadItem {
            member: member.to_owned(),
            item: id.to_owned(),
        })
        .boxed()
    }
    fn write<'a>(&'a self, member: &'a str, _write: Write) -> BoxFuture<'a, Result<(), Failure>> {
        let f = Failure::new(
            FailureKind::Unknown,
            format!(
                "writes to \"{member}\" do not cross the wire: change a served surface through its procedures"
            ),
        );
        futures::future::ready(Err(f)).boxed()
    }
    fn watch<'a>(&'a self, member: &'a str) -> BoxFuture<'a, Result<ChangeStream, Failure>> {
        async move {
            let (changes_tx, changes_rx) = mpsc::channel(self.inner.watch_buffer);
            let missed = Arc::new(AtomicU64::new(0));
            let feed = Feed {
                tx: changes_tx,
                missed: missed.clone(),
            };
            let register = |id| {
                lock(&self.inner.watches).insert(id, feed);
            };
            let (id, ack) = self.send_with(
                Request::Watch {
                    member: member.to_owned(),
                },
                register,
            )?;
            let unregister = || {
                lock(&self.inner.watches).remove(&id);
            };
            match self.answer(id, ack).await {
                Ok(Ok(Reply::Ok(_))) => {}
                Ok(Ok(Reply::Err(f))) | Err(f) => {
                    unregister();
                    return Err(f);
                }
                _ => {
                    return Err(transport(
                        true,
                        "the connection dropped while a watch was opening",
                    ));
                }
            }
            let guard = Unwatch {
                inner: self.inner.clone(),
                id,
            };
            let stream = futures::stream::unfold(
                (changes_rx, missed, guard),
                |(mut rx, missed, guard)| async move {
                    let next = match rx.try_recv() {
                        Ok(change) => Some(change),
                        // Drained: changes dropped while it was full are owed as one `Lagged`,
                        // after every change that came before them.
                        Err(_) => match missed.swap(0, Ordering::AcqRel) {
                            0 => match rx.recv().await {
                                Some(change) => Some(change),
                                None => Some(missed.swap(0, Ordering::AcqRel))
                                    .filter(|n| *n > 0)
                                    .map(Change::Lagged),
                            },
                            n => Some(Change::Lagged(n)),
                        },
                    };
                    next.map(|c| (c, (rx, missed, guard)))
                },
            );
            Ok(stream.boxed())
        }
        .boxed()
    }
    fn call<'a>(&'a self, procedure: &'a str, input: Value) -> BoxFuture<'a, Result<Value, Failure>> {
        SocketDispatch::call(
            self,
            Request::Call {
                procedure: procedure.to_owned(),
                input,
            },
        )
        .boxed()
    }
}

/// The local end of one watch: a bounded buffer, and how many changes it had no room for.
struct Feed {
    tx: mpsc::Sender<Change>,
    missed: Arc<AtomicU64>,
}

impl Feed {
    /// Buffers `change` unless the consumer has fallen [`DialOptions::watch_buffer`] behind:
    /// then it is counted instead (and so is every change until the consumer has drained the
    /// buffer and been told, with one [`Change::Lagged`], to re-read). Never blocks the
    /// connection's reader, which answers every other request too.
    fn offer(&self, change: Change) {
        let full = self.missed.load(Ordering::Acquire) > 0
            || matches!(self.tx.try_send(change), Err(mpsc::error::TrySendError::Full(_)));
        if full {
            self.missed.fetch_add(1, Ordering::AcqRel);
        }
    }
}

/// Closes the served side's feed when the local change stream is dropped.
struct Unwatch {
    inner: Arc<Inner>,
    id: u64,
}

impl Drop for Unwatch {
    fn drop(&mut self) {
        lock(&self.inner.watches).remove(&self.id);
        if !self.inner.closed.is_closed() {
            let id = self.inner.next_id.fetch_add(1, Ordering::Relaxed);
            let frame = RequestFrame {
                id,
                request: Request::Unwatch { watch: self.id },
            };
            let _ = self
                .inner
                .lines
                .send(serde_json::to_string(&frame).expect("requests serialize"));
        }
    }
}

/// Opens a connection to a served `S` over `reader`/`writer`: waits for the greeting and
/// checks it names `S`. The returned signal fires when the transport goes away.
async fn connect<S, R, W>(
    reader: R,
    writer: W,
    options: &DialOptions,
) -> Result<(SocketDispatch, CloseSignal), Failure>
where
    S: Surface,
    R: AsyncRead + Send + Unpin + 'static,
    W: AsyncWrite + Send + Unpin + 'static,
{
    let closed = CloseSignal::new();
    let (lines_tx, mut lines_rx) = mpsc::unbounded_channel::<String>();
    let writer_closed = closed.clone();
    tokio::spawn(async move {
        let (mut writer, mut nothing) = (writer, ());
        let line = |line: String, batch: &mut Vec<u8>| {
            batch.extend_from_slice(line.as_bytes());
            batch.push(b'\n');
            0
        };
        tokio::select! {
            wrote = write_batches(&mut lines_rx, &mut writer, BATCH, line, &mut nothing) => {
                if wrote.is_err() {
                    writer_closed.close();
                }
            }
            _ = writer_closed.closed() => {}
        }
    });
    let inner = Arc::new(Inner {
        spec: &S::SPEC,
        lines: lines_tx,
        next_id: AtomicU64::new(1),
        pending: Mutex::new(HashMap::new()),
        watches: Mutex::new(HashMap::new()),
        progress: Mutex::new(HashMap::new()),
        closed: closed.clone(),
        call_timeout: options.call_timeout,
        watch_buffer: options.watch_buffer,
    });
    let mut frames = FramedRead::new(reader, LinesCodec::new_with_max_length(MAX_FRAME));
    let greeting = tokio::time::timeout(options.greeting_timeout, frames.next()).await;
    let hello: Hello = match greeting {
        Ok(Some(Ok(line))) => match serde_json::from_str::<ReplyFrame>(&line) {
            Ok(ReplyFrame {
                id: 0,
                reply: Reply::Ok(v),
            }) => serde_json::from_value(v)
                .map_err(|e| transport(false, format!("the served side's greeting did not decode: {e}")))?,
            // Refused in place of the greeting (a uid the daemon does not grant): its sentence.
            Ok(ReplyFrame {
                id: 0,
                reply: Reply::Err(refusal),
            }) => {
                closed.close();
                return Err(refusal);
            }
            _ => {
                return Err(transport(
                    false,
                    format!("the served side did not greet: {line:?}"),
                ));
            }
        },
        Ok(_) => {
            return Err(transport(
                false,
                "the served side closed the connection before greeting",
            ));
        }
        Err(_) => {
            closed.close();
            return Err(transport(
                false,
                format!(
                    "the served side did not greet within {}",
                    spoken(options.greeting_timeout)
                ),
            ));
        }
    };
    if hello.surface != S::NAME || hello.wire != WIRE_VERSION {
        closed.close();
        return Err(transport(
            false,
            format!(
                "the served side is {} (wire {}), not {} (wire {WIRE_VERSION})",
                hello.surface,
                hello.wire,
                S::NAME
            ),
        ));
    }
    let reader_inner = inner.clone();
    tokio::spawn(async move {
        while let Some(Ok(line)) = frames.next().await {
            let Ok(frame) = serde_json::from_str::<ReplyFrame>(&line) else {
                continue;
            };
            match frame.reply {
                Reply::Change(c) => {
                    let watches = lock(&reader_inner.watches);
                    if let Some(feed) = watches.get(&frame.id) {
                        feed.offer(c);
                    }
                }
                Reply::Progress(p) => {
                    // Advisory: a caller that has not taken the last few misses the next.
                    if let Some(tx) = lock(&reader_inner.progress).get(&frame.id) {
                        let _ = tx.try_send(p);
                    }
                }
                reply => {
                    let waiter = lock(&reader_inner.pending).remove(&frame.id);
                    match waiter {
                        Some(tx) => {
                            let _ = tx.send(reply);
                        }
                        // An open watch's final frame (the server shutting down): it ends.
                        None => {
                            lock(&reader_inner.watches).remove(&frame.id);
                        }
                    }
                }
            }
        }
        // The transport is gone: every waiter learns its outcome is unknown, every watch ends.
        reader_inner.closed.close();
        lock(&reader_inner.pending).clear();
        lock(&reader_inner.watches).clear();
        lock(&reader_inner.progress).clear();
    });
    let dispatch = SocketDispatch { inner };
    if let Some(scopes) = &options.scopes {
        let narrowed = dispatch
            .request(Request::Narrow {
                scopes: scopes.clone(),
            })
            .await;
        if let Err(f) = narrowed {
            closed.close();
            return Err(f);
        }
    }
    Ok((dispatch, closed))
}

/// Dials a surface served on a unix socket ([`super::serve_unix_socket`]).
///
/// ```no_run
/// # async fn f<S: surface_runtime::Surface>() -> Result<(), surface_runtime::Failure> {
/// let connection = surface_runtime::wire::dial_unix_socket::<S>("/tmp/ops.sock").await?;
/// let on_close = connection.on_close();
/// # Ok(()) }
/// ```
pub async fn dial_unix_socket<S: Surface>(
    path: impl AsRef<Path>,
) -> Result<OwnedConnection<S::Client>, Failure> {
    dial_unix_socket_with::<S>(path, &DialOptions::default()).await
}

/// [`dial_unix_socket`] with explicit timeouts.
///
/// ```no_run
/// # async fn f<S: surface_runtime::Surface>() -> Result<(), surface_runtime::Failure> {
/// use surface_runtime::wire::{DialOptions, dial_unix_socket_with};
/// let options = DialOptions::default().call_timeout(std::time::Duration::from_secs(5));
/// let connection = dial_unix_socket_with::<S>("/tmp/ops.sock", &options).await?;
/// # Ok(()) }
/// ```
pub async fn dial_unix_socket_with<S: Surface>(
    path: impl AsRef<Path>,
    options: &DialOptions,
) -> Result<OwnedConnection<S::Client>, Failure> {
    let path = path.as_ref();
    let stream = tokio::net::UnixStream::connect(path)
        .await
        .map_err(|e| transport(false, format!("could not dial {}: {e}", path.display())))?;
    let (r, w) = stream.into_split();
    let (dispatch, closed) = connect::<S, _, _>(r, w, options).await?;
    let signal = closed.clone();
    let dispatch = Arc::new(dispatch);
    Ok(OwnedConnection {
        client: S::Client::from_dispatch(dispatch.clone()),
        dispose: Box::new(move || signal.close()),
        closed,
        dispatch,
    })
}

/// Spawns `command` (e.g. `ssh host app serve`) and dials the surface it serves on its stdio.
/// Disposing the connection kills the child.
pub async fn dial_child<S: Surface>(
    command: tokio::process::Command,
) -> Result<OwnedConnection<S::Client>, Failure> {
    dial_child_with::<S>(command, &DialOptions::default()).await
}

/// [`dial_child`] with explicit timeouts.
pub async fn dial_child_with<S: Surface>(
    mut command: tokio::process::Command,
    options: &DialOptions,
) -> Result<OwnedConnection<S::Client>, Failure> {
    let mut child = command
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .map_err(|e| transport(false, format!("could not start the served process: {e}")))?;
    let stdin = child.stdin.take().expect("piped");
    let stdout = child.stdout.take().expect("piped");
    let (dispatch, closed) = connect::<S, _, _>(stdout, stdin, options).await?;
    let child = Arc::new(Mutex::new(Some(child)));
    let reaper = child.clone();
    let exit = closed.clone();
    tokio::spawn(async move {
        exit.closed().await;
        if let Some(mut c) = lock(&reaper).take() {
            let _ = c.start_kill();
        }
    });
    let signal = closed.clone();
    let dispatch = Arc::new(dispatch);
    Ok(OwnedConnection {
        client: S::Client::from_dispatch(dispatch.clone()),
        dispose: Box::new(move || {
            signal.close();
            if let Some(mut c) = lock(&child).take() {
                let _ = c.start_kill();
            }
        }),
        closed,
        dispatch,
    })
}
