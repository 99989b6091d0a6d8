//! A stdio transport for rmcp's service loop — what `surface-runtime` hands rmcp for stdio and
//! for any `(AsyncRead, AsyncWrite)` pair instead of rmcp's `AsyncRwTransport` (see
//! BENCHMARKS.md). Against rmcp's transport:
//!
//! - method-first parsing: a `tools/call` line is parsed straight into
//!   `JsonRpcRequest<CallToolRequest>` (rmcp's own deserializer, `_meta` and all) instead of
//!   through the 22-variant untagged `ClientRequest`, which fails 13 variants first, each
//!   building a formatted serde error; every other line takes rmcp's generic parse;
//! - batched writes: `send` serializes on the caller's task straight into the connection's
//!   write buffer (`mcp/write_buffer.rs`); one writer task writes everything buffered with one
//!   write, and while pipelined input stays ready `receive` lets it run after every
//!   `WRITE_AFTER` bytes of answers, so the client reads answers while the rest are worked on;
//! - bounded in flight: `receive` takes a permit per request and gives it back once the answer
//!   is *written* (or the request was cancelled while in flight), so a client that pipelines
//!   thousands of calls without reading cannot make the server buffer their answers. Only a
//!   request in flight gives a permit back: cancelling an unknown or answered id gives none,
//!   and a second request reusing an id in flight is refused. Answers to the server's own
//!   requests (asks) never take a permit, and while any ask awaits its answer input is read
//!   past the bound (up to the bound's worth of messages waiting their turn, requests beyond
//!   that refused with -32000): the answers that free the calls are always reached;
//! - every line that is not a notification is answered: a line that is not JSON gets -32700
//!   with `"id": null`; JSON that is not a JSON-RPC request gets -32600, carrying the request's
//!   `id` whenever it had a usable one; valid JSON serde cannot hold (a number like `1e400`,
//!   nesting deeper than 128) gets -32700 with its `id`; a line over [`Limits::max_line`] bytes
//!   gets -32600 with its `id` when the id came before the cut. An answer to one of the
//!   server's own requests that cannot be read (`{"id":3,"error":{"code":"x"}}`) is no request:
//!   it is handed to rmcp as an error answer to that id, so the ask waiting on it fails at once.
//!   [`decode_line`](super::jsonrpc::decode_line) decides all of it and is a pure function
//!   (fuzzed; the connection's [`MetaMemo`] only spares reading again a `_meta` it has seen);
//! - no answer is lost at EOF: at the end of input, `receive` reports the end only once every
//!   request in flight has been answered (long-lived `subscriptions/listen` streams excepted),
//!   and `close` waits for the writer as long as it makes progress — a slow reader gets every
//!   answer whole; only a writer stalled for [`Limits::close_stall`] is abandoned.
//!
//! - a graceful shutdown ([`FastTransport::with_drain`], the rule of `crate::drain`): when its
//!   token fires, input is no longer read, requests read but not yet started are refused
//!   (-32000, the server is shutting down), and the end is reported once every request in
//!   flight — a listen stream too, which the session ends with its final result — is answered,
//!   or the drain timeout has passed: then the connection's token is cancelled, and with it
//!   whatever still runs. `close` then flushes what was answered, as at EOF.
//!
//! - requests a [`Bypass`] takes (the session's plain requests, `mcp/stdio_bypass.rs`) are answered
//!   off rmcp's service loop, their answers written straight to the writer, under the same
//!   permit, duplicate-id and cancellation rules as the loop's requests: on a current-thread
//!   runtime (where `serve_stdio` serves) the answer is polled once as the request is taken,
//!   and one ready then (a call that does not wait) is written at once; any other runs on a
//!   task of its own.
//!
//! Kept from `AsyncRwTransport`: a UTF-8 BOM and a trailing CR are stripped, empty lines
//! skipped. The benchmarks serve rmcp alone on this transport through `mcp::__transport`.
//!
//! Lines are decoded by the codec in `mcp/jsonrpc.rs`. What stays here is one piece, longer
//! than most files: reading, the table of requests in flight and the writer keep one set of
//! rules together (a permit per request, given back only when its answer is written; an id in
//! flight once; the end reported only when every answer is out), and split apart each file
//! would hold half of each rule.

use super::jsonrpc::{Decoded, INVALID_REQUEST, UTF8_BOM, decode_line_in, error_answer, outline};
use super::meta_memo::MetaMemo;
use super::write_buffer::WriteBuffer;
use crate::batch::{Written, write_from};
use rmcp::RoleServer;
use rmcp::model::{
    ClientJsonRpcMessage, ClientNotification, ClientRequest, JsonRpcMessage, JsonRpcRequest, RequestId,
    ServerJsonRpcMessage, ServerNotification,
};
use rmcp::transport::Transport;
use std::collections::{HashMap, HashSet, VecDeque};
use std::future::Future;
use std::io;
use std::pin::Pin;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{Duration, Instant};
use tokio::io::{AsyncRead, AsyncReadExt, AsyncWrite};
use tokio::sync::{Notify, Semaphore};
use tokio::task::JoinHandle;
use tokio_util::sync::CancellationToken;

/// How many bytes of answers `receive` puts in the write buffer, while input stays ready,
/// before it lets the writer run: half a Linux pipe's default capacity. Left until input ran
/// dry, a pipelining client got a whole read's answers at once (and sent nothing meanwhile),
/// so the server then waited for it; written as they come, the client reads the first answers
/// while the server works on the rest (bench/NOTES.md has the measurements).
const WRITE_AFTER: u64 = 32 * 1024;

