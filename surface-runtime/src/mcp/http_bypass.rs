//! The Streamable HTTP hot path: the `POST`s that only ask for an answer, answered by the
//! handler directly instead of through rmcp's per-request machinery.
//!
//! rmcp's `StreamableHttpService` serves every request through a service loop: a stateless
//! 2026-07-28 request gets a loop of its own (two spawns, a one-shot transport, an SSE stream
//! for a single message), and a request in a legacy session crosses three channels to the
//! session's worker and back. For a `tools/call` that the handler answers in microseconds, that
//! machinery is most of the cost. This module answers such a request itself with the same
//! handler dispatch rmcp's loop calls (the session front's, [`super::fast::dispatch`], so rmcp's
//! own checks of `_meta`, of the protocol version and of the request state still run) and an
//! `application/json` body, which Streamable HTTP allows for any `POST`.
//!
//! Only what cannot tell the difference takes this path; everything else goes to rmcp as
//! before, so lifecycle semantics stay rmcp's:
//!
//! - the method only asks for an answer ([`super::fast::answers_only`], the list the stdio
//!   path uses too);
//! - the request has no progress token (progress rides the request's own SSE stream), and a
//!   2026-07-28 request no `_meta` log level (its log messages ride it too);
//! - the headers pass the checks rmcp would make, judged conservatively: `Host` names an
//!   allowed host, no `Origin` (a browser's request goes to rmcp's Origin check), `Accept`
//!   names both media types plainly, `MCP-Protocol-Version` agrees with the body, and on
//!   2026-07-28 `Mcp-Method` / `Mcp-Name` match it exactly (an encoded or absent one goes to
//!   rmcp, which answers the mismatch);
//! - stateless: the request's `_meta` carries every key 2026-07-28 requires, for exactly that
//!   version, and there is no `Mcp-Session-Id`;
//! - legacy session: the session is one this server opened and rmcp still holds (shared
//!   through a Redis store or not: what a shared session persists for other instances is its
//!   standalone stream's events, and those still go out through its own peer; a session
//!   restored from the store goes to rmcp), and its client sent `notifications/initialized`.
//!   Its log messages go to the standalone `GET` stream through the session's own peer exactly
//!   as they do from rmcp's loop. When its client declared `elicitation`, `sampling` or
//!   `roots`, a call may ask it something: the answer is plain JSON until the call's first
//!   request to the host, which turns it into the call's own event stream
//!   ([`super::http_call_streams`]), as rmcp would have answered it.
//!
//! A legacy session's requests answered here are still messages to it: the session's idle
//! timer is reset through rmcp's worker at most every quarter of the timeout (and at least
//! every second), and `notifications/cancelled` for a request answered here cancels it (its
//! `POST` then ends with an empty event stream, as rmcp ends a cancelled request's stream).

use super::handler_context::HandlerContext;
use super::http_call_streams::CallStreams;
use super::http_headers::{HeaderChecks, MCP_PROTOCOL_VERSION, single, standard_headers_match};
use super::http_response::{Response, jsonrpc_body};
use super::served::Shared;
use super::session::{Handler, Session, SessionState};
use crate::sync::lock;
use bytes::Bytes;
use futures::future::Either;
use http_body_util::{BodyExt, Full};
use hyper::http::request::Parts;
use rmcp::RoleServer;
use rmcp::model::{
    ClientJsonRpcMessage, ClientNotification, ClientRequest, ErrorCode, JsonRpcRequest, ProtocolVersion,
    RequestId, ServerJsonRpcMessage, ServerResult,
};
use rmcp::service::RunningService;
use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, RwLock, Weak};
use std::task::Poll;
use std::time::{Duration, Instant};
use tokio_util::sync::CancellationToken;

pub(crate) use super::session::SessionSlot;

/// A session's requests in flight on this path by id, each under its taking's serial.
/// foldhash rather than SipHash (each call hashes its id three times): the ids are the
/// client's, but the table holds only its own session's calls, so colliding ids slow nobody
/// else.
type InFlight = HashMap<RequestId, (u64, CancellationToken), foldhash::fast::RandomState>;

