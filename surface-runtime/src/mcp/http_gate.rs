//! The gate of the HTTP face: what it adds around rmcp's service for every request — the path,
//! the session cap, the bearer-token check, the plain requests answered off rmcp's per-request
//! machinery (`http_bypass.rs`), the drain, and the answers rmcp gets wrong for a hostile or
//! broken client.

use super::drain;
use super::http_bypass::{HttpBypass, Routed, SessionSlot};
use super::http_options::HttpOptions;
use super::http_response::{Problem, Response, jsonrpc_error, not_found, plain};
use super::http_sessions::{SessionSharing, Sessions};
#[cfg(feature = "auth")]
use super::jsonrpc::INTERNAL_ERROR;
use super::jsonrpc::{INVALID_REQUEST, PARSE_ERROR, SERVER_ERROR};
use super::serve::ServeError;
use crate::drain::{Drain, Flight};
use bytes::Bytes;
use http_body_util::{BodyExt, Full, Limited};
use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
use rmcp::transport::streamable_http_server::session::{SessionId, SessionManager, SessionStore};
use rmcp::transport::{StreamableHttpServerConfig, StreamableHttpService};
use serde_json::Value;
use std::sync::Arc;

/// rmcp's service over one served bundle, its legacy sessions shared across instances when the
/// options say so.
pub(super) type Service = StreamableHttpService<super::session::Handler, Sessions>;

