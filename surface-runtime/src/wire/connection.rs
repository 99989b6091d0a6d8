//! One wire connection served: its frames read in order, its calls run under the in-flight
//! bound, its answers and watch changes written by one writer, and its part in a graceful
//! shutdown ([`Stopping`]).

use super::batches::write_batches;
use super::options::WireOptions;
use super::protocol::{
    Hello, MAX_FRAME, Progress, Reach, Reply, ReplyFrame, Request, RequestFrame, WIRE_VERSION,
};
use crate::Principal;
use crate::audit::Audited;
use crate::batch::BATCH;
use crate::context::{LogLevel, Reporter, ToolContext};
use crate::expose::{ErasedExpose, Exposure};
use crate::failure::{Failure, FailureKind, panicked};
use crate::layer::CallInfo;
use crate::surface::Surface;
use crate::sync::lock;
use futures::future::BoxFuture;
use futures::{FutureExt, StreamExt};
use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::task::Poll;
use std::time::Duration;
use tokio::io::{AsyncRead, AsyncWrite};
use tokio::sync::{OwnedSemaphorePermit, Semaphore, mpsc};
use tokio::task::JoinHandle;
use tokio_util::codec::{FramedRead, LinesCodec};
use tokio_util::sync::CancellationToken;

/// What a graceful shutdown of a served wire face tells its connections.
#[derive(Clone)]
pub(super) struct Stopping {
    /// The calls owed an answer, on every connection.
    pub(super) calls: Arc<crate::drain::Drain>,
    /// The connections still open (each writing its last answers).
    pub(super) connections: Arc<crate::drain::Drain>,
    /// Cancelled once the calls are answered (or the drain timeout passed): each connection
    /// ends its watches with a final frame, drops the calls still running, flushes and closes.
    pub(super) closing: CancellationToken,
    pub(super) timeout: Duration,
}

impl Stopping {
    pub(super) fn new(timeout: Duration) -> Stopping {
        Stopping {
            calls: Arc::default(),
            connections: Arc::default(),
            closing: CancellationToken::new(),
            timeout,
        }
    }
}

fn hidden(surface: &str, what: &str, name: &str) -> Failure {
    // An unexposed name answers exactly like a name the surface never had.
    Failure::new(
        FailureKind::Unknown,
        format!("{surface} has no {what} \"{name}\""),
    )
}

/// Appends the line for `frame` to `batch`, or, when it would exceed [`MAX_FRAME`] (which the
/// peer's decoder refuses, dropping the whole connection), an error frame answering the same
/// request. Written in place: a `String` of its own cost an allocation and a copy a frame.
fn encode_into(frame: &ReplyFrame, batch: &mut Vec<u8>) {
    let start = batch.len();
    if serde_json::to_writer(&mut *batch, frame).is_err() {
        batch.truncate(start);
        return;
    }
    let len = batch.len() - start;
    if len > MAX_FRAME {
        batch.truncate(start);
        let what = match frame.reply {
            Reply::Change(_) => "a change on this watch",
            _ => "the answer to this request",
        };
        let refusal = ReplyFrame {
            id: frame.id,
            reply: Reply::Err(Failure::new(
                FailureKind::Error,
                format!(
                    "{what} was too large to send: {len} bytes, over the wire's limit of {MAX_FRAME} bytes — ask for less (one item rather than the whole member)"
                ),
            )),
        };
        if serde_json::to_writer(&mut *batch, &refusal).is_err() {
            batch.truncate(start);
            return;
        }
    }
    batch.push(b'\n');
}

type Watches = Arc<Mutex<HashMap<u64, JoinHandle<()>>>>;

/// What a call read from the connection holds until its reply is queued: its place in the
/// shutdown's count and its in-flight permit.
struct Owed {
    id: u64,
    _flight: crate::drain::Flight,
    _permit: OwnedSemaphorePermit,
}