/// The legacy sessions this path answers, by id. foldhash rather than SipHash (each call looks
/// its session up): the ids are the server's own random ones, so a client cannot choose keys
/// that collide.
type LiveSessions = HashMap<Arc<str>, Arc<Live>, foldhash::fast::RandomState>;

/// One legacy session this path may answer for.
struct Live {
    state: Weak<SessionState>,
    /// The client sent `notifications/initialized`.
    ready: AtomicBool,
    /// The client declared a capability a call may use to ask it something: its calls' requests
    /// to it ride their own streams.
    askable: bool,
    /// Requests answered here and not yet done, to cancel on `notifications/cancelled`; each
    /// under the serial of its taking, so a call that ends after its id was cancelled and
    /// taken again frees only its own slot, never the new request's.
    in_flight: Mutex<InFlight>,
    /// The serial of the next taking.
    serials: AtomicU64,
    /// When the session's worker last heard of it (ms since [`HttpBypass::epoch`]).
    touched: AtomicU64,
}

impl Live {
    /// Takes `id` for a call cancelled through `cancel`: its serial, or `None` when the id is
    /// already in flight.
    fn take(&self, id: &RequestId, cancel: &CancellationToken) -> Option<u64> {
        match lock(&self.in_flight).entry(id.clone()) {
            std::collections::hash_map::Entry::Occupied(_) => None,
            std::collections::hash_map::Entry::Vacant(slot) => {
                let serial = self.serials.fetch_add(1, Ordering::Relaxed);
                slot.insert((serial, cancel.clone()));
                Some(serial)
            }
        }
    }

    /// `notifications/cancelled` for `id`: cancels the call and frees the id.
    fn cancel(&self, id: &RequestId) {
        if let Some((_, ct)) = lock(&self.in_flight).remove(id) {
            ct.cancel();
        }
    }

    /// The call of taking `serial` ended: frees `id` if it is still that taking's.
    fn release(&self, id: &RequestId, serial: u64) {
        let mut in_flight = lock(&self.in_flight);
        // One lookup when the id is still this taking's, as it nearly always is.
        if let Some(taken) = in_flight.remove(id)
            && taken.0 != serial
        {
            in_flight.insert(id.clone(), taken);
        }
    }
}

/// A request id taken in a session, freed when its call ends (or its `POST` is dropped).
struct Taken {
    live: Arc<Live>,
    id: RequestId,
    serial: u64,
}

impl Drop for Taken {
    fn drop(&mut self) {
        self.live.release(&self.id, self.serial);
    }
}

/// The direct path of one HTTP server.
pub(crate) struct HttpBypass {
    shared: Arc<Shared>,
    /// rmcp's table of legacy sessions, and where their calls' requests to the host go.
    manager: Arc<LocalSessionManager>,
    calls: Arc<CallStreams>,
    checks: HeaderChecks,
    keep_alive: Option<Duration>,
    stop: CancellationToken,
    sessions: RwLock<LiveSessions>,
    epoch: Instant,
    /// A peer for stateless requests, which (on this path) never send through it: the
    /// handler's context needs one, and rmcp makes them only in its service loop.
    quiet: super::handler_context::SharedPeer,
    _quiet_loop: RunningService<RoleServer, Session>,
    /// The handler of every stateless request: a plain request reads nothing of its session's
    /// state (its log level and capabilities come from its own `_meta`), so one serves all.
    stateless: Handler,
}

/// What one `POST` turned out to be, for the caller.
pub(crate) enum Routed {
    /// Answered here.
    Answered(Response),
    /// rmcp's to answer: the request's head, handed back (rmcp reads the body itself).
    Rmcp(Parts),
}

impl HttpBypass {
    pub(crate) fn new(
        shared: Arc<Shared>,
        (manager, calls): (Arc<LocalSessionManager>, Arc<CallStreams>),
        options: &super::http_options::HttpOptions,
        config: &rmcp::transport::StreamableHttpServerConfig,
        stop: CancellationToken,
    ) -> HttpBypass {
        let checks = HeaderChecks::new(config);
        let stateless = Handler::open(&shared);
        let quiet_loop = rmcp::service::serve_directly_with_ct(
            Session::new(stateless.clone()),
            Silent,
            None,
            stop.child_token(),
        );
        HttpBypass {
            quiet: Arc::new(quiet_loop.peer().clone()),
            _quiet_loop: quiet_loop,
            stateless,
            shared,
            manager,
            calls,
            checks,
            keep_alive: options.session_idle_timeout,
            stop,
            sessions: RwLock::new(LiveSessions::default()),
            epoch: Instant::now(),
        }
    }

