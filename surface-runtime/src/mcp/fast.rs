//! What the fast paths of every transport share: which requests may skip rmcp's service loop,
//! and the handler context they are answered with.
//!
//! rmcp's loop serves each request with spawned tasks, cancellation tokens and channels back to the
//! loop; for a `tools/call` answered in microseconds that machinery is most of the cost. The stdio
//! path ([`super::stdio_bypass`]) and the Streamable HTTP path ([`super::http_bypass`]) each answer
//! some requests with the very dispatch rmcp's loop calls (`rmcp::Service::handle_request`, so
//! rmcp's checks of `_meta`, of the protocol version and of the request state still run; a
//! `tools/call` those checks let through unchanged — a legacy session's, or a 2026-07-28 one whose
//! `_meta` passes them — is answered as that dispatch answers it without building it, see
//! [`dispatch`]). Which methods qualify is decided here, once, so the two
//! paths cannot drift; what each transport adds (a session's lifecycle on stdio, headers and
//! progress streams on HTTP) is said in its own module.

use super::handler_context::{HandlerContext, SharedPeer};
use super::session::{Handler, Session};
use rmcp::ErrorData;
use rmcp::model::{ClientRequest, GetExtensions, RequestId, RequestMetaObject, ServerResult};

/// The requests that only ask for an answer: a call, a read, a prompt, a completion, a ping and
/// the lists — never the lifecycle (`initialize`, `server/discover`), a subscription,
/// `logging/setLevel`, a task's methods, a notification or a response.
pub(crate) fn answers_only(request: &ClientRequest) -> bool {
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

/// The handler's context for `request` of the session whose peer is `peer` (shared, not cloned:
/// [`super::handler_context`]), as rmcp's loop builds it: the request's `_meta` and extensions
/// move into it (so its progress token goes with them), under a token of its own, which the
/// caller links as the call needs (`cancel::following`).
pub(crate) fn context(request: &mut ClientRequest, id: RequestId, peer: SharedPeer) -> HandlerContext {
    let mut context = HandlerContext::shared(id, peer);
    // Taken out rather than swapped through `get_meta_mut`, which inserts an empty `_meta`
    // first: for a request without one (most) that built the extensions' map only to leave
    // an empty entry in it.
    let extensions = request.extensions_mut();
    if let Some(meta) = extensions.remove::<RequestMetaObject>() {
        context.meta = meta;
    }
    std::mem::swap(&mut context.extensions, extensions);
    context
}

/// Answers `request` as rmcp's loop would, made what the transport writes by `finish`, in one
/// box: through the session front (`session.rs`), so our checks of a 2026-07-28 request's
/// `_meta` run (now) before rmcp's dispatch to `handler` — or, for a `tools/call` that dispatch
/// would let through unchanged, before the one method answered as it answers without building it
/// (`call_in_legacy_session`, `call_in_2026_era`).
pub(crate) fn dispatch<T: Send + 'static>(
    handler: Handler,
    request: ClientRequest,
    context: HandlerContext,
    finish: impl FnOnce(Result<ServerResult, ErrorData>) -> T + Send + 'static,
) -> std::pin::Pin<Box<dyn Future<Output = T> + Send>> {
    Session::new(handler).answer(request, context, finish)
}
