//! One connection: its state (subscriptions, log level, the legacy peer), the [`Handler`] rmcp
//! dispatches to with its `ServerHandler` impl, and the [`Session`] front our transport serves,
//! which refuses what must be refused before rmcp acknowledges anything.
//!
//! The `ServerHandler` hands each request, in either protocol era (rmcp picks the era from the
//! opening request), to the module that does it — the served state (`served.rs`), the requests
//! (`requests.rs`), the subscriptions (`subscriptions.rs`), completions and prompts. Nothing is
//! decided here; every request is observed here (`observe.rs`: its span, its metrics), the one
//! place every face passes.

use super::asking::Held;
use super::context::LogFilter;
use super::generation::Generation;
use super::handler_context::{HandlerContext, SharedPeer};
use super::observe::{self, Target};
use super::requests::Serving;
use super::results::{branded, panicked};
use super::served::{Follower, Shared};
use super::subscriptions::Subscriptions;
use futures::future::BoxFuture;
use rmcp::model::*;
use rmcp::service::{NotificationContext, RequestContext, SubscriptionContext};
use rmcp::{ErrorData, RoleServer, ServerHandler};
use std::borrow::Cow;
use std::pin::Pin;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, OnceLock};

/// What one connection holds between requests.
#[derive(Default)]
pub(crate) struct SessionState {
    /// The peer of a session opened by `initialize`, told when the lists change.
    /// Shared: the fast paths hand it to each call they answer (`handler_context::CallPeer`).
    /// Set once: a connection has one peer, so a later `initialize` on it would set the same
    /// one; read on every fast call, which a lock around it cost two locked instructions.
    pub(crate) legacy_peer: OnceLock<SharedPeer>,
    /// Set by `initialize` in a session rmcp opened with it, not the 2026-07-28 way (where rmcp
    /// asks every request for its `_meta`, even after a stray `initialize`): only there is a
    /// call without `_meta` answered by [`call_in_legacy_session`].
    pub(crate) opened_by_initialize: AtomicBool,
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
    /// What this connection's client keeps sending as `_meta` (read by the stdio transport).
    pub(crate) metas: super::meta_memo::MetaMemo,
}

impl Follower for SessionState {
    fn follow<'a>(&'a self, generation: &'a Arc<Generation>) -> BoxFuture<'a, ()> {
        Box::pin(self.move_onto(generation))
    }
}

impl SessionState {
    /// Moves this session onto a new generation: survivors' watches re-open on it, the rest
    /// end, and the host is told the lists changed.
    async fn move_onto(&self, generation: &Arc<Generation>) {
        let sinks = self.subscriptions.follow(generation).await;
        if let Some(peer) = self.legacy_peer.get() {
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

/// Put in an `initialize` request's HTTP extensions by the face that wants to learn the
/// session it opens (the HTTP fast path, `http_bypass.rs`): the handler that answers it leaves
/// its session state here, so the session id rmcp then assigns can be tied to it.
#[cfg(feature = "http")]
#[derive(Clone, Default)]
pub(crate) struct SessionSlot(pub(crate) Arc<std::sync::OnceLock<std::sync::Weak<SessionState>>>);

#[cfg(feature = "http")]
impl SessionSlot {
    /// Records `state` in the request's claim, if any (called by `initialize`).
    fn record(context: &RequestContext<RoleServer>, state: &Arc<SessionState>) {
        if let Some(claim) = context
            .extensions
            .get::<hyper::http::request::Parts>()
            .and_then(|parts| parts.extensions.get::<SessionSlot>())
        {
            let _ = claim.0.set(Arc::downgrade(state));
        }
    }
}

/// The rmcp `ServerHandler` of one connection (its impl below): the served state and this
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

    /// `tools/call`, recorded (its span and metrics), for a request whose era the caller read
    /// (`modern`: [`super::era::modern`]; `held`: what the caller holds for it already,
    /// [`super::asking::Held`]), in `context`, which stays the caller's, as the
    /// request does (held once, in the caller's future, not moved into this one too).
    fn call_tool_in<'a>(
        &'a self,
        request: &'a mut CallToolRequestParams,
        context: &'a HandlerContext,
        modern: bool,
        held: super::asking::Held,
    ) -> impl Future<Output = Result<CallToolResponse, ErrorData>> + 'a {
        use tracing::Instrument;
        async move {
            let call = observe::Call::start(&request.name, context);
            // Boxed on its own (and instrumented outside the box, so the span's wrapper does
            // not move it again): with it inline, the answer's box (`Session::answer`) was
            // 1.6 KiB, past the allocator's per-thread cache (1,032 bytes), and each call paid a
            // trip through its bins and a consolidation; two cached boxes cost a fraction.
            let answer = Box::pin(self.serving().call(request, context, modern, held))
                .instrument(call.span())
                .await;
            let name = request.name.as_ref();
            call.end(name, || self.shared.current().tools.contains_key(name), &answer);
            answer
        }
    }