    /// What the endpoint remembers of the `_meta` its stateless clients keep sending: the
    /// stateless handler's, to which a call gives back the map it was lent when it ends.
    pub(crate) fn metas(&self) -> &super::meta_memo::MetaMemo {
        &self.stateless.state.metas
    }

    /// The served state this path answers from.
    #[cfg(feature = "auth")]
    pub(crate) fn shared(&self) -> &Arc<Shared> {
        &self.shared
    }

    /// Records the session rmcp just opened for the `initialize` that carried `claim`.
    pub(crate) fn opened(&self, id: &str, claim: &SessionSlot) {
        let Some(state) = claim.0.get().cloned() else {
            return;
        };
        let askable = state
            .upgrade()
            .and_then(|s| s.legacy_peer.get().cloned())
            .and_then(|peer| peer.peer_info())
            .is_none_or(|info| {
                let caps = &info.capabilities;
                caps.elicitation.is_some() || caps.sampling.is_some() || caps.roots.is_some()
            });
        let live = Arc::new(Live {
            state,
            ready: AtomicBool::new(false),
            askable,
            in_flight: Mutex::new(InFlight::default()),
            serials: AtomicU64::new(0),
            touched: AtomicU64::new(self.now_ms()),
        });
        let mut sessions = self.sessions.write().unwrap_or_else(|e| e.into_inner());
        // Sessions rmcp ended (idle, closed) leave their entry here: sweep the dead ones
        // whenever a new one comes, so the table never outgrows the live sessions by much.
        sessions.retain(|_, l| l.state.strong_count() > 0);
        sessions.insert(Arc::from(id), live);
    }

    /// Forgets a session (deleted).
    pub(crate) fn closed(&self, id: &str) {
        let live = self
            .sessions
            .write()
            .unwrap_or_else(|e| e.into_inner())
            .remove(id);
        if let Some(live) = live {
            for (_, (_, ct)) in lock(&live.in_flight).drain() {
                ct.cancel();
            }
        }
    }

    /// The state of the session `id`, while it lives and this path knows it.
    pub(crate) fn session_state(&self, id: &str) -> Option<Arc<SessionState>> {
        self.live(id)?.state.upgrade()
    }

    fn live(&self, id: &str) -> Option<Arc<Live>> {
        self.sessions
            .read()
            .unwrap_or_else(|e| e.into_inner())
            .get(id)
            .cloned()
    }

    fn now_ms(&self) -> u64 {
        self.epoch.elapsed().as_millis() as u64
    }