/// What the serving loop remembers of one connection between its requests: the bearer header
/// it carried last (with authentication on). A mounted endpoint sees requests, not
/// connections, and hands the default (nothing remembered).
#[derive(Clone, Default)]
pub(super) struct LastToken(#[cfg(feature = "auth")] Option<Arc<super::http_auth::ConnectionToken>>);

/// What this module adds around rmcp's service: the path, the session cap, and answers rmcp
/// gets wrong for a hostile or broken client (a `DELETE` of no session, a body that is not
/// JSON-RPC). rmcp still answers first wherever it checks `Host` and `Origin`.
pub(super) struct Gate {
    /// The endpoint's path when it owns its listener; a mounted service serves any path.
    path: Option<Arc<str>>,
    manager: Arc<LocalSessionManager>,
    max_sessions: usize,
    max_body: usize,
    /// Held while an `initialize` creates a session, so the count and the creation agree.
    creating: tokio::sync::Mutex<()>,
    /// Where sessions of other instances are found, when rmcp restores them (a Redis store).
    restorable: Option<Arc<dyn SessionStore>>,
    /// The backend sharing sessions across instances, told of each use of one (which keeps its
    /// stored state and owner from expiring while the direct path serves it).
    sharing: Option<Arc<dyn SessionSharing>>,
    /// The requests answered without rmcp's per-request machinery (`http_bypass.rs`).
    bypass: HttpBypass,
    /// The bearer-token check and the sessions' subjects, when the endpoint is protected.
    #[cfg(feature = "auth")]
    pub(super) guard: Option<super::http_auth::Guard>,
    /// The calls owed an answer, for a graceful shutdown.
    pub(super) drain: Arc<Drain>,
}

impl Gate {
    pub(super) fn new(
        options: &HttpOptions,
        path: Option<&str>,
        manager: Arc<LocalSessionManager>,
        config: &StreamableHttpServerConfig,
        bypass: HttpBypass,
    ) -> Result<Gate, ServeError> {
        #[cfg(feature = "auth")]
        let guard = match &options.auth {
            Some(auth) => Some(
                super::http_auth::Guard::new(
                    auth.clone(),
                    &options.path,
                    options.max_sessions,
                    options.sharing.clone(),
                )
                .map_err(ServeError)?,
            ),
            None => None,
        };
        Ok(Gate {
            path: path.map(Arc::from),
            manager,
            max_sessions: options.max_sessions,
            max_body: config.max_request_body_bytes,
            creating: tokio::sync::Mutex::new(()),
            restorable: config.session_store.clone(),
            sharing: options.sharing.clone(),
            bypass,
            #[cfg(feature = "auth")]
            guard,
            drain: Arc::default(),
        })
    }

    /// The answer to a request that would open one session too many, if it would.
    async fn full(&self, id: Value) -> Option<Response> {
        let open = self.manager.sessions.read().await.len();
        (open >= self.max_sessions).then(|| {
            jsonrpc_error(
                hyper::StatusCode::SERVICE_UNAVAILABLE,
                id,
                SERVER_ERROR,
                format!(
                    "surface-mcp: this server already holds {open} sessions, the most it may — end a session you no longer use (DELETE it), or retry later"
                ),
            )
        })
    }

    /// Whether `id` names a session another instance opened, which rmcp is about to restore
    /// here from the store.
    async fn restoring(&self, id: &SessionId) -> bool {
        self.restorable.is_some() && !self.manager.has_session(id).await.unwrap_or(true)
    }

    /// A new connection's memory: a place for its bearer header when tokens are checked.
    pub(super) fn connection(&self) -> LastToken {
        #[cfg(feature = "auth")]
        return LastToken(
            self.guard
                .is_some()
                .then(|| Arc::new(super::http_auth::ConnectionToken::default())),
        );
        #[cfg(not(feature = "auth"))]
        LastToken::default()
    }

    pub(super) async fn handle<B>(
        &self,
        service: &Service,
        #[allow(unused_mut)] // mutated with the `auth` feature
        mut request: hyper::Request<B>,
        #[allow(unused_variables)] // read with the `auth` feature
        last_token: LastToken,
    ) -> Response
    where
        B: hyper::body::Body<Data = Bytes> + Send + 'static,
        B::Error: std::error::Error + Send + Sync + 'static,
    {
        #[cfg(feature = "auth")]
        if let Some(metadata) = self.guard.as_ref().and_then(|guard| guard.metadata(&request)) {
            return metadata;
        }
        if let Some(path) = &self.path
            && request.uri().path() != &**path
        {
            return not_found("Not Found");
        }
        if self.drain.draining() {
            return jsonrpc_error(
                hyper::StatusCode::SERVICE_UNAVAILABLE,
                Value::Null,
                SERVER_ERROR,
                format!("surface-mcp: {}", crate::drain::REFUSAL),
            );
        }
        // Authentication before anything else runs (OAuth 2.1 §5.2).
        #[cfg(feature = "auth")]
        let principal = match &self.guard {
            Some(guard) => match guard.admit(request.headers(), last_token.0.as_deref()).await {
                Ok(principal) => Some(principal),
                Err(refused) => return refused,
            },
            None => None,
        };
        #[cfg(not(feature = "auth"))]
        let principal: Option<Arc<crate::Principal>> = None;
        let session: Option<SessionId> = request
            .headers()
            .get("mcp-session-id")
            .and_then(|v| v.to_str().ok())
            .map(|s| s.to_owned().into());
        #[cfg(feature = "auth")]
        if let Some(principal) = &principal {
            // A session id is no credential: another subject's request names no session.
            if let (Some(guard), Some(id)) = (&self.guard, &session)
                && !guard.may_use(id, principal, last_token.0.as_deref()).await
            {
                return not_found("Not Found: Session not found");
            }
            // A `POST` carries it to where it is read (an extension costs two allocations a
            // request), and strips the token where its parts go on to rmcp; rmcp answers
            // anything else, reading the caller from the request's extensions.
            if *request.method() != hyper::Method::POST {
                super::http_auth::strip(request.headers_mut());
                request.extensions_mut().insert(principal.clone());
            }
        }
        if let Some(id) = &session
            && self.deleted_elsewhere(id).await
        {
            self.forget(id).await;
            return not_found("Not Found: Session not found");
        }
        if let Some(id) = &session
            && *request.method() != hyper::Method::DELETE
            && self.restoring(id).await
        {
            // A restored session counts against the cap like one opened here.
            let _creating = self.creating.lock().await;
            if let Some(full) = self.full(Value::Null).await {
                return full;
            }
            return match *request.method() {
                hyper::Method::POST => self.post(service, request, session, principal).await,
                _ => Box::pin(service.handle(request)).await,
            };
        }
        match *request.method() {
            hyper::Method::DELETE => self.delete(service, request, session).await,
            hyper::Method::POST => self.post(service, request, session, principal).await,
            hyper::Method::GET => self.get(service, request, session).await,
            _ => Box::pin(service.handle(request)).await,
        }
    }

    /// A `GET`: rmcp's answer, which for a session opened here (and not shared with other
    /// instances, which resume its stream from the events rmcp stores) becomes the stream its
    /// `updated` notifications are written to directly (`standalone.rs`).
    async fn get<B>(
        &self,
        service: &Service,
        request: hyper::Request<B>,
        session: Option<SessionId>,
    ) -> Response
    where
        B: hyper::body::Body<Data = Bytes> + Send + 'static,
        B::Error: std::error::Error + Send + Sync + 'static,
    {
        let state = match (&session, &self.sharing) {
            (Some(id), None) => self.bypass.session_state(id),
            _ => None,
        };
        let response = Box::pin(service.handle(request)).await;
        match state {
            Some(state) => super::http_standalone::splice(response, &state),
            None => response,
        }
    }

    /// Whether `id` is a session held here that the shared store no longer has: another
    /// instance deleted it (or it expired there). The store is the record of which sessions
    /// live, so this costs one store round trip per request on a session, in a shared store
    /// only (the read also pushes the stored expiry back). A store that cannot answer leaves
    /// the session be: an outage does not end every session.
    async fn deleted_elsewhere(&self, id: &SessionId) -> bool {
        let Some(store) = &self.restorable else {
            return false;
        };
        if !self.manager.has_session(id).await.unwrap_or(false) {
            return false;
        }
        let gone = matches!(store.load(id).await, Ok(None));
        if let (false, Some(sharing)) = (gone, &self.sharing) {
            sharing.touch(id);
        }
        gone
    }

    /// Ends what this instance holds of the session `id`.
    async fn forget(&self, id: &SessionId) {
        let _ = self.manager.close_session(id).await;
        self.bypass.closed(id);
        #[cfg(feature = "auth")]
        if let Some(guard) = &self.guard {
            guard.closed(id);
        }
    }

    /// Whether the store knows the session (another instance opened it).
    async fn stored(&self, id: &SessionId) -> bool {
        match &self.restorable {
            Some(store) => matches!(store.load(id).await, Ok(Some(_))),
            None => false,
        }
    }

    async fn delete<B>(
        &self,
        service: &Service,
        request: hyper::Request<B>,
        session: Option<SessionId>,
    ) -> Response
    where
        B: hyper::body::Body + Send + 'static,
        B::Error: std::fmt::Display,
    {
        let existed = match &session {
            Some(id) => self.manager.has_session(id).await.unwrap_or(false) || self.stored(id).await,
            None => true,
        };
        let mut response = Box::pin(service.handle(request)).await;
        if response.status() == hyper::StatusCode::ACCEPTED {
            // rmcp closes a session that is not there as if it were, with 202: answer 404, as
            // a POST to it does.
            if !existed {
                return not_found("Not Found: Session not found");
            }
            if let Some(id) = &session {
                self.bypass.closed(id);
                #[cfg(feature = "auth")]
                if let Some(guard) = &self.guard {
                    guard.closed(id);
                }
            }
            // The SDKs' clients expect 200/204 (the Python client logs "Session termination
            // failed: 202").
            *response.status_mut() = hyper::StatusCode::OK;
        }
        response
    }

    async fn post<B>(
        &self,
        service: &Service,
        request: hyper::Request<B>,
        session: Option<SessionId>,
        principal: Option<Arc<crate::Principal>>,
    ) -> Response
    where
        B: hyper::body::Body<Data = Bytes> + Send + 'static,
        B::Error: std::error::Error + Send + Sync + 'static,
    {
        // A call is owed its answer until the response body is written whole; a listen is a
        // stream, which a shutdown ends rather than waits for.
        let mut flight = Some(self.drain.flight());
        let response = self
            .answer(service, request, session, principal, &mut flight)
            .await;
        match flight {
            Some(flight) => drain::hold(response, flight),
            None => response,
        }
    }

    async fn answer<B>(
        &self,
        service: &Service,
        request: hyper::Request<B>,
        session: Option<SessionId>,
        principal: Option<Arc<crate::Principal>>,
        flight: &mut Option<Flight>,
    ) -> Response
    where
        B: hyper::body::Body<Data = Bytes> + Send + 'static,
        B::Error: std::error::Error + Send + Sync + 'static,
    {
        let (mut parts, body) = request.into_parts();
        // Only a body that says it is JSON is judged as JSON-RPC; any other Content-Type keeps
        // rmcp's 415.
        let says_json = parts
            .headers
            .get(hyper::header::CONTENT_TYPE)
            .and_then(|v| v.to_str().ok())
            .is_some_and(|v| {
                let essence = v.split_once(';').map_or(v, |(essence, _)| essence);
                essence.trim().eq_ignore_ascii_case("application/json")
            });
        let body = match Limited::new(body, self.max_body).collect().await {
            Ok(collected) => collected.to_bytes(),
            Err(e) if e.is::<http_body_util::LengthLimitError>() => {
                return plain(
                    hyper::StatusCode::PAYLOAD_TOO_LARGE,
                    format!("Payload Too Large: request body exceeds {} bytes", self.max_body),
                );
            }
            Err(e) => {
                return plain(
                    hyper::StatusCode::BAD_REQUEST,
                    format!("Bad Request: the request body could not be read: {e}"),
                );
            }
        };
        // One parse of the body: the hot path reads the message; a body rmcp will refuse is
        // judged again (slowly, rarely) to say why in JSON-RPC terms.
        let (mut parts, problem, initializes) = if says_json {
            match super::jsonrpc::read_message_in(&body, Some(self.bypass.metas())) {
                Ok(message) => {
                    // A call outside the caller's scopes: the step-up challenge (403).
                    #[cfg(feature = "auth")]
                    if let (Some(guard), Some(principal)) = (&self.guard, &principal)
                        && let Some(needed) = super::http_auth::Guard::missing_scope(
                            &self.bypass.shared().current(),
                            &message,
                            principal,
                        )
                    {
                        return guard.forbidden(needed);
                    }
                    if matches!(&message, rmcp::model::ClientJsonRpcMessage::Request(r)
                        if matches!(r.request, rmcp::model::ClientRequest::SubscriptionsListenRequest(_)))
                    {
                        *flight = None;
                        // rmcp hands these parts on to the listen, with the `taskIds` it drops.
                        if let Some(ids) = super::listen_ids::ListenTaskIds::of(&body) {
                            parts.extensions.insert(ids);
                        }
                    }
                    let initializes = session.is_none()
                        && matches!(&message, rmcp::model::ClientJsonRpcMessage::Request(r)
                            if matches!(r.request, rmcp::model::ClientRequest::InitializeRequest(_)));
                    if initializes {
                        (parts, Problem::Unjudged, true)
                    } else {
                        // Boxed, as is every rmcp `handle` here: each is kilobytes of state,
                        // and inline it would be copied into each enclosing future in turn as
                        // a request starts (a fifth of a call's instructions were memcpy).
                        match Box::pin(self.bypass.route(
                            parts,
                            message,
                            session.as_deref(),
                            principal.as_ref(),
                        ))
                        .await
                        {
                            Routed::Answered(response) => return response,
                            Routed::Rmcp(parts) => (parts, Problem::Unjudged, false),
                        }
                    }
                }
                Err(_) => (parts, Problem::of(&body), false),
            }
        } else {
            (parts, Problem::Unjudged, false)
        };
        let claim = SessionSlot::default();
        if initializes {
            parts.extensions.insert(claim.clone());
        }
        // What rmcp answers reads the caller from the request's extensions, and must not see
        // the token.
        if let Some(principal) = &principal {
            #[cfg(feature = "auth")]
            super::http_auth::strip(&mut parts.headers);
            parts.extensions.insert(principal.clone());
        }
        let request = hyper::Request::from_parts(parts, Full::new(body));
        let response = if initializes {
            let _creating = self.creating.lock().await;
            if let Some(full) = self.full(problem.id()).await {
                return full;
            }
            let response = Box::pin(service.handle(request)).await;
            if response.status() == hyper::StatusCode::OK
                && let Some(id) = response
                    .headers()
                    .get("mcp-session-id")
                    .and_then(|v| v.to_str().ok())
            {
                self.bypass.opened(id, &claim);
                #[cfg(feature = "auth")]
                if let (Some(guard), Some(principal)) = (&self.guard, &principal) {
                    let live = self.manager.sessions.read().await;
                    if let Err(e) = guard.opened(id, principal, |id| live.contains_key(id)).await {
                        // A session whose owner no instance could learn would be refused
                        // everywhere: end it now and say why.
                        drop(live);
                        self.forget(&SessionId::from(id)).await;
                        return jsonrpc_error(
                            hyper::StatusCode::SERVICE_UNAVAILABLE,
                            problem.id(),
                            INTERNAL_ERROR,
                            format!("surface-mcp: the session could not be recorded: {e}"),
                        );
                    }
                }
            }
            response
        } else {
            Box::pin(service.handle(request)).await
        };
        // rmcp answers a body it cannot decode with 415 (after its Host, Origin, Accept and
        // Content-Type checks, which keep their own answers): a JSON-RPC client expects 400
        // and an error object.
        match problem {
            Problem::NotJson(e) if response.status() == hyper::StatusCode::UNSUPPORTED_MEDIA_TYPE => {
                jsonrpc_error(
                    hyper::StatusCode::BAD_REQUEST,
                    Value::Null,
                    PARSE_ERROR,
                    format!("Parse error: the body is not JSON ({e})"),
                )
            }
            Problem::NotJsonRpc { id, why }
                if response.status() == hyper::StatusCode::UNSUPPORTED_MEDIA_TYPE =>
            {
                jsonrpc_error(
                    hyper::StatusCode::BAD_REQUEST,
                    id,
                    INVALID_REQUEST,
                    format!("Invalid Request: the body is JSON but not a JSON-RPC message ({why})"),
                )
            }
            _ => response,
        }
    }
}
