//! One connection: its state (subscriptions, log level, the legacy peer), the [`Handler`] rmcp
//! dispatches to, and the [`Session`] front our transport serves, which refuses what must be
//! refused before rmcp acknowledges anything.
//!
//! A session answers in either protocol era (rmcp picks the era from the opening request).

use super::context::LogFilter;
use super::generation::Generation;
use super::served::Shared;
use super::subscriptions::Subscriptions;
use crate::sync::lock;
use rmcp::model::{
    ClientNotification, ClientRequest, ProtocolVersion, RequestMetaObject, ServerConfig, ServerResult,
};
use rmcp::service::{NotificationContext, RequestContext};
use rmcp::{ErrorData, Peer, RoleServer, ServerHandler};
use std::borrow::Cow;
use std::sync::{Arc, Mutex};

/// What one connection holds between requests.
#[derive(Default)]
pub(crate) struct SessionState {
    /// The peer of a session opened by `initialize`, told when the lists change.
    pub(crate) legacy_peer: Mutex<Option<Peer<RoleServer>>>,
    pub(crate) subscriptions: Subscriptions,
    /// The least severe log level this session hears (`logging/setLevel`).
    pub(crate) log: Arc<LogFilter>,
    /// Set by `initialize`: counted in the sessions gauge while the session lives.
    pub(crate) opened: std::sync::OnceLock<super::observe::Gauged>,
    /// Who the connection is, when the face fixed it for the whole connection (stdio given
    /// scopes); HTTP identifies each request instead.
    pub(crate) principal: Option<Arc<crate::Principal>>,
    /// Cancelled when the connection shuts down gracefully (`ServedMcp::shutdown`): its
    /// listen streams end with their final result.
    pub(crate) draining: tokio_util::sync::CancellationToken,
}

impl SessionState {
    /// Moves this session onto a new generation: survivors' watches re-open on it, the rest
    /// end, and the host is told the lists changed.
    pub(crate) async fn follow(&self, generation: &Arc<Generation>) {
        let sinks = self.subscriptions.follow(generation).await;
        let peer = lock(&self.legacy_peer).clone();
        if let Some(peer) = peer {
            let _ = peer.notify_tool_list_changed().await;
            let _ = peer.notify_resource_list_changed().await;
            let _ = peer.notify_prompt_list_changed().await;
        }
        for sink in sinks {
            if sink.accepted().tools_list_changed == Some(true) {
                let _ = sink.notify_tool_list_changed().await;
            }
            if sink.accepted().resources_list_changed == Some(true) {
                let _ = sink.notify_resource_list_changed().await;
            }
            if sink.accepted().prompts_list_changed == Some(true) {
                let _ = sink.notify_prompt_list_changed().await;
            }
        }
    }
}

/// The rmcp `ServerHandler` of one connection (see `handler.rs`): the served state and this
/// connection's own.
#[derive(Clone)]
pub(crate) struct Handler {
    pub(crate) shared: Arc<Shared>,
    pub(crate) state: Arc<SessionState>,
}

impl Handler {
    pub(crate) fn new(shared: Arc<Shared>, state: Arc<SessionState>) -> Handler {
        Handler { shared, state }
    }

    /// Who makes this request: the one its face identified (an authenticated HTTP request),
    /// or the connection's own (stdio given scopes); `None` reaches everything.
    pub(crate) fn principal(&self, context: &RequestContext<RoleServer>) -> Option<Arc<crate::Principal>> {
        super::context::principal(context).or_else(|| self.state.principal.clone())
    }
}

/// One connection as our transport serves it: rmcp's dispatch over [`Handler`], with the
/// refusals that must come before rmcp acknowledges anything.
#[derive(Clone)]
pub(crate) struct Session {
    handler: Handler,
}

impl Session {
    pub(crate) fn new(handler: Handler) -> Session {
        Session { handler }
    }

    /// The handler behind the front (the direct path dispatches to it, `direct.rs`).
    pub(crate) fn handler(&self) -> &Handler {
        &self.handler
    }
}

/// The `_meta` key a 2026-07-28 request names its log level under.
const LOG_LEVEL_KEY: &str = "io.modelcontextprotocol/logLevel";

/// A 2026-07-28 request's `_meta` log level must be a level (the spec: `-32602`); rmcp reads
/// one that is not as absent, which would silently mute the call's log messages.
fn check_log_level(meta: &RequestMetaObject) -> Result<(), ErrorData> {
    match meta.get(LOG_LEVEL_KEY) {
        Some(raw) if meta.log_level().is_none() => Err(ErrorData::invalid_params(
            super::results::branded(&format!(
                "_meta \"{LOG_LEVEL_KEY}\" is {raw}, not a log level: write one of debug, info, notice, warning, error, critical, alert, emergency"
            )),
            Some(serde_json::json!({ "field": LOG_LEVEL_KEY })),
        )),
        _ => Ok(()),
    }
}

impl rmcp::Service<RoleServer> for Session {
    async fn handle_request(
        &self,
        request: ClientRequest,
        context: RequestContext<RoleServer>,
    ) -> Result<ServerResult, ErrorData> {
        let modern = context.protocol_version().is_some_and(|v| !v.has_initialize());
        if modern {
            check_log_level(&context.meta)?;
        }
        // A listen only exists in the 2026-07-28 era; rmcp answers one sent in a legacy
        // session itself ("method not found"), so the limit is judged only where it applies.
        if let ClientRequest::SubscriptionsListenRequest(listen) = &request
            && modern
        {
            self.handler.admit_listen(&listen.params.notifications)?;
        }
        // Boxed: rmcp's dispatch future is as large as the largest handler's, and rmcp's loop
        // moves the task holding it several times per request (spawn, stage changes); a
        // pointer is cheaper to move.
        Box::pin(rmcp::Service::handle_request(&self.handler, request, context)).await
    }

    async fn handle_notification(
        &self,
        notification: ClientNotification,
        context: NotificationContext<RoleServer>,
    ) -> Result<(), ErrorData> {
        rmcp::Service::handle_notification(&self.handler, notification, context).await
    }

    fn get_info(&self) -> ServerConfig {
        ServerHandler::get_info(&self.handler)
    }

    fn supported_protocol_versions(&self) -> Cow<'static, [ProtocolVersion]> {
        ServerHandler::supported_protocol_versions(&self.handler)
    }
}
