//! The stdio hot path: a session's plain requests answered off rmcp's service loop.
//!
//! rmcp's loop serves every request with two spawned tasks (the handler, then the write of its
//! answer), two cancellation tokens, a channel back to the loop and a pass through the loop's
//! `select!`; for a `tools/call` answered in microseconds that machinery was most of the cost
//! per call (bench/NOTES.md). Here the transport ([`super::transport`]) hands such a request to
//! [`Direct::take`], which runs the very dispatch rmcp's loop would call
//! (`rmcp::Service::handle_request` of the session's handler, so rmcp's checks of `_meta` and
//! of the protocol version still run) on one task, and the answer goes straight to the writer.
//!
//! Only what cannot tell the difference takes this path; everything else stays with rmcp:
//!
//! - the session opened with `initialize` (its handler keeps that session's peer), so its
//!   lifecycle — `initialize`, the 2026-07-28 inline lifecycle, `server/discover` — is rmcp's;
//! - the request is one that only asks for an answer: `tools/call`, `resources/read`,
//!   `prompts/get`, `completion/complete`, `ping` and the lists — never a subscription, a
//!   `logging/setLevel`, a notification or a response;
//! - its `_meta` names no protocol version: a request naming its own is judged per request by
//!   rmcp's loop, which also scopes that version for any request the handler then sends.
//!
//! What a handler does through its context works as from rmcp's loop: progress and log
//! messages, and the questions a call asks a legacy session, go through the session's own peer
//! (rmcp's loop writes them, and the answer to a question comes back through it); a
//! notification is written before the handler goes on, so before the answer. Cancellation is
//! rmcp's: `notifications/cancelled` for a request answered here cancels its token, and its
//! answer is never written (the transport sees to both). The token is a child of the
//! connection's, which rmcp cancels when the connection ends.

use super::session::Handler;
use super::transport::{Direct, Taken};
use crate::sync::lock;
use rmcp::model::{ClientRequest, GetExtensions, GetMeta, JsonRpcRequest, ServerJsonRpcMessage};
use rmcp::service::RequestContext;
use tokio_util::sync::CancellationToken;

/// The direct path of one connection.
pub(crate) struct Session {
    handler: Handler,
    /// The connection's token (rmcp's loop runs under it too).
    ct: CancellationToken,
}

impl Session {
    pub(crate) fn new(handler: Handler, ct: CancellationToken) -> Session {
        Session { handler, ct }
    }
}

/// The requests that only ask for an answer.
fn answer_only(request: &ClientRequest) -> bool {
    matches!(
        request,
        ClientRequest::CallToolRequest(_)
            | ClientRequest::ReadResourceRequest(_)
            | ClientRequest::GetPromptRequest(_)
            | ClientRequest::CompleteRequest(_)
            | ClientRequest::PingRequest(_)
            | ClientRequest::ListToolsRequest(_)
            | ClientRequest::ListResourcesRequest(_)
            | ClientRequest::ListResourceTemplatesRequest(_)
            | ClientRequest::ListPromptsRequest(_)
    )
}

impl Direct for Session {
    #[allow(clippy::result_large_err)] // handed back by value, as rmcp's loop takes it
    fn take(
        &self,
        mut request: JsonRpcRequest<ClientRequest>,
    ) -> Result<Taken, JsonRpcRequest<ClientRequest>> {
        if !answer_only(&request.request) || request.request.get_meta().protocol_version().is_some() {
            return Err(request);
        }
        // Set by `initialize`: a session rmcp opened the legacy way.
        let Some(peer) = lock(&self.handler.state.legacy_peer).clone() else {
            return Err(request);
        };
        let ct = self.ct.child_token();
        let mut context = RequestContext::new(request.id.clone(), peer);
        context.ct = ct.clone();
        // rmcp's loop moves `_meta` and the extensions into the context the same way.
        std::mem::swap(&mut context.meta, request.request.get_meta_mut());
        std::mem::swap(&mut context.extensions, request.request.extensions_mut());
        let handler = self.handler.clone();
        let JsonRpcRequest { id, request, .. } = request;
        let answer = Box::pin(async move {
            match rmcp::Service::handle_request(&handler, request, context).await {
                Ok(result) => ServerJsonRpcMessage::response(result, id),
                Err(error) => ServerJsonRpcMessage::error(error, Some(id)),
            }
        });
        Ok(Taken {
            answer,
            cancel: Box::new(move || ct.cancel()),
        })
    }
}