/// Requests one connection may have in flight by default (received, answer not yet written).
///
/// Room for slow calls to run side by side, while a client that pipelines without reading
/// cannot make the server hold more answers than this; `bench/NOTES.md` ("In-flight bound")
/// has the measurement it was chosen from.
pub const MAX_IN_FLIGHT: usize = 512;
/// The longest line read by default; a longer one is answered -32600 and skipped.
pub const MAX_LINE: usize = 16 * 1024 * 1024;

/// The bounds of one connection.
#[derive(Clone, Copy, Debug)]
pub struct Limits {
    /// Requests in flight (received, answer not yet written); at least 1.
    pub in_flight: usize,
    /// The longest line, in bytes, newline excluded.
    pub max_line: usize,
    /// How long `close` waits for a writer that makes no progress.
    pub close_stall: Duration,
    /// How long a graceful shutdown waits for the requests in flight
    /// ([`crate::drain`]'s rule).
    pub drain_timeout: Duration,
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            in_flight: MAX_IN_FLIGHT,
            max_line: MAX_LINE,
            close_stall: CLOSE_STALL,
            drain_timeout: crate::drain::DEFAULT_DRAIN_TIMEOUT,
        }
    }
}
/// How long `close` lets a writer make no progress, by default, before abandoning the answers
/// still queued (a reader that never reads again, with its end of the pipe open).
pub const CLOSE_STALL: Duration = Duration::from_secs(30);
/// JSON-RPC's implementation-defined server error: a request read past the in-flight bound
/// only to reach the answers behind it.
const SERVER_BUSY: i32 = super::jsonrpc::SERVER_ERROR;

/// A request a [`Bypass`] answers: its answer to come, and how to cancel it (rmcp's
/// cancellation: the call's token is cancelled, and its answer is never written).
pub(crate) struct Taken {
    pub(crate) answer: Pin<Box<dyn Future<Output = ServerJsonRpcMessage> + Send>>,
    pub(crate) cancel: CancellationToken,
}

/// Answers some requests itself instead of handing them to rmcp's service loop.
pub(crate) trait Bypass: Send + Sync {
    /// Takes `request` to answer it, or hands it back for rmcp's loop.
    #[allow(clippy::result_large_err)] // handed back by value, as rmcp's loop takes it
    fn take(&self, request: JsonRpcRequest<ClientRequest>) -> Result<Taken, JsonRpcRequest<ClientRequest>>;

    /// The token a taken call's `cancel` follows once the call waits (the connection's), when
    /// `cancel` is not made its child: a call answered in its first poll never links to it.
    fn follows(&self) -> Option<&CancellationToken> {
        None
    }

    /// The connection's memory of its client's `_meta`, which lines are read with.
    fn metas(&self) -> Option<&MetaMemo> {
        None
    }
}

/// The requests in flight by id. foldhash rather than SipHash: each call hashes its id four
/// times, and the table is bounded by the in-flight bound, so a peer choosing colliding ids
/// can slow only its own few hundred entries.
type Slots = HashMap<RequestId, Slot, foldhash::fast::RandomState>;

/// A request received and not yet answered.
enum Slot {
    /// In rmcp's loop; whether it is a listen stream (EOF does not wait for those).
    Loop { listen: bool },
    /// Answered by the [`Bypass`]: which taking it is (an id is free again once cancelled,
    /// so a later request may hold it while the cancelled call still winds down), and its
    /// cancellation.
    Bypass { serial: u64, cancel: CancellationToken },
}

/// The requests in flight, shared with the tasks answering directly.
#[derive(Default)]
struct InFlight {
    slots: Mutex<Slots>,
    /// The serial of the next direct taking.
    serials: AtomicU64,
    /// A direct answer is done: an end of input waiting for it looks again.
    done: Notify,
}

impl InFlight {
    fn slots(&self) -> MutexGuard<'_, Slots> {
        crate::sync::lock(&self.slots)
    }

    /// Takes the slot of the direct taking `serial` of `id`: false when it is gone
    /// (cancelled) or `id` now names a later request.
    fn take_bypassed(&self, id: &RequestId, serial: u64) -> bool {
        let mut slots = self.slots();
        match slots.get(id) {
            Some(Slot::Bypass { serial: held, .. }) if *held == serial => {
                slots.remove(id);
                true
            }
            _ => false,
        }
    }
}

