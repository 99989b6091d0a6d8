//! A dialled connection: the socket dispatch behind a typed client (requests multiplexed by id,
//! watches and progress as frames), and the owned connection (`client`, `dispose`,
//! `on_close`) a face holds. `dial.rs` opens one.

use super::protocol::{MAX_FRAME, Progress, Reach, Reply, Request, RequestFrame};
use crate::context::ToolContext;
use crate::dispatch::Dispatch;
use crate::failure::{Failure, FailureKind};
use crate::member::{Change, ChangeStream, Write};
use crate::spec::SurfaceSpec;
use crate::sync::lock;
use futures::future::BoxFuture;
use futures::task::AtomicWaker;
use futures::{FutureExt, StreamExt};
use serde_json::Value;
use std::collections::{HashMap, VecDeque};
use std::fmt;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::task::Poll;
use std::time::Duration;
use tokio::sync::{mpsc, oneshot};

use super::dial_options::{PROGRESS_BUFFER, spoken};

/// The signal a dialled connection fires when its transport drops (defined beside
/// [`Dispatch`], which the MCP face needs without the wire face).
pub use crate::dispatch::CloseSignal;

/// A dialled connection the caller owns: the typed client, how to close it, and the signal
/// that fires when its transport drops.
pub struct OwnedConnection<C> {
    /// The typed client over the connection.
    pub client: C,
    pub(super) dispose: Box<dyn FnOnce() + Send + Sync>,
    pub(super) closed: CloseSignal,
    pub(super) dispatch: Arc<SocketDispatch>,
}

impl<C> OwnedConnection<C> {
    /// Who the served side says this connection is, and what it reaches (the `list` frame):
    /// on a unix socket with grants, the uid's scopes, narrowed by
    /// [`DialOptions::scopes`](super::DialOptions::scopes). A face in front of the connection (a bridge) shows no more.
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

pub(super) fn transport(outcome_unknown: bool, message: impl Into<String>) -> Failure {
    Failure::new(FailureKind::Transport { outcome_unknown }, message)
}

pub(super) struct Inner {
    pub(super) spec: &'static SurfaceSpec,
    pub(super) lines: mpsc::UnboundedSender<String>,
    pub(super) next_id: AtomicU64,
    pub(super) pending: Mutex<HashMap<u64, Waiter>>,
    pub(super) watches: Mutex<HashMap<u64, Feed>>,
    pub(super) watch_buffer: usize,
    pub(super) closed: CloseSignal,
    pub(super) call_timeout: Duration,
}

/// Who waits for a request's answer: its answer's sender and, for a call, where its progress
/// frames go (to the caller's [`ToolContext`]).
pub(super) struct Waiter {
    pub(super) answer: oneshot::Sender<Reply>,
    pub(super) progress: Option<Arc<ProgressInbox>>,
}

/// A call's progress frames not yet reported: at most [`PROGRESS_BUFFER`], later ones dropped
/// (progress is advisory, and the connection's reader must never wait). One small allocation
/// per call, where a channel's cost ~4 % of a bridged call's instructions.
#[derive(Default)]
pub(super) struct ProgressInbox {
    queue: Mutex<VecDeque<Progress>>,
    /// Set when a frame is kept, cleared when the caller hears it (so a frame kept before the
    /// caller waits is heard when it does).
    arrived: AtomicBool,
    /// The waiting caller's task. A `Notify` took its waiter list's lock to register the
    /// caller and again to remove it, every call, though progress is rare.
    caller: AtomicWaker,
}

impl ProgressInbox {
    /// Keeps `progress` for the caller, unless [`PROGRESS_BUFFER`] frames already wait.
    pub(super) fn offer(&self, progress: Progress) {
        let mut queue = lock(&self.queue);
        if queue.len() < PROGRESS_BUFFER {
            queue.push_back(progress);
            drop(queue);
            self.arrived.store(true, Ordering::Release);
            self.caller.wake();
        }
    }

    /// Resolves once a frame was kept since it last resolved.
    fn heard(&self) -> impl Future<Output = ()> + '_ {
        std::future::poll_fn(move |cx| {
            if !self.arrived.swap(false, Ordering::AcqRel) {
                self.caller.register(cx.waker());
                // A frame kept between the check and the registration woke no one.
                if !self.arrived.swap(false, Ordering::AcqRel) {
                    return Poll::Pending;
                }
            }
            Poll::Ready(())
        })
    }

    fn take(&self) -> VecDeque<Progress> {
        std::mem::take(&mut *lock(&self.queue))
    }
}

/// A [`Dispatch`] over a wire connection: requests multiplexed by id, watches as frames.
pub struct SocketDispatch {
    pub(super) inner: Arc<Inner>,
}

impl SocketDispatch {
    fn send(&self, request: Request) -> Result<(u64, oneshot::Receiver<Reply>), Failure> {
        self.send_with(request, None, |_| {})
    }