    /// Sees every well-formed JSON-RPC `POST` before rmcp: answers it when it may, and notes
    /// what it must of the ones rmcp answers (a session's `initialized`, a cancellation).
    /// `principal` is the caller the gate authenticated, if it did.
    pub(crate) async fn route(
        &self,
        parts: Parts,
        message: ClientJsonRpcMessage,
        session: Option<&str>,
        principal: Option<&Arc<crate::Principal>>,
    ) -> Routed {
        let request = match message {
            ClientJsonRpcMessage::Request(request) => request,
            ClientJsonRpcMessage::Notification(n) => {
                if let Some(live) = session.and_then(|s| self.live(s)) {
                    match &n.notification {
                        ClientNotification::InitializedNotification(_) => {
                            live.ready.store(true, Ordering::Release);
                        }
                        ClientNotification::CancelledNotification(c) => {
                            if let Some(id) = &c.params.request_id {
                                live.cancel(id);
                            }
                        }
                        _ => {}
                    }
                }
                return Routed::Rmcp(parts);
            }
            _ => return Routed::Rmcp(parts),
        };
        if !super::fast::answers_only(&request.request) || !self.checks.pass(&parts.headers) {
            return Routed::Rmcp(parts);
        }
        // Where the `_meta` waits if the endpoint's memory lent it (`jsonrpc::meta_of`).
        let meta = super::jsonrpc::meta_of(&request.request);
        if meta.get_progress_token().is_some() {
            return Routed::Rmcp(parts);
        }
        let header_version = single(&parts.headers, &MCP_PROTOCOL_VERSION);
        match (session, meta.protocol_version()) {
            (None, Some(version)) => {
                if version != ProtocolVersion::V_2026_07_28
                    || header_version != Some(Ok(version.as_str()))
                    || meta.log_level().is_some()
                    || !meta.missing_required_keys(&version).is_empty()
                    || !standard_headers_match(&parts.headers, &request.request)
                {
                    return Routed::Rmcp(parts);
                }
                Routed::Answered(self.stateless(parts, request, principal).await)
            }
            (Some(id), None) => {
                // rmcp reads an absent header as 2025-03-26; a present one must be a version
                // it knows, older than the stateless era.
                let legacy_header = match header_version {
                    None => true,
                    Some(Ok(v)) => ProtocolVersion::KNOWN_VERSIONS
                        .iter()
                        .any(|k| k.as_str() == v && k.has_initialize()),
                    Some(Err(())) => false,
                };
                if !legacy_header {
                    return Routed::Rmcp(parts);
                }
                let Some(live) = self.live(id) else {
                    return Routed::Rmcp(parts);
                };
                if !live.ready.load(Ordering::Acquire) {
                    return Routed::Rmcp(parts);
                }
                self.in_session(id, live, parts, request, principal).await
            }
            _ => Routed::Rmcp(parts),
        }
    }

    /// A 2026-07-28 request: the handler's answer as `application/json`, with the HTTP status
    /// rmcp gives the same answer.
    async fn stateless(
        &self,
        parts: Parts,
        request: JsonRpcRequest<ClientRequest>,
        principal: Option<&Arc<crate::Principal>>,
    ) -> Response {
        let handler = self.stateless.clone();
        let id = request.id.clone();
        let mut inner = request.request;
        let mut context = super::fast::context(&mut inner, request.id, self.quiet.clone());
        let ct = self.call_token(&context);
        // A client that goes away cancels its call, as rmcp's stateless path does.
        let _disconnect = ct.clone().drop_guard();
        keep_parts(parts, principal, &mut context);
        let dispatch = super::fast::dispatch(handler, inner, context, std::convert::identity);
        let answer = super::cancel::following(dispatch, &ct, &self.stop).await;
        let (message, status) = match answer {
            Ok(result) => (ServerJsonRpcMessage::response(result, id), hyper::StatusCode::OK),
            Err(error) => {
                let status = status_of(error.code);
                (ServerJsonRpcMessage::error(error, Some(id)), status)
            }
        };
        json_response(status, &message)
    }

    /// The token of a call answered here: the call's own, not a child of the server's stop,
    /// which a call follows only once it waits (`cancel::following`): a child costs a lock of
    /// the stop's tree as it is made and again as it is dropped, and most calls end in their
    /// first poll.
    fn call_token(&self, call: &HandlerContext) -> CancellationToken {
        let ct = call.ct.clone();
        super::cancel::inherit_cancel(&ct, &self.stop);
        ct
    }