/// The stdio transport over `reader` and a writer: the module doc says what it adds to rmcp's.
///
/// `receive` is cancel-safe (rmcp's loop selects on it): bytes read stay in `buf`, a parsed
/// message waiting for its permit stays in `parked`, owed error answers stay in `owed`.
pub struct FastTransport<R> {
    reader: R,
    buf: Vec<u8>,
    start: usize,
    /// Dropping the rest of an oversized line.
    skipping: bool,
    eof: bool,
    /// Messages read, in order, behind a request waiting for its permit: one, or up to the
    /// in-flight bound while the server waits for answers to its own requests.
    parked: VecDeque<Box<ClientJsonRpcMessage>>,
    /// The server's own requests (asks) awaiting the client's answer: while there are any,
    /// input is read past the in-flight bound, so the answers that free calls are reached.
    asking: HashSet<RequestId>,
    /// How many messages may wait in `parked` and `owed` together (the in-flight bound).
    park: usize,
    /// The input has ended (what is parked is still served).
    input_done: bool,
    /// Error answers the transport owes, each waiting for a permit.
    owed: VecDeque<Vec<u8>>,
    /// Requests received and not yet answered.
    in_flight: Arc<InFlight>,
    bypass: Option<Box<dyn Bypass>>,
    /// Serving on a current-thread runtime, where a direct answer's task would run on this
    /// thread anyway: a direct answer is polled once as it is taken, and one ready then is
    /// written without a task or a place in the table of requests in flight.
    inline: bool,
    /// What starts a graceful shutdown, and what it cancels when the drain timeout passes.
    drain: Option<(CancellationToken, CancellationToken)>,
    /// Set when the shutdown started: until when its end waits for the requests in flight.
    draining_until: Option<Instant>,
    drain_timeout: Duration,
    max_line: usize,
    close_stall: Duration,
    /// Answers and notifications, in the order sent, until the writer takes them.
    buffer: Arc<WriteBuffer>,
    /// `close` has begun: nothing more is written (the buffer refuses it; this spares a direct
    /// call that could not be written at all).
    closing: bool,
    writer: Option<JoinHandle<()>>,
    written: Arc<AtomicU64>,
    permits: Arc<Semaphore>,
    /// When the write buffer's [`put_so_far`](WriteBuffer::put_so_far) reaches this,
    /// `receive` lets the writer run ([`WRITE_AFTER`]).
    write_at: u64,
}

impl<R: AsyncRead + Send + Unpin + 'static> FastTransport<R> {
    /// Reads requests from `reader` and writes answers to `writer`, within `limits`.
    pub fn new<W: AsyncWrite + Send + Unpin + 'static>(reader: R, writer: W, limits: Limits) -> Self {
        // Unbounded, yet bounded: every answer holds a permit until written, and notifications
        // are debounced per subscription, whose number is capped per session.
        let buffer = Arc::new(WriteBuffer::default());
        // No permit at all would read nothing, ever.
        let permits = Arc::new(Semaphore::new(limits.in_flight.max(1)));
        let written = Arc::new(AtomicU64::new(0));
        FastTransport {
            reader,
            buf: Vec::with_capacity(64 * 1024),
            start: 0,
            skipping: false,
            eof: false,
            parked: VecDeque::new(),
            asking: HashSet::new(),
            park: limits.in_flight.max(1),
            input_done: false,
            owed: VecDeque::new(),
            in_flight: Arc::default(),
            bypass: None,
            inline: tokio::runtime::Handle::try_current()
                .is_ok_and(|h| h.runtime_flavor() == tokio::runtime::RuntimeFlavor::CurrentThread),
            drain: None,
            draining_until: None,
            drain_timeout: limits.drain_timeout,
            max_line: limits.max_line,
            close_stall: limits.close_stall,
            buffer: buffer.clone(),
            closing: false,
            writer: Some(tokio::spawn(write_lines(
                buffer,
                writer,
                permits.clone(),
                written.clone(),
            ))),
            written,
            permits,
            write_at: WRITE_AFTER,
        }
    }

    /// Answers the requests `direct` takes off rmcp's loop.
    pub(crate) fn with_bypass(mut self, bypass: Box<dyn Bypass>) -> Self {
        self.bypass = Some(bypass);
        self
    }

    /// Shuts down gracefully when `draining` is cancelled (the module doc says how); when the
    /// drain timeout passes first, cancels `connection` (rmcp's loop and every request in it).
    pub(crate) fn with_drain(mut self, draining: CancellationToken, connection: CancellationToken) -> Self {
        self.drain = Some((draining, connection));
        self
    }

    /// The shutdown has started: read no more, and refuse what was read but not started.
    fn start_draining(&mut self) {
        self.input_done = true;
        self.draining_until = Some(Instant::now() + self.drain_timeout);
        let mut kept = VecDeque::new();
        for message in std::mem::take(&mut self.parked) {
            match &*message {
                JsonRpcMessage::Request(r) => {
                    let id = serde_json::to_vec(&r.id).ok();
                    self.owed.push_back(error_answer(
                        id.as_deref(),
                        SERVER_BUSY,
                        &format!("surface-mcp: {}", crate::drain::REFUSAL),
                    ));
                }
                _ => kept.push_back(message),
            }
        }
        self.parked = kept;
    }

    /// Answers `request` when the direct path takes it — at once if its answer is ready when
    /// first polled with `cx` (on a current-thread runtime), else on a task of its own; hands
    /// it back otherwise. Its permit is held already.
    fn answer_directly(
        &mut self,
        request: Box<ClientJsonRpcMessage>,
        cx: &mut std::task::Context<'_>,
    ) -> Option<JsonRpcRequest<ClientRequest>> {
        let JsonRpcMessage::Request(request) = *request else {
            unreachable!("only a request is answered")
        };
        let Some(bypass) = &self.bypass else {
            return Some(request);
        };
        let id = request.id.clone();
        let mut taken = match bypass.take(request) {
            Ok(taken) => taken,
            Err(request) => return Some(request),
        };
        if self.closing {
            // Nothing will be written; the permit goes back.
            self.permits.add_permits(1);
            return None;
        }
        // Polled here, a call that does not wait answers without a task, a table entry or a
        // wake-up; one that waits goes on in its task, which polls it (and registers its own
        // waker) when it starts.
        if self.inline
            && let std::task::Poll::Ready(answer) = taken.answer.as_mut().poll(cx)
        {
            deliver(&answer, &self.buffer, &self.permits);
            return None;
        }
        let buffer = self.buffer.clone();
        let Taken { answer, cancel } = taken;
        let follows = bypass
            .follows()
            .map(|connection| (connection.clone(), cancel.clone()));
        let serial = self.in_flight.serials.fetch_add(1, Ordering::Relaxed);
        self.in_flight
            .slots()
            .insert(id.clone(), Slot::Bypass { serial, cancel });
        let (in_flight, permits) = (self.in_flight.clone(), self.permits.clone());
        tokio::spawn(async move {
            let answer = match follows {
                Some((connection, call)) => super::cancel::following(answer, &call, &connection).await,
                None => answer.await,
            };
            // Gone from the table, or the id held by a later request: cancelled, its permit
            // already back and its answer dropped, as rmcp drops a cancelled request's.
            if in_flight.take_bypassed(&id, serial) {
                deliver(&answer, &buffer, &permits);
            }
            in_flight.done.notify_one();
        });
        None
    }
}