    /// [`send`](Self::send), its progress frames kept in `progress`, running `register` with the
    /// request's id before the line leaves: a watch's feed exists before any change for it can
    /// arrive.
    fn send_with(
        &self,
        request: Request,
        progress: Option<Arc<ProgressInbox>>,
        register: impl FnOnce(u64),
    ) -> Result<(u64, oneshot::Receiver<Reply>), Failure> {
        if self.inner.closed.is_closed() {
            return Err(transport(false, "the connection to the served surface is closed"));
        }
        let id = self.inner.next_id.fetch_add(1, Ordering::Relaxed);
        let (answer, rx) = oneshot::channel();
        lock(&self.inner.pending).insert(id, Waiter { answer, progress });
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
        heard: Option<(Arc<ProgressInbox>, ToolContext)>,
    ) -> Result<Result<Reply, oneshot::error::RecvError>, Failure> {
        let timeout = self.inner.call_timeout;
        let mut deadline = tokio::time::Instant::now() + timeout;
        let report = |heard: &Option<(Arc<ProgressInbox>, ToolContext)>| {
            let kept = heard.as_ref().and_then(|(inbox, ctx)| {
                let frames = inbox.take();
                (!frames.is_empty()).then(|| (frames, ctx.clone()))
            });
            async move {
                if let Some((frames, ctx)) = kept {
                    for p in frames {
                        ctx.report(p.progress, p.total, p.message).await;
                    }
                }
            }
        };
        loop {
            let progress = async {
                match &heard {
                    Some((inbox, _)) => inbox.heard().await,
                    None => std::future::pending().await,
                }
            };
            tokio::select! {
                answer = &mut rx => {
                    // Progress frames precede their answer on the wire: report what is kept.
                    report(&heard).await;
                    return Ok(answer);
                }
                () = progress => {
                    deadline = tokio::time::Instant::now() + timeout;
                    report(&heard).await;
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

    pub(super) async fn request(&self, request: Request) -> Result<Value, Failure> {
        let (id, rx) = self.send(request)?;
        self.answered(self.answer(id, rx).await?)
    }

    /// A call: its progress frames go to the calling context ([`ToolContext::current`]).
    async fn call(&self, request: Request) -> Result<Value, Failure> {
        let inbox = Arc::new(ProgressInbox::default());
        let (id, rx) = self.send_with(request, Some(inbox.clone()), |_| {})?;
        let heard = Some((inbox, ToolContext::current()));
        let answer = self.answer_reporting(id, rx, heard).await;
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
                None,
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
pub(super) struct Feed {
    pub(super) tx: mpsc::Sender<Change>,
    pub(super) missed: Arc<AtomicU64>,
}

impl Feed {
    /// Buffers `change` unless the consumer has fallen [`DialOptions::watch_buffer`](super::DialOptions::watch_buffer) behind:
    /// then it is counted instead (and so is every change until the consumer has drained the
    /// buffer and been told, with one [`Change::Lagged`], to re-read). Never blocks the
    /// connection's reader, which answers every other request too.
    pub(super) fn offer(&self, change: Change) {
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

#[cfg(test)]
mod tests {
    use super::*;

    fn frame(n: usize) -> Progress {
        Progress {
            progress: n as f64,
            total: None,
            message: None,
        }
    }

    #[test]
    fn a_calls_progress_inbox_keeps_at_most_its_bound_and_then_drops() {
        let inbox = ProgressInbox::default();
        for n in 0..PROGRESS_BUFFER + 5 {
            inbox.offer(frame(n));
        }
        let kept: Vec<f64> = inbox.take().into_iter().map(|p| p.progress).collect();
        assert_eq!(kept, (0..PROGRESS_BUFFER).map(|n| n as f64).collect::<Vec<_>>());
        // Once taken, there is room again.
        inbox.offer(frame(99));
        assert_eq!(inbox.take().len(), 1);
    }

    #[tokio::test(flavor = "current_thread")]
    async fn a_frame_kept_before_or_while_the_caller_waits_is_heard_once() {
        let inbox = Arc::new(ProgressInbox::default());
        inbox.offer(frame(1));
        tokio::time::timeout(Duration::from_secs(5), inbox.heard())
            .await
            .expect("a frame kept before the caller waits is heard at once");
        assert!(inbox.heard().now_or_never().is_none(), "heard once, not again");
        let offering = tokio::spawn({
            let inbox = inbox.clone();
            async move {
                tokio::task::yield_now().await;
                inbox.offer(frame(2));
            }
        });
        tokio::time::timeout(Duration::from_secs(5), inbox.heard())
            .await
            .expect("a frame kept while the caller waits wakes it");
        offering.await.unwrap();
        assert_eq!(inbox.take().len(), 2);
    }
}