    /// A new connection on `shared`, served by rmcp's own transports (Streamable HTTP), which
    /// take a `ServerHandler`.
    #[cfg(feature = "http")]
    pub(crate) fn open(shared: &Arc<Shared>) -> Handler {
        // Streamable HTTP drains through its own endpoint (`HttpService::shutdown`).
        Handler::open_as(shared, None, tokio_util::sync::CancellationToken::new())
    }

    /// [`open`](Self::open) for a connection that is `principal` throughout and drains when
    /// `draining` is cancelled.
    fn open_as(
        shared: &Arc<Shared>,
        principal: Option<Arc<crate::Principal>>,
        draining: tokio_util::sync::CancellationToken,
    ) -> Handler {
        let state = Arc::new(SessionState {
            principal,
            draining,
            ..SessionState::default()
        });
        let follower: Arc<dyn Follower> = state.clone();
        shared.enlist(Arc::downgrade(&follower));
        Handler::new(shared.clone(), state)
    }

    /// What this connection's requests read: the served state and the connection's own.
    fn serving(&self) -> Serving<'_> {
        Serving {
            shared: &self.shared,
            log: &self.state.log,
            session: Arc::as_ptr(&self.state) as usize,
            principal: self.state.principal.as_ref(),
            draining: &self.state.draining,
        }
    }

    /// Who makes this request: the one its face identified (an authenticated HTTP request),
    /// or the connection's own (stdio given scopes); `None` reaches everything.
    pub(crate) fn principal(&self, context: &HandlerContext) -> Option<Arc<crate::Principal>> {
        self.serving().principal(&context.extensions)
    }
}

impl Handler {
    /// Whether this request's client is told about the served views (MCP Apps): only one that
    /// declares the extension (its capabilities are read only when a view is served).
    fn tells_ui(&self, generation: &Generation, context: &HandlerContext) -> bool {
        !generation.views.is_empty() && super::views::declared(context.client_capabilities().as_ref())
    }
}

impl ServerHandler for Handler {
    fn get_info(&self) -> ServerConfig {
        self.shared.info.clone()
    }