/// Queues a direct answer for the writer, under its request's permit (given back at once if it
/// cannot be written).
fn deliver(answer: &ServerJsonRpcMessage, buffer: &WriteBuffer, permits: &Semaphore) {
    if buffer.put(true, |bytes| line(answer, bytes)).is_err() {
        permits.add_permits(1);
    }
}

/// The writer's progress: bytes for `close`'s stall check, permits back once a batch is out.
struct Progress {
    permits: Arc<Semaphore>,
    written: Arc<AtomicU64>,
}

impl Written for Progress {
    fn bytes(&mut self, bytes: usize) {
        self.written.fetch_add(bytes as u64, Ordering::Relaxed);
    }
    fn batch(&mut self, credits: usize) {
        self.permits.add_permits(credits);
    }
}

async fn write_lines<W: AsyncWrite + Unpin>(
    buffer: Arc<WriteBuffer>,
    mut out: W,
    permits: Arc<Semaphore>,
    written: Arc<AtomicU64>,
) {
    let mut progress = Progress {
        permits: permits.clone(),
        written,
    };
    if write_from(&mut &*buffer, &mut out, &mut progress).await.is_err() {
        // Nobody reads any more: take no more lines, and end `receive` rather than let it wait
        // for permits.
        buffer.close();
        permits.close();
    }
}

/// Appends `item`'s line to `bytes`.
fn line(item: &ServerJsonRpcMessage, bytes: &mut Vec<u8>) -> io::Result<()> {
    super::encode::write_message(item, bytes).map_err(io::Error::other)?;
    bytes.push(b'\n');
    Ok(())
}

impl<R: AsyncRead + Send + Unpin> FastTransport<R> {
    /// The next complete line's decoding, reading as needed; `None` at the end of input.
    async fn next_line(&mut self) -> Option<Decoded> {
        loop {
            if let Some(decoded) = self.buffered_line() {
                return Some(decoded);
            }
            self.buf.drain(..self.start);
            self.start = 0;
            if self.eof {
                // A last line without its newline still counts.
                let rest = std::mem::take(&mut self.buf);
                if std::mem::take(&mut self.skipping) || rest.is_empty() {
                    return None;
                }
                return Some(self.complete_line(&rest));
            }
            if self.buf.len() > self.max_line {
                // Too long: answer it (with its id, if the id came before the cut), drop
                // it and everything up to its newline.
                let answer = (!self.skipping).then(|| oversized(&self.buf, self.max_line));
                self.buf.clear();
                self.skipping = true;
                if let Some(answer) = answer {
                    return Some(answer);
                }
            }
            self.buf.reserve(64 * 1024);
            // read_buf is cancel-safe: bytes read are in `buf`, or nothing was read.
            match self.reader.read_buf(&mut self.buf).await {
                Ok(0) | Err(_) => self.eof = true,
                Ok(_) => {}
            }
        }
    }

    /// The next complete line already read, decoded; `None` when `buf` holds none.
    fn buffered_line(&mut self) -> Option<Decoded> {
        loop {
            let from = self.start;
            let end = from + memchr::memchr(b'\n', &self.buf[from..])?;
            self.start = end + 1;
            if std::mem::take(&mut self.skipping) {
                continue;
            }
            return Some(self.complete_line(&self.buf[from..end]));
        }
    }

    /// A complete line's decoding (the last one may end without its newline): refused when
    /// longer than the bound (a long line can arrive whole in one read, never waiting in `buf`
    /// unfinished), read otherwise.
    fn complete_line(&self, line: &[u8]) -> Decoded {
        if line.len() > self.max_line {
            return oversized(line, self.max_line);
        }
        decode_line_in(line, self.bypass.as_ref().and_then(|b| b.metas()))
    }
}

fn oversized(prefix: &[u8], max_line: usize) -> Decoded {
    let prefix = prefix.strip_prefix(UTF8_BOM).unwrap_or(prefix);
    Decoded::Refuse(error_answer(
        outline(prefix).id,
        INVALID_REQUEST,
        &format!("Invalid request: the line is longer than {max_line} bytes"),
    ))
}