    /// A request in a legacy session, through the session's own peer.
    async fn in_session(
        &self,
        id: &str,
        live: Arc<Live>,
        parts: Parts,
        request: JsonRpcRequest<ClientRequest>,
        principal: Option<&Arc<crate::Principal>>,
    ) -> Routed {
        // rmcp's table is the truth about whether the session still exists.
        let handle = self.manager.sessions.read().await.get(id).cloned();
        let (Some(handle), Some(state)) = (handle, live.state.upgrade()) else {
            self.closed(id);
            return Routed::Rmcp(parts);
        };
        let Some(peer) = state.legacy_peer.get().cloned() else {
            return Routed::Rmcp(parts);
        };
        self.touch(&live, &handle).await;
        let request_id = request.id.clone();
        let mut inner = request.request;
        let mut context = super::fast::context(&mut inner, request.id, peer);
        // `notifications/cancelled` cancels it too (through `in_flight`).
        let ct = self.call_token(&context);
        let Some(serial) = live.take(&request_id, &ct) else {
            // An id already in flight here: let rmcp judge the duplicate.
            return Routed::Rmcp(parts);
        };
        let mut asks = live
            .askable
            .then(|| self.calls.open(Arc::from(id), request_id.clone()));
        let taken = Taken {
            live,
            id: request_id.clone(),
            serial,
        };
        let handler = Handler::new(self.shared.clone(), state);
        keep_parts(parts, principal, &mut context);
        let mut dispatch = super::fast::dispatch(handler, inner, context, std::convert::identity);
        let mut call = match std::future::poll_fn(|cx| Poll::Ready(dispatch.as_mut().poll(cx))).await {
            // Ready at once: answered without a task of its own (a spawn, often a wake-up of
            // another worker, a join), which one client waits out on every call (bench/NOTES.md).
            Poll::Ready(answer) => Either::Left(std::future::ready(Ok(answer))),
            // Spawned: a client that drops the connection does not stop the call (rmcp's legacy
            // sessions run it to the end too). It goes on in its task, which polls it again
            // (registering its own waker) when it starts.
            Poll::Pending => {
                let (stop, call) = (self.stop.clone(), ct.clone());
                Either::Right(tokio::spawn(async move {
                    super::cancel::following(dispatch, &call, &stop).await
                }))
            }
        };
        let answer = tokio::select! {
            // A call that stops because it was cancelled must not answer after all.
            biased;
            _ = ct.cancelled() => None,
            // Before the answer: a call that asked and then ended still sends its question.
            Some(asked) = async {
                match &mut asks {
                    Some(asks) => asks.next().await,
                    None => None,
                }
            } => {
                // The call asks its host something: from here the answer is its own stream.
                let Some(asks) = asks else { unreachable!("an ask came from a call stream") };
                let answer = async move { answer_of(call.await, request_id) };
                return Routed::Answered(super::http_call_streams::streamed(asked, asks, answer, ct, taken));
            }
            answer = &mut call => Some(answer),
        };
        drop(taken);
        let message = match answer {
            Some(answer) => answer_of(answer, request_id),
            // Cancelled: no answer, as rmcp's stream for a cancelled request ends without one.
            None => {
                return Routed::Answered(
                    hyper::Response::builder()
                        .status(hyper::StatusCode::OK)
                        .header(hyper::header::CONTENT_TYPE, "text/event-stream")
                        .body(Full::new(Bytes::new()).boxed())
                        .expect("an empty event stream is a valid response"),
                );
            }
        };
        Routed::Answered(json_response(hyper::StatusCode::OK, &message))
    }

    /// Resets the session's idle timer in rmcp's worker, at most every quarter of the timeout
    /// (and at least every second), so a session busy on this path is not ended as idle.
    async fn touch(
        &self,
        live: &Live,
        handle: &rmcp::transport::streamable_http_server::session::local::LocalSessionHandle,
    ) {
        let Some(keep_alive) = self.keep_alive else { return };
        let every = (keep_alive / 4).min(Duration::from_secs(1)).as_millis() as u64;
        let now = self.now_ms();
        let last = live.touched.load(Ordering::Relaxed);
        if now.saturating_sub(last) < every
            || live
                .touched
                .compare_exchange(last, now, Ordering::Relaxed, Ordering::Relaxed)
                .is_err()
        {
            return;
        }
        // Closing a request-wise channel that was never opened (rmcp numbers them from 0)
        // changes nothing but counts as an event: the worker's idle timer starts again.
        let _ = handle.close_request_wise_channel(u64::MAX).await;
    }
}

/// What the handler reads of the HTTP parts rmcp's loop puts in a context's extensions: only
/// the caller's [`Principal`](crate::Principal) (the gate's, else one a layer of the
/// application put in the request's extensions) and the observed headers go in, since each
/// extension costs an allocation to put there and another to drop.
fn keep_parts(mut parts: Parts, authenticated: Option<&Arc<crate::Principal>>, context: &mut HandlerContext) {
    let principal = authenticated.cloned().or_else(|| {
        let shared = parts.extensions.remove::<Arc<crate::Principal>>();
        shared.or_else(|| parts.extensions.remove::<crate::Principal>().map(Arc::new))
    });
    if let Some(principal) = principal {
        context.extensions.insert(principal);
    }
    super::observe::keep_headers(&parts, &mut context.extensions);
}

