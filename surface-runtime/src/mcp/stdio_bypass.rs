//! The stdio hot path: a session's plain requests answered off rmcp's service loop.
//!
//! rmcp's loop serves every request with two spawned tasks (the handler, then the write of its
//! answer), two cancellation tokens, a channel back to the loop and a pass through the loop's
//! `select!`; for a `tools/call` answered in microseconds that machinery was most of the cost per
//! call (bench/NOTES.md). Here the transport ([`super::transport`]) hands such a request to
//! [`Bypass::take`], which runs the very dispatch rmcp's loop would call
//! (`rmcp::Service::handle_request` of the session's front in `session.rs`, so our checks and
//! rmcp's of `_meta` and of the protocol version still run; a legacy session's `tools/call`, where
//! it checks none, answered as it answers: [`super::fast::dispatch`]), at once when it does not
//! wait (on a current-thread runtime) or else on one task, and the answer goes straight to the
//! writer.
//!
//! Only what cannot tell the difference takes this path; everything else stays with rmcp:
//!
//! - the session is open, so its lifecycle — `initialize`, the 2026-07-28 inline opening,
//!   `server/discover` — is rmcp's; then either
//!   - it opened with `initialize` (its handler keeps that session's peer) and the request's
//!     `_meta` names no protocol version (one naming its own is judged per request by rmcp's
//!     loop, which also scopes that version for any request the handler then sends), or
//!   - it opened the 2026-07-28 way and the request names 2026-07-28 or later: the dispatch
//!     checks its `_meta` against the session as rmcp's loop does, and such a session is never
//!     sent a request (its calls ask through `input_required` answers) — rmcp refuses one
//!     whichever way the request came;
//! - the request only asks for an answer ([`super::fast::answers_only`], the list the HTTP
//!   path uses too).
//!
//! What a handler does through its context works as from rmcp's loop: progress and log
//! messages, and the questions a call asks a legacy session, go through the session's own peer
//! (rmcp's loop writes them, and the answer to a question comes back through it); a
//! notification is written before the handler goes on, so before the answer. Cancellation is
//! rmcp's: `notifications/cancelled` for a request answered here cancels its token, and its
//! answer is never written (the transport sees to both). The token is cancelled with the
//! connection's, which rmcp cancels when the connection ends: a call that waits follows it
//! (`cancel::following`), one that ends in its first poll has nothing to follow.

use super::fast;
use super::handler_context::SharedPeer;
use super::meta_memo::MetaMemo;
use super::session::Handler;
use super::transport::{Bypass, Taken};
use rmcp::model::{ClientRequest, JsonRpcRequest, ServerJsonRpcMessage};
use std::sync::{Arc, OnceLock};
use tokio_util::sync::CancellationToken;

/// The direct path of one connection.
pub(crate) struct StdioBypass {
    handler: Handler,
    /// The connection's token (rmcp's loop runs under it too).
    ct: CancellationToken,
    /// The connection's peer, once rmcp has opened the connection: what a session opened the
    /// 2026-07-28 way (no `initialize`) answers with.
    opened: Arc<OnceLock<SharedPeer>>,
}

impl StdioBypass {
    pub(crate) fn new(handler: Handler, ct: CancellationToken) -> StdioBypass {
        StdioBypass {
            handler,
            ct,
            opened: Arc::default(),
        }
    }

    /// Where the connection's peer goes once rmcp has opened it.
    pub(crate) fn opened(&self) -> Arc<OnceLock<SharedPeer>> {
        self.opened.clone()
    }

    /// The peer to answer `request` with, or none when it is rmcp's loop's to answer.
    fn peer_for(&self, request: &ClientRequest) -> Option<SharedPeer> {
        let legacy = self.handler.state.legacy_peer.get();
        match super::era::named_version(super::jsonrpc::meta_of(request)) {
            None => legacy.cloned(),
            // A 2026-07-28 session: every request carries its own version, checked by the
            // dispatch against the version the session opened on, as rmcp's loop would.
            Some(version) if legacy.is_none() && super::era::is_modern(version) => self.opened.get().cloned(),
            // rmcp's loop scopes an older version named per request for the questions the
            // handler may then send; only it can.
            Some(_) => None,
        }
    }
}

impl Bypass for StdioBypass {
    #[allow(clippy::result_large_err)] // handed back by value, as rmcp's loop takes it
    fn take(
        &self,
        mut request: JsonRpcRequest<ClientRequest>,
    ) -> Result<Taken, JsonRpcRequest<ClientRequest>> {
        if !fast::answers_only(&request.request) {
            return Err(request);
        }
        let Some(peer) = self.peer_for(&request.request) else {
            return Err(request);
        };
        // The call's own token, not a child of the connection's: the transport links it once
        // the call waits (`follows`), and a call ending in its first poll (most) never does.
        let context = fast::context(&mut request.request, request.id.clone(), peer);
        let cancel = context.ct.clone();
        super::cancel::inherit_cancel(&cancel, &self.ct);
        let handler = self.handler.clone();
        let JsonRpcRequest { id, request, .. } = request;
        let answer = fast::dispatch(handler, request, context, move |answer| match answer {
            Ok(result) => ServerJsonRpcMessage::response(result, id),
            Err(error) => ServerJsonRpcMessage::error(error, Some(id)),
        });
        Ok(Taken { answer, cancel })
    }

    fn follows(&self) -> Option<&CancellationToken> {
        Some(&self.ct)
    }

    fn metas(&self) -> Option<&MetaMemo> {
        Some(&self.handler.state.metas)
    }
}