impl<R: AsyncRead + Send + Unpin + 'static> FastTransport<R> {
    /// Takes a permit if one is free: `Some(false)` when none is, `None` once they are closed
    /// (nobody reads the answers any more).
    fn take_permit(&self) -> Option<bool> {
        match self.permits.try_acquire() {
            Ok(permit) => {
                permit.forget();
                Some(true)
            }
            Err(tokio::sync::TryAcquireError::NoPermits) => Some(false),
            Err(tokio::sync::TryAcquireError::Closed) => None,
        }
    }

    /// A line just read: its message [`arrived`](Self::arrived), or its error answer owed.
    fn took(&mut self, line: Decoded, full: bool) -> Option<ClientJsonRpcMessage> {
        match line {
            Decoded::Message(m) => self.arrived(m, full),
            Decoded::Ignore => None,
            Decoded::Refuse(answer) => {
                self.owed.push_back(answer);
                None
            }
        }
    }

    /// A message just read: an answer to the server's own request goes to rmcp at once
    /// (answered), a cancellation takes effect at once, anything else waits its turn. A
    /// request read past the bound (`full`: read only for the answers behind it) is refused.
    fn arrived(&mut self, message: Box<ClientJsonRpcMessage>, full: bool) -> Option<ClientJsonRpcMessage> {
        match &*message {
            JsonRpcMessage::Response(r) => {
                self.asking.remove(&r.id);
                return Some(*message);
            }
            JsonRpcMessage::Error(e) => {
                if let Some(id) = &e.id {
                    self.asking.remove(id);
                }
                return Some(*message);
            }
            // rmcp drops the answer of a request cancelled in flight: its permit comes back
            // now (a direct one's call is cancelled too). A request still waiting here is
            // dropped before it runs. An unknown or answered id gives nothing back.
            JsonRpcMessage::Notification(n) => {
                if let ClientNotification::CancelledNotification(c) = &n.notification
                    && let Some(id) = &c.params.request_id
                {
                    if let Some(slot) = self.in_flight.slots().remove(id) {
                        self.permits.add_permits(1);
                        if let Slot::Bypass { cancel, .. } = slot {
                            cancel.cancel();
                        }
                    }
                    self.parked
                        .retain(|m| !matches!(&**m, JsonRpcMessage::Request(r) if &r.id == id));
                }
            }
            JsonRpcMessage::Request(r) if full => {
                let id = serde_json::to_vec(&r.id).ok();
                self.owed.push_back(error_answer(
                    id.as_deref(),
                    SERVER_BUSY,
                    &format!(
                        "Server busy: {} requests are in flight and more are waiting while the server waits for answers to its own requests; send it again later",
                        self.park
                    ),
                ));
                return None;
            }
            JsonRpcMessage::Request(_) => {}
        }
        self.parked.push_back(message);
        None
    }

    /// The end of input: reported once every call in flight is answered, so rmcp's bounded
    /// drain never cuts one off. (An answer arriving cancels this wait in rmcp's select; the
    /// next `receive` looks again.) In a graceful shutdown the listen streams are waited for
    /// too (the session ends them with their final result), and only until the drain
    /// timeout: then the connection is cancelled.
    fn end(&self) -> impl Future<Output = Option<ClientJsonRpcMessage>> + Send + 'static {
        let in_flight = self.in_flight.clone();
        let until = self.draining_until;
        let timeout = self.drain_timeout;
        let drain = self.drain.clone();
        let answered = move |listens: bool| {
            let in_flight = in_flight.clone();
            async move {
                loop {
                    let waiting = in_flight
                        .slots()
                        .values()
                        .any(|slot| listens || !matches!(slot, Slot::Loop { listen: true }));
                    if !waiting {
                        return;
                    }
                    // A direct answer done wakes this; an answer from rmcp's loop cancels it.
                    in_flight.done.notified().await;
                }
            }
        };
        async move {
            let Some((draining, connection)) = drain else {
                answered(false).await;
                return None;
            };
            let until = match until {
                Some(until) => until,
                None => tokio::select! {
                    () = answered(false) => return None,
                    // A shutdown during the wait at the end of input bounds it as well.
                    () = draining.cancelled() => Instant::now() + timeout,
                },
            };
            if tokio::time::timeout_at(until.into(), answered(true))
                .await
                .is_err()
            {
                tracing::warn!(
                    "surface-mcp: the drain timeout passed with requests still in flight; cancelling them"
                );
                connection.cancel();
            }
            None
        }
    }
}