    async fn initialize(
        &self,
        request: InitializeRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<InitializeResult, ErrorData> {
        context.peer.set_peer_info(request.clone());
        // rmcp's own rule, read through its accessor: a context with an empty `_meta` falls
        // back to the session's capabilities only in a session opened by `initialize`.
        let opened_by_initialize = RequestContext::new(context.id.clone(), context.peer.clone())
            .client_capabilities()
            .is_some();
        (self.state.opened_by_initialize).store(opened_by_initialize, Ordering::Relaxed);
        let mut result = self.negotiate_initialize(&request)?;
        result.capabilities = super::views::told(result.capabilities, Some(&request.capabilities));
        result.instructions = self.shared.instructions.read();
        self.state
            .legacy_peer
            .get_or_init(|| Arc::new(context.peer.clone()));
        self.state.opened.get_or_init(observe::Gauged::session);
        #[cfg(feature = "http")]
        SessionSlot::record(&context, &self.state);
        Ok(result)
    }

    async fn discover(&self, context: RequestContext<RoleServer>) -> Result<DiscoverResult, ErrorData> {
        let mut info = self.get_info();
        info.capabilities = super::views::told(info.capabilities, context.client_capabilities().as_ref());
        let mut result =
            DiscoverResult::from_server_info(self.supported_protocol_versions().into_owned(), info);
        result.instructions = self.shared.instructions.read();
        Ok(result)
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        let context = HandlerContext::from(context);
        let _span = observe::span("tools/list", Target::None, &context).entered();
        let generation = self.shared.current();
        let tools = match self.tells_ui(&generation, &context) {
            true => &generation.tool_list,
            false => &generation.plain_tool_list,
        };
        // Exactly what the caller's scopes reach.
        let tools = match self.principal(&context) {
            None => tools.to_vec(),
            Some(principal) => tools
                .iter()
                .filter(|t| generation.reaches_tool(t.name.as_ref(), Some(&principal)))
                .cloned()
                .collect(),
        };
        Ok(ListToolsResult::with_all_items(tools))
    }

    async fn list_resources(
        &self,
        _request: Option<PaginatedRequestParams>,
        context: RequestContext<RoleServer>,
    ) -> Result<ListResourcesResult, ErrorData> {
        let context = HandlerContext::from(context);
        let _span = observe::span("resources/list", Target::None, &context).entered();
        let generation = self.shared.current();
        let resources = match self.tells_ui(&generation, &context) {
            true => &generation.resource_list,
            false => &generation.plain_resource_list,
        };
        let resources = match self.principal(&context) {
            None => resources.to_vec(),
            Some(principal) => resources
                .iter()
                .filter(|r| generation.reaches_uri(&r.uri, Some(&principal)))
                .cloned()
                .collect(),
        };
        Ok(ListResourcesResult::with_all_items(resources))
    }

    async fn list_resource_templates(
        &self,
        _request: Option<PaginatedRequestParams>,
        context: RequestContext<RoleServer>,
    ) -> Result<ListResourceTemplatesResult, ErrorData> {
        let context = HandlerContext::from(context);
        let _span = observe::span("resources/templates/list", Target::None, &context).entered();
        let generation = self.shared.current();
        let templates = match self.principal(&context) {
            None => generation.template_list.to_vec(),
            Some(principal) => generation
                .template_list
                .iter()
                .filter(|t| generation.reaches_template(&t.uri_template, Some(&principal)))
                .cloned()
                .collect(),
        };
        Ok(ListResourceTemplatesResult::with_all_items(templates))
    }

    async fn read_resource(
        &self,
        request: ReadResourceRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<ReadResourceResponse, ErrorData> {
        let context = HandlerContext::from(context);
        let span = observe::span("resources/read", Target::Resource(&request.uri), &context);
        let principal = self.principal(&context);
        observe::request(span, self.serving().read(request.uri, principal.as_deref())).await
    }

    #[allow(deprecated)]
    async fn subscribe(
        &self,
        request: SubscribeRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<(), ErrorData> {
        let context = HandlerContext::from(context);
        let span = observe::span("resources/subscribe", Target::Resource(&request.uri), &context);
        // Outside the caller's scopes: as if it did not exist (HTTP answers 403 before).
        let principal = self.principal(&context);
        if !self
            .shared
            .current()
            .reaches_uri(&request.uri, principal.as_deref())
        {
            return Err(super::requests::unknown_resource(&request.uri));
        }
        let serving = self.serving();
        let subscribing =
            (self.state.subscriptions).subscribe(&serving, request.uri, context.peer.into_peer());
        observe::request(span, subscribing).await
    }

    #[allow(deprecated)]
    async fn unsubscribe(
        &self,
        request: UnsubscribeRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<(), ErrorData> {
        let context = HandlerContext::from(context);
        let _span =
            observe::span("resources/unsubscribe", Target::Resource(&request.uri), &context).entered();
        self.state.subscriptions.unsubscribe(&request.uri);
        Ok(())
    }

    fn accepted_subscription_filter(&self, requested: &SubscriptionFilter) -> Option<SubscriptionFilter> {
        Some(self.state.subscriptions.accept_filter(&self.serving(), requested))
    }

    async fn listen(&self, context: SubscriptionContext) -> Result<(), ErrorData> {
        self.state.subscriptions.listen(&self.serving(), context).await
    }

    async fn call_tool(
        &self,
        mut request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        let context = HandlerContext::from(context);
        let modern = super::era::modern(&context);
        self.call_tool_in(&mut request, &context, modern, Held::default())
            .await
    }

    async fn complete(
        &self,
        request: CompleteRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CompleteResult, ErrorData> {
        let context = HandlerContext::from(context);
        use super::completion::Refusal;
        let span = observe::span("completion/complete", Target::None, &context);
        let generation = self.shared.current();
        let principal = self.principal(&context);
        let answer = async {
            super::completion::complete(&generation, &request, principal.as_deref())
                .await
                .map_err(|refusal| match refusal {
                    Refusal::Unknown(message) => ErrorData::invalid_params(branded(&message), None),
                    Refusal::Failed(f) => ErrorData::internal_error(branded(&f.message), None),
                })
        };
        observe::request(span, answer).await
    }

    async fn list_prompts(
        &self,
        _request: Option<PaginatedRequestParams>,
        context: RequestContext<RoleServer>,
    ) -> Result<ListPromptsResult, ErrorData> {
        let context = HandlerContext::from(context);
        let _span = observe::span("prompts/list", Target::None, &context).entered();
        let prompts = self.shared.current().prompt_list.to_vec();
        Ok(ListPromptsResult::with_all_items(prompts))
    }

    async fn get_prompt(
        &self,
        request: GetPromptRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<GetPromptResponse, ErrorData> {
        let context = HandlerContext::from(context);
        let span = observe::span("prompts/get", Target::Prompt(&request.name), &context);
        observe::request(span, self.serving().prompt(request, context)).await
    }

    #[allow(deprecated)]
    async fn set_level(
        &self,
        request: SetLevelRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<(), ErrorData> {
        let context = HandlerContext::from(context);
        // 2026-07-28 removed it (a request carries its level in `_meta`).
        if super::era::modern(&context) {
            return Err(super::requests::removed("logging/setLevel"));
        }
        self.state.log.set(request.level);
        Ok(())
    }

    async fn get_task(
        &self,
        request: GetTaskParams,
        context: RequestContext<RoleServer>,
    ) -> Result<GetTaskResult, ErrorData> {
        let context = HandlerContext::from(context);
        let caller = self.principal(&context);
        self.shared
            .tasks
            .get_anywhere(&request.task_id, caller.as_deref())
            .await
            .map(GetTaskResult::new)
    }

    async fn update_task(
        &self,
        request: UpdateTaskParams,
        context: RequestContext<RoleServer>,
    ) -> Result<(), ErrorData> {
        let context = HandlerContext::from(context);
        let caller = self.principal(&context);
        self.shared
            .tasks
            .update_anywhere(&request.task_id, caller.as_deref(), request.input_responses)
            .await
    }

    async fn cancel_task(
        &self,
        request: CancelTaskParams,
        context: RequestContext<RoleServer>,
    ) -> Result<(), ErrorData> {
        let context = HandlerContext::from(context);
        let caller = self.principal(&context);
        self.shared
            .tasks
            .cancel_anywhere(&request.task_id, caller.as_deref())
            .await
    }

    async fn list_skills(
        &self,
        _request: Option<PaginatedRequestParams>,
        context: RequestContext<RoleServer>,
    ) -> Result<ListSkillsResult, ErrorData> {
        let context = HandlerContext::from(context);
        let _span = observe::span("skills/list", Target::None, &context).entered();
        let principal = self.principal(&context);
        Ok(self.shared.current().skills.list_reached(principal.as_deref()))
    }

    async fn get_skill(
        &self,
        request: GetSkillRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<GetSkillResult, ErrorData> {
        let context = HandlerContext::from(context);
        let _span = observe::span("skills/get", Target::Resource(&request.uri), &context).entered();
        let principal = self.principal(&context);
        self.shared
            .current()
            .skills
            .get_reached(&request.uri, principal.as_deref())
    }

    async fn on_custom_request(
        &self,
        request: CustomRequest,
        context: RequestContext<RoleServer>,
    ) -> Result<CustomResult, ErrorData> {
        let context = HandlerContext::from(context);
        super::requests::custom(request, &context)
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

    /// The front's own checks of a request, before rmcp's dispatch: a 2026-07-28 request's log
    /// level, and the session's listen limit.
    fn admit(
        &self,
        request: &ClientRequest,
        meta: &RequestMetaObject,
        modern: bool,
    ) -> Result<(), ErrorData> {
        if modern {
            check_log_level(meta)?;
        }
        // A listen only exists in the 2026-07-28 era; rmcp answers one sent in a legacy
        // session itself ("method not found"), so the limit is judged only where it applies.
        if let ClientRequest::SubscriptionsListenRequest(listen) = request
            && modern
        {
            let limit = self.handler.shared.settings.max_subscriptions;
            (self.handler.state.subscriptions).admit_listen(&listen.params.notifications, limit)?;
        }
        Ok(())
    }

    /// Answers `request` as [`rmcp::Service::handle_request`] does, owning the session (the
    /// fast paths' dispatch), its answer made what the transport writes by `finish`: one box
    /// holds the session, the request and the dispatch together, where boxing the dispatch and
    /// then what finished it took two allocations and a move of each per request. The box is
    /// sized to the dispatch: rmcp's is as large as its largest handler's, a legacy call alone
    /// ([`call_in_legacy_session`]) a fraction of it. `context` holds the session's peer
    /// shared, as the fast path does ([`super::handler_context`]).
    pub(crate) fn answer<T: Send + 'static>(
        self,
        mut request: ClientRequest,
        mut context: HandlerContext,
        finish: impl FnOnce(Result<ServerResult, ErrorData>) -> T + Send + 'static,
    ) -> Pin<Box<dyn Future<Output = T> + Send>> {
        // A call's `_meta` lent by the stdio connection's memory (`jsonrpc::settle_meta`): the
        // context's, given back when the call ends.
        let lent = super::jsonrpc::take_lent_meta(&mut request)
            .map(|meta| context.meta = meta)
            .is_some();
        let (named, modern) = super::era::named_and_modern(&context);
        if let Err(refused) = self.admit(&request, &context.meta, modern) {
            return Box::pin(std::future::ready(finish(Err(refused))));
        }
        match request {
            ClientRequest::CallToolRequest(call)
                if !modern && named.is_none() && self.opened_by_initialize() =>
            {
                Box::pin(answered(
                    call_in_legacy_session(self.handler, call.params, context),
                    finish,
                ))
            }
            ClientRequest::CallToolRequest(call)
                if let Some(capabilities) = named
                    .filter(|_| modern)
                    .and_then(|named| self.meta_let_through(named, &context)) =>
            {
                let held = Held {
                    capabilities: Some(capabilities),
                };
                let call = call_in_2026_era(self.handler, call.params, context, held, lent);
                Box::pin(answered(call, finish))
            }
            request => {
                let context = context.into_rmcp();
                let dispatch =
                    async move { rmcp::Service::handle_request(&self.handler, request, context).await };
                Box::pin(answered(dispatch, finish))
            }
        }
    }

    /// Whether the session was opened by `initialize`: a call outside the 2026-07-28 era whose
    /// `_meta` names no version of its own is then one rmcp's dispatch checks no `_meta` of and
    /// answers in the legacy shape ([`call_in_legacy_session`]).
    fn opened_by_initialize(&self) -> bool {
        self.handler.state.opened_by_initialize.load(Ordering::Relaxed)
    }

    /// Whether rmcp's dispatch lets a 2026-07-28 request's `_meta` through unchanged: the
    /// `version` it names (read by the caller) is a supported version of that era (or later),
    /// and its client capabilities read (so none of the keys that era requires is missing).
    /// Then those capabilities (boxed, as the call's round keeps them); `None` for any other
    /// request, whose refusal (or fallback) rmcp's dispatch makes.
    fn meta_let_through(&self, version: &str, context: &HandlerContext) -> Option<Box<ClientCapabilities>> {
        let supported = ServerHandler::supported_protocol_versions(&self.handler);
        if !super::era::is_modern(version) || !supported.iter().any(|known| known.as_str() == version) {
            return None;
        }
        context.meta.client_capabilities().map(Box::new)
    }

    /// A new connection on `shared` served by our transport (stdio, `serve`): the handler
    /// behind the front that refuses an over-limit listen before rmcp acknowledges it.
    pub(crate) fn open(shared: &Arc<Shared>) -> Session {
        let principal = shared.settings.stdio_scopes.as_ref().map(|scopes| {
            Arc::new(crate::Principal::new("stdio", "stdio").with_scopes(scopes.iter().cloned()))
        });
        Session::new(Handler::open_as(shared, principal, shared.draining.child_token()))
    }

    /// The handler behind the front (the direct path dispatches to it, `stdio_bypass.rs`).
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
            branded(&format!(
                "_meta \"{LOG_LEVEL_KEY}\" is {raw}, not a log level: write one of debug, info, notice, warning, error, critical, alert, emergency"
            )),
            Some(serde_json::json!({ "field": LOG_LEVEL_KEY })),
        )),
        _ => Ok(()),
    }
}

/// `tools/call` in a legacy session (opened by `initialize`, [`Session::opened_by_initialize`],
/// the call's `_meta` naming no version of its own), answered as rmcp's dispatch answers it
/// (rmcp 3.11, `Service::handle_request` of `handler/server.rs`): the handler's answer, a task
/// handle refused unless the client declared tasks, an `input_required` result refused (it
/// needs 2026-07-28), and the result stripped to the legacy shape; errors as they are. Taken
/// out of rmcp's dispatch because building and moving that 4.7 KiB future was ~3 % of a stdio
/// call's instructions (bench/NOTES.md); `tests/direct_stdio.rs` holds these answers to
/// rmcp's, tool by tool.
#[allow(clippy::manual_async_fn)] // see the body's first line
fn call_in_legacy_session(
    handler: Handler,
    mut params: CallToolRequestParams,
    context: HandlerContext,
) -> impl Future<Output = Result<ServerResult, ErrorData>> {
    // Not an `async fn`: one would hold its arguments twice (as arguments and as the locals
    // they are moved to).
    async move {
        let response = handler
            .call_tool_in(&mut params, &context, false, Held::default())
            .await?;
        // rmcp's `client_capabilities()`, read in place rather than cloned out, and only for a
        // task handle (reading the session's takes its peer's lock).
        let declared_tasks = || match context.meta.client_capabilities() {
            Some(capabilities) => capabilities.supports_tasks(),
            None => (context.peer.peer_info()).is_some_and(|info| info.capabilities.supports_tasks()),
        };
        let mut result = unless_undeclared_task(response, declared_tasks)?;
        if matches!(result, ServerResult::InputRequiredResult(_)) {
            return Err(ErrorData::invalid_request(
                "InputRequiredResult requires negotiated protocol version 2026-07-28 or newer",
                None,
            ));
        }
        result.strip_result_type_for_legacy_peer();
        result.strip_non_object_output_for_legacy_peer();
        Ok(result)
    }
}

/// `tools/call` of the 2026-07-28 era whose `_meta` rmcp's dispatch lets through
/// ([`Session::meta_let_through`], which read the client's capabilities from it, `held` with
/// the fast path's peer; `lent`: the
/// `_meta` is the connection memory's, given back at the end), answered as
/// that dispatch answers it (rmcp 3.11, `Service::handle_request` of `handler/server.rs`): the
/// handler's answer, a task handle refused unless the client declared tasks, and the result
/// given its missing cache hints; errors as they are (the dispatch returns the handler's
/// before it maps any resource-not-found to `-32602`). Taken out of rmcp's dispatch for the
/// same reason as [`call_in_legacy_session`]; `tests/direct_stdio.rs` holds these answers to
/// rmcp's, tool by tool.
#[allow(clippy::manual_async_fn)] // see `call_in_legacy_session`
fn call_in_2026_era(
    handler: Handler,
    mut params: CallToolRequestParams,
    context: HandlerContext,
    held: Held,
    lent: bool,
) -> impl Future<Output = Result<ServerResult, ErrorData>> {
    async move {
        let mut context = context;
        let declared_tasks = held.capabilities.as_ref().is_some_and(|c| c.supports_tasks());
        let response = handler.call_tool_in(&mut params, &context, true, held).await;
        if lent {
            // Unchanged: the call only borrowed the context.
            handler
                .state
                .metas
                .give_back(std::mem::take(&mut context.meta.0.0));
        }
        let mut result = unless_undeclared_task(response?, || declared_tasks)?;
        result.fill_missing_cache_hints();
        Ok(result)
    }
}

/// A call's answer as rmcp's dispatch makes it a result: a task handle is refused unless the
/// client declared tasks (SEP-2663: a client that did not cannot read one), which
/// `declared_tasks` reads only then.
fn unless_undeclared_task(
    response: CallToolResponse,
    declared_tasks: impl FnOnce() -> bool,
) -> Result<ServerResult, ErrorData> {
    if matches!(response, CallToolResponse::Task(_)) && !declared_tasks() {
        return Err(ErrorData::missing_required_client_capability(
            ClientCapabilities::builder().enable_tasks().build(),
        ));
    }
    Ok(ServerResult::from(response))
}

/// Awaits an admitted dispatch and makes its answer what the caller writes with `finish`. A
/// handler that panics is answered here, the same on every MCP path: otherwise the task
/// answering it dies silently, its client waits forever, and on stdio its place in the
/// in-flight bound is never given back.
fn answered<F, T, Fin>(dispatch: F, finish: Fin) -> Answered<F, Fin>
where
    F: Future<Output = Result<ServerResult, ErrorData>>,
    Fin: FnOnce(Result<ServerResult, ErrorData>) -> T,
{
    Answered {
        dispatch,
        finish: Some(finish),
    }
}

pin_project_lite::pin_project! {
    /// [`answered`]'s future, one flat struct: the combinators it replaces (unwind-safe,
    /// catch-unwind, two maps) each moved the dispatch again on its way into the answer's box.
    struct Answered<F, Fin> {
        #[pin]
        dispatch: F,
        finish: Option<Fin>,
    }
}

impl<F, T, Fin> Future for Answered<F, Fin>
where
    F: Future<Output = Result<ServerResult, ErrorData>>,
    Fin: FnOnce(Result<ServerResult, ErrorData>) -> T,
{
    type Output = T;

    fn poll(self: Pin<&mut Self>, cx: &mut std::task::Context<'_>) -> std::task::Poll<T> {
        let this = self.project();
        let dispatch = this.dispatch;
        let answer = match std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| dispatch.poll(cx))) {
            Ok(std::task::Poll::Pending) => return std::task::Poll::Pending,
            Ok(std::task::Poll::Ready(answer)) => answer,
            Err(payload) => Err(panicked(payload.as_ref())),
        };
        let finish = this
            .finish
            .take()
            .expect("an answered future is not polled again");
        std::task::Poll::Ready(finish(answer))
    }
}

impl rmcp::Service<RoleServer> for Session {
    // Not an `async fn`: one would hold the request and its context in its state beside the
    // dispatch it moved them into.
    fn handle_request(
        &self,
        request: ClientRequest,
        context: RequestContext<RoleServer>,
    ) -> impl Future<Output = Result<ServerResult, ErrorData>> + rmcp::service::MaybeSendFuture + '_ {
        let admitted = self.admit(
            &request,
            &context.meta,
            super::era::modern_of(&context.meta, &context.peer),
        );
        // Boxed: rmcp's dispatch future is as large as the largest handler's, and rmcp's loop
        // moves the task holding it several times per request (spawn, stage changes); a
        // pointer is cheaper to move.
        let dispatch =
            admitted.map(|()| Box::pin(rmcp::Service::handle_request(&self.handler, request, context)));
        async move { answered(dispatch?, std::convert::identity).await }
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