/// The message answering request `id`, from how its spawned call ended.
fn answer_of(
    ended: Result<Result<ServerResult, rmcp::ErrorData>, tokio::task::JoinError>,
    id: RequestId,
) -> ServerJsonRpcMessage {
    match ended {
        Ok(Ok(result)) => ServerJsonRpcMessage::response(result, id),
        Ok(Err(error)) => ServerJsonRpcMessage::error(error, Some(id)),
        Err(join) => ServerJsonRpcMessage::error(
            rmcp::ErrorData::internal_error(format!("the request failed: {join}"), None),
            Some(id),
        ),
    }
}

/// The HTTP status rmcp's stateless path gives an error answer.
fn status_of(code: ErrorCode) -> hyper::StatusCode {
    match code {
        ErrorCode::UNSUPPORTED_PROTOCOL_VERSION
        | ErrorCode::MISSING_REQUIRED_CLIENT_CAPABILITY
        | ErrorCode::HEADER_MISMATCH => hyper::StatusCode::BAD_REQUEST,
        ErrorCode::METHOD_NOT_FOUND => hyper::StatusCode::NOT_FOUND,
        _ => hyper::StatusCode::OK,
    }
}

fn json_response(status: hyper::StatusCode, message: &ServerJsonRpcMessage) -> Response {
    // Most answers fit: no regrowing on the way.
    let mut body = Vec::with_capacity(512);
    match super::encode::write_message(message, &mut body) {
        Ok(()) => jsonrpc_body(status, Bytes::from(body)),
        Err(e) => jsonrpc_body(
            hyper::StatusCode::INTERNAL_SERVER_ERROR,
            Bytes::from(format!("the answer could not be serialized: {e}")),
        ),
    }
}

/// The transport of the quiet peer's loop: it never receives, and drops what it is sent.
struct Silent;

impl rmcp::transport::Transport<RoleServer> for Silent {
    type Error = std::io::Error;

    fn send(
        &mut self,
        _item: rmcp::service::TxJsonRpcMessage<RoleServer>,
    ) -> impl Future<Output = Result<(), Self::Error>> + Send + 'static {
        std::future::ready(Ok(()))
    }

    fn receive(
        &mut self,
    ) -> impl Future<Output = Option<rmcp::service::RxJsonRpcMessage<RoleServer>>> + Send {
        std::future::pending()
    }

    fn close(&mut self) -> impl Future<Output = Result<(), Self::Error>> + Send {
        std::future::ready(Ok(()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A call cancelled and ended after its id was taken again frees only its own slot: the new
    /// request stays cancellable and its id stays held (before, the old call's end removed the
    /// new request's slot, so its cancel was lost and a duplicate of it was let through).
    #[test]
    fn a_cancelled_call_ending_late_leaves_the_new_taking_of_its_id_alone() {
        let live = Live {
            state: Weak::new(),
            ready: AtomicBool::new(true),
            askable: false,
            in_flight: Mutex::new(InFlight::default()),
            serials: AtomicU64::new(0),
            touched: AtomicU64::new(0),
        };
        let id = RequestId::Number(2);
        let (first, second) = (CancellationToken::new(), CancellationToken::new());
        let old = live.take(&id, &first).expect("free");
        live.cancel(&id);
        assert!(first.is_cancelled());
        let new = live.take(&id, &second).expect("free again once cancelled");
        assert!(
            live.take(&id, &CancellationToken::new()).is_none(),
            "held by the new call"
        );
        live.release(&id, old);
        assert!(
            live.take(&id, &CancellationToken::new()).is_none(),
            "still held by the new call"
        );
        live.cancel(&id);
        assert!(second.is_cancelled(), "the new call is still cancellable");
        live.release(&id, new);
        assert!(live.take(&id, &CancellationToken::new()).is_some());
    }
}