impl<R: AsyncRead + Send + Unpin + 'static> Transport<RoleServer> for FastTransport<R> {
    type Error = io::Error;

    fn send(
        &mut self,
        item: ServerJsonRpcMessage,
    ) -> impl Future<Output = Result<(), io::Error>> + Send + 'static {
        // Decided here, in the serve loop's order: an answer to a request in flight returns
        // its permit once written; any other message returns none.
        let id = match &item {
            JsonRpcMessage::Response(r) => Some(&r.id),
            JsonRpcMessage::Error(e) => e.id.as_ref(),
            _ => None,
        };
        let permit = id.is_some_and(|id| self.in_flight.slots().remove(id).is_some());
        match &item {
            JsonRpcMessage::Request(r) => {
                self.asking.insert(r.id.clone());
            }
            // rmcp gave up on one (its timeout): no answer is awaited any more.
            JsonRpcMessage::Notification(n) => {
                if let ServerNotification::CancelledNotification(c) = &n.notification
                    && let Some(id) = &c.params.request_id
                {
                    self.asking.remove(id);
                }
            }
            _ => {}
        }
        // Refused once `close` has begun (the buffer is closed then).
        let sent = self.buffer.put(permit, |bytes| line(&item, bytes));
        if sent.is_err() && permit {
            self.permits.add_permits(1);
        }
        std::future::ready(sent)
    }

    async fn receive(&mut self) -> Option<ClientJsonRpcMessage> {
        // Set when the last pass checked and then only read a line (parked or refused it):
        // nothing has run since that check (no await, no tool), so the next pass need not
        // check again (the token's check takes its mutex). A pass that skipped it never sets
        // it, so at most two lines are read per check.
        let mut drain_checked = false;
        loop {
            if self.buffer.put_so_far() >= self.write_at {
                // Answers taken from input that stays ready pile up until this task waits;
                // the writer (on this thread, or in this worker's next-task slot) runs then.
                tokio::task::yield_now().await;
                self.write_at = self.buffer.put_so_far() + WRITE_AFTER;
                // Anything may have run meanwhile: the drain token is looked at again.
                drain_checked = false;
            }
            let skip_drain_check = std::mem::take(&mut drain_checked);
            // Input that is always ready must not hide a shutdown.
            if !skip_drain_check
                && !self.input_done
                && self
                    .drain
                    .as_ref()
                    .is_some_and(|(draining, _)| draining.is_cancelled())
            {
                self.start_draining();
            }
            // What waits for a permit goes first, in order, as far as permits go.
            while !self.owed.is_empty() {
                if !self.take_permit()? {
                    break;
                }
                let owed = self.owed.pop_front()?;
                self.buffer
                    .put(true, |bytes| {
                        bytes.extend_from_slice(&owed);
                        Ok(())
                    })
                    .ok()?;
            }
            if let Some(front) = self.parked.front() {
                let JsonRpcMessage::Request(r) = &**front else {
                    return self.parked.pop_front().map(|message| *message);
                };
                if self.in_flight.slots().contains_key(&r.id) {
                    let id = serde_json::to_vec(&r.id).ok();
                    self.owed.push_back(error_answer(
                        id.as_deref(),
                        INVALID_REQUEST,
                        "Invalid request: a request with this id is already in flight",
                    ));
                    self.parked.pop_front();
                    continue;
                }
                if self.take_permit()? {
                    let r = self.parked.pop_front();
                    // Polled once with this task's context (the direct answer may be ready).
                    let mut request = r;
                    let handed_back = std::future::poll_fn(|cx| {
                        std::task::Poll::Ready(request.take().and_then(|r| self.answer_directly(r, cx)))
                    })
                    .await;
                    let Some(mut r) = handed_back else {
                        continue;
                    };
                    super::jsonrpc::settle_meta(&mut r.request);
                    let listen = matches!(r.request, ClientRequest::SubscriptionsListenRequest(_));
                    self.in_flight.slots().insert(r.id.clone(), Slot::Loop { listen });
                    return Some(JsonRpcMessage::Request(r));
                }
            }
            let waiting = !self.owed.is_empty() || !self.parked.is_empty();
            if !waiting && self.input_done {
                if self.draining_until.is_none()
                    && self
                        .drain
                        .as_ref()
                        .is_some_and(|(draining, _)| draining.is_cancelled())
                {
                    // Shut down after the end of input: the wait from now on is bounded too.
                    self.draining_until = Some(Instant::now() + self.drain_timeout);
                }
                return self.end().await;
            }
            // A line read already is taken as the select below would take it (with nothing
            // waiting, no branch before the line's is enabled), without building the select,
            // whose futures clone the permits' `Arc` and the drain token: locked instructions
            // at each clone and drop.
            if !waiting
                && !self.input_done
                && let Some(line) = self.buffered_line()
            {
                if let Some(m) = self.took(line, false) {
                    return Some(m);
                }
                drain_checked = !skip_drain_check;
                continue;
            }
            // At the bound input is not read — except while the server waits for answers to
            // its own requests: those answers free the calls that hold the permits, so not
            // reading them would wait forever. Then up to the bound's worth of messages wait
            // their turn, and requests past that are refused until room comes back.
            let queued = self.parked.len() + self.owed.len();
            let full = queued >= self.park;
            let read =
                !self.input_done && (queued == 0 || (!self.asking.is_empty() && queued < 2 * self.park));
            let permits = self.permits.clone();
            let draining = self.drain.as_ref().map(|(draining, _)| draining.clone());
            let drain_now = async {
                match &draining {
                    Some(draining) => draining.cancelled().await,
                    None => std::future::pending().await,
                }
            };
            tokio::select! {
                biased;
                // Cancel-safe: a permit not taken stays with the semaphore.
                got = permits.acquire(), if waiting => drop(got.ok()?),
                line = self.next_line(), if read => match line {
                    Some(line) => {
                        if let Some(m) = self.took(line, full) {
                            return Some(m);
                        }
                    }
                    None => self.input_done = true,
                },
                // Last: polled (its waker registered) only when nothing else is ready.
                () = drain_now, if !self.input_done => self.start_draining(),
                else => return None,
            }
        }
    }

    /// Stops taking answers and waits until the writer has written every queued one, as long
    /// as it makes progress.
    async fn close(&mut self) -> Result<(), io::Error> {
        self.closing = true;
        self.buffer.close();
        if let Some(mut writer) = self.writer.take() {
            let mut seen = self.written.load(Ordering::Relaxed);
            while tokio::time::timeout(self.close_stall, &mut writer).await.is_err() {
                let now = self.written.load(Ordering::Relaxed);
                if now == seen {
                    writer.abort();
                    break;
                }
                seen = now;
            }
        }
        Ok(())
    }
}