impl Owed {
    /// Runs `answered` on a task of its own and queues its reply on `tx`; a shutdown past its
    /// drain timeout (`calls`) drops the call instead, as a cancelled MCP call is.
    fn answer_on_task(
        self,
        answered: impl Future<Output = Option<Reply>> + Send + 'static,
        tx: mpsc::Sender<ReplyFrame>,
        calls: CancellationToken,
    ) {
        tokio::spawn(async move {
            tokio::select! {
                reply = answered => {
                    if let Some(reply) = reply {
                        let _ = tx.send(ReplyFrame { id: self.id, reply }).await;
                    }
                }
                _ = calls.cancelled() => {}
            }
            // Owed no more: the flight and the permit go with `self`.
            drop(self);
        });
    }
}

/// Queues `frame` for the writer: at once when the queue has room, else waiting for room
/// until the connection is gone (`Err` then).
async fn queue(tx: &mpsc::Sender<ReplyFrame>, frame: ReplyFrame, gone: &CancellationToken) -> Result<(), ()> {
    let frame = match tx.try_send(frame) {
        Ok(()) => return Ok(()),
        Err(mpsc::error::TrySendError::Closed(_)) => return Err(()),
        Err(mpsc::error::TrySendError::Full(frame)) => frame,
    };
    tokio::select! {
        sent = tx.send(frame) => sent.map_err(drop),
        () = gone.cancelled() => Err(()),
    }
}

pub(super) async fn serve_connection<S, R, W>(
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
    // Fires when the writer fails (nobody reads the answers any more) or a shutdown closes the
    // connection: either way, stop reading requests. One token, so the reader checks once.
    let gone = stopping.closing.child_token();
    let writer_gone = gone.clone();
    let writer_task = tokio::spawn(async move {
        let _gone = writer_gone.drop_guard();
        let mut writer = writer;
        // A reply too large to send is turned into a refusal by `encode_into`.
        let line = |frame: ReplyFrame, batch: &mut Vec<u8>| {
            encode_into(&frame, batch);
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
    let inline =
        tokio::runtime::Handle::current().runtime_flavor() == tokio::runtime::RuntimeFlavor::CurrentThread;
    loop {
        // A permit before reading: with `max_in_flight` requests running, the socket is not
        // read until one of them has queued its answer.
        // A free permit and a line already read are taken without a select: its `cancelled()`
        // registers with the token under its lock and leaves it again, every frame. Checked
        // first, so input that is always ready cannot hide the end.
        if gone.is_cancelled() {
            break;
        }
        let permit = match permits.clone().try_acquire_owned() {
            Ok(permit) => permit,
            Err(_) => tokio::select! {
                permit = permits.clone().acquire_owned() => permit.expect("the semaphore is never closed"),
                _ = gone.cancelled() => break,
            },
        };
        let line = match lines.next().now_or_never() {
            Some(line) => line,
            None => tokio::select! {
                line = lines.next() => line,
                _ = gone.cancelled() => break,
            },
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
        // A handler that panics is answered with a failure saying so, not left unanswered.
        // Boxed here, also for a task: spawning moves its future several times, and a call's
        // is large (unboxed, the daemon's `memcpy` grew from ~1,200 to ~2,800 instructions a call).
        let mut answered = Box::pin(async move {
            std::panic::AssertUnwindSafe(handle(&surface, &connection, frame))
                .catch_unwind()
                .await
                .unwrap_or_else(|payload| Some(Reply::Err(panicked(payload.as_ref()))))
        });
        let owed = Owed {
            id,
            _flight: flight,
            _permit: permit,
        };
        if !inline {
            // On a multi-thread runtime every call has its task: it may run on another worker
            // while this one reads on.
            owed.answer_on_task(answered, tx.clone(), calls.clone());
            continue;
        }
        // On a current-thread runtime its task would run on this thread anyway: the call is
        // polled here first, and one that does not wait is answered without a task.
        match std::future::poll_fn(|cx| Poll::Ready(answered.as_mut().poll(cx))).await {
            Poll::Ready(reply) => {
                if let Some(reply) = reply
                    && queue(&tx, ReplyFrame { id, reply }, &gone).await.is_err()
                {
                    break;
                }
                drop(owed);
            }
            Poll::Pending => owed.answer_on_task(answered, tx.clone(), calls.clone()),
        }
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