/// A transport dropped without `close` (its loop gone) lets its writer end too, once it has
/// written what it holds: its peer sees the end of the stream.
impl<R> Drop for FastTransport<R> {
    fn drop(&mut self) {
        self.buffer.close();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use tokio::io::{AsyncBufReadExt, AsyncWriteExt};

    /// Answers each request it takes once its gate opens, naming which taking it was.
    struct Gated(Mutex<Vec<tokio::sync::oneshot::Receiver<()>>>);

    impl Bypass for Gated {
        fn take(
            &self,
            request: JsonRpcRequest<ClientRequest>,
        ) -> Result<Taken, JsonRpcRequest<ClientRequest>> {
            let mut gates = self.0.lock().unwrap();
            let taking = 3 - gates.len();
            let gate = gates.remove(0);
            let id = request.id;
            Ok(Taken {
                answer: Box::pin(async move {
                    let _ = gate.await;
                    let error = rmcp::model::ErrorData::internal_error(format!("taking {taking}"), None);
                    ServerJsonRpcMessage::error(error, Some(id))
                }),
                cancel: CancellationToken::new(),
            })
        }
    }

    #[tokio::test]
    async fn a_cancelled_direct_call_ending_late_never_answers_for_the_request_reusing_its_id() {
        let (first, open_first) = tokio::sync::oneshot::channel();
        let (second, open_second) = tokio::sync::oneshot::channel();
        let (client, server) = tokio::io::duplex(64 * 1024);
        let (server_read, server_write) = tokio::io::split(server);
        let (client_read, mut client_write) = tokio::io::split(client);
        let mut transport = FastTransport::new(server_read, server_write, Limits::default())
            .with_bypass(Box::new(Gated(Mutex::new(vec![open_first, open_second]))));
        let reader = tokio::spawn(async move { while transport.receive().await.is_some() {} });
        let ping = br#"{"jsonrpc":"2.0","id":2,"method":"ping"}
"#;
        client_write.write_all(ping).await.unwrap();
        client_write
            .write_all(b"{\"jsonrpc\":\"2.0\",\"method\":\"notifications/cancelled\",\"params\":{\"requestId\":2}}\n")
            .await
            .unwrap();
        client_write.write_all(ping).await.unwrap();
        // Both taken (the second only once the first's id was free) before either ends.
        tokio::time::sleep(Duration::from_millis(50)).await;
        first.send(()).unwrap();
        tokio::time::sleep(Duration::from_millis(50)).await;
        second.send(()).unwrap();
        let mut lines = tokio::io::BufReader::new(client_read).lines();
        let answer = tokio::time::timeout(Duration::from_secs(5), lines.next_line())
            .await
            .unwrap()
            .unwrap()
            .unwrap();
        assert!(answer.contains("taking 2"), "{answer}");
        client_write.shutdown().await.unwrap();
        let rest = tokio::time::timeout(Duration::from_secs(5), async {
            reader.await.unwrap();
            lines.next_line().await.unwrap()
        });
        assert_eq!(
            rest.await.expect("the transport ends"),
            None,
            "nothing more was written"
        );
    }

    /// Answers every request at once, as a call that does not wait is answered.
    struct AtOnce;

    impl Bypass for AtOnce {
        fn take(
            &self,
            request: JsonRpcRequest<ClientRequest>,
        ) -> Result<Taken, JsonRpcRequest<ClientRequest>> {
            let answer = ServerJsonRpcMessage::response(rmcp::model::ServerResult::empty(()), request.id);
            Ok(Taken {
                answer: Box::pin(std::future::ready(answer)),
                cancel: CancellationToken::new(),
            })
        }
    }

    /// Input that is always ready, counting the bytes it has handed out.
    struct Ready {
        input: Vec<u8>,
        at: Arc<std::sync::atomic::AtomicUsize>,
    }

    impl AsyncRead for Ready {
        fn poll_read(
            self: Pin<&mut Self>,
            _: &mut std::task::Context<'_>,
            buf: &mut tokio::io::ReadBuf<'_>,
        ) -> std::task::Poll<io::Result<()>> {
            let at = self.at.load(Ordering::Relaxed);
            let n = buf.remaining().min(self.input.len() - at);
            buf.put_slice(&self.input[at..at + n]);
            self.at.store(at + n, Ordering::Relaxed);
            std::task::Poll::Ready(Ok(()))
        }
    }

    /// Output that notes how much input had been read at its first write.
    struct Noting {
        read: Arc<std::sync::atomic::AtomicUsize>,
        read_at_first_write: Arc<Mutex<Option<usize>>>,
        lines: Arc<Mutex<Vec<u8>>>,
    }

    impl AsyncWrite for Noting {
        fn poll_write(
            self: Pin<&mut Self>,
            _: &mut std::task::Context<'_>,
            bytes: &[u8],
        ) -> std::task::Poll<io::Result<usize>> {
            let read = self.read.load(Ordering::Relaxed);
            self.read_at_first_write.lock().unwrap().get_or_insert(read);
            self.lines.lock().unwrap().extend_from_slice(bytes);
            std::task::Poll::Ready(Ok(bytes.len()))
        }
        fn poll_flush(
            self: Pin<&mut Self>,
            _: &mut std::task::Context<'_>,
        ) -> std::task::Poll<io::Result<()>> {
            std::task::Poll::Ready(Ok(()))
        }
        fn poll_shutdown(
            self: Pin<&mut Self>,
            _: &mut std::task::Context<'_>,
        ) -> std::task::Poll<io::Result<()>> {
            std::task::Poll::Ready(Ok(()))
        }
    }

    #[tokio::test]
    async fn answers_are_written_while_pipelined_input_is_still_being_read() {
        const CALLS: usize = 4_000;
        let input: Vec<u8> = (0..CALLS)
            .flat_map(|id| format!("{{\"jsonrpc\":\"2.0\",\"id\":{id},\"method\":\"ping\"}}\n").into_bytes())
            .collect();
        let total = input.len();
        let read = Arc::new(std::sync::atomic::AtomicUsize::new(0));
        let read_at_first_write = Arc::new(Mutex::new(None));
        let lines = Arc::new(Mutex::new(Vec::new()));
        let output = Noting {
            read: read.clone(),
            read_at_first_write: read_at_first_write.clone(),
            lines: lines.clone(),
        };
        let limits = Limits {
            in_flight: 2 * CALLS,
            ..Limits::default()
        };
        let mut transport =
            FastTransport::new(Ready { input, at: read }, output, limits).with_bypass(Box::new(AtOnce));
        let served = async {
            while transport.receive().await.is_some() {}
            Transport::close(&mut transport).await.unwrap();
        };
        tokio::time::timeout(Duration::from_secs(10), served)
            .await
            .expect("the transport ends with its input");
        let first = read_at_first_write.lock().unwrap().expect("answers were written");
        assert!(
            first < total / 2,
            "the first answers went out after {first} of {total} bytes of requests were read"
        );
        let lines = lines.lock().unwrap();
        let ids: Vec<u64> = lines
            .split(|b| *b == b'\n')
            .filter(|line| !line.is_empty())
            .map(|line| {
                serde_json::from_slice::<serde_json::Value>(line).unwrap()["id"]
                    .as_u64()
                    .unwrap()
            })
            .collect();
        assert_eq!(
            ids,
            (0..CALLS as u64).collect::<Vec<_>>(),
            "every answer, in order"
        );
    }

    /// What `receive` hands on for `input` (the input then ends; each request handed on is
    /// answered with an empty result), and every line written.
    async fn served_to_the_end(input: &[u8], limits: Limits) -> (Vec<ClientJsonRpcMessage>, Vec<String>) {
        let (client, server) = tokio::io::duplex(64 * 1024);
        let (server_read, server_write) = tokio::io::split(server);
        let (client_read, mut client_write) = tokio::io::split(client);
        let mut transport = FastTransport::new(server_read, server_write, limits);
        client_write.write_all(input).await.unwrap();
        client_write.shutdown().await.unwrap();
        let mut handed = Vec::new();
        let receiving = async {
            while let Some(message) = transport.receive().await {
                if let JsonRpcMessage::Request(r) = &message {
                    let answer =
                        ServerJsonRpcMessage::response(rmcp::model::ServerResult::empty(()), r.id.clone());
                    transport.send(answer).await.unwrap();
                }
                handed.push(message);
            }
            Transport::close(&mut transport).await.unwrap();
        };
        tokio::time::timeout(Duration::from_secs(5), receiving)
            .await
            .expect("the transport ends with its input");
        drop(transport);
        let mut lines = tokio::io::BufReader::new(client_read).lines();
        let mut written = Vec::new();
        while let Some(line) = lines.next_line().await.unwrap() {
            written.push(line);
        }
        (handed, written)
    }

    #[tokio::test]
    async fn a_last_line_without_its_newline_is_read_and_held_to_the_line_limit() {
        let (handed, written) =
            served_to_the_end(br#"{"jsonrpc":"2.0","id":7,"method":"ping"}"#, Limits::default()).await;
        match handed.as_slice() {
            [JsonRpcMessage::Request(r)] => assert_eq!(r.id, RequestId::Number(7)),
            other => panic!("the last line was not handed on: {other:?}"),
        }
        assert_eq!(
            written,
            [r#"{"jsonrpc":"2.0","id":7,"result":{}}"#],
            "its answer, and nothing else"
        );

        let long = format!(
            r#"{{"jsonrpc":"2.0","id":8,"method":"ping","params":{{"pad":"{}"}}}}"#,
            "a".repeat(100)
        );
        let limits = Limits {
            max_line: 64,
            ..Limits::default()
        };
        let (handed, written) = served_to_the_end(long.as_bytes(), limits).await;
        assert!(handed.is_empty(), "{handed:?}");
        let [refusal] = written.as_slice() else {
            panic!("one refusal, not {written:?}");
        };
        let refusal: serde_json::Value = serde_json::from_str(refusal).unwrap();
        assert_eq!(refusal["id"], 8, "{refusal}");
        assert_eq!(refusal["error"]["code"], -32600, "{refusal}");
        let message = refusal["error"]["message"].as_str().unwrap();
        assert!(message.contains("longer than 64 bytes"), "{message}");
    }
}
