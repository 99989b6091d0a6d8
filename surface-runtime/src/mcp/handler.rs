//! The rmcp `ServerHandler`: each request, in either protocol era, handed to the module that
//! does it — the served state (`served.rs`), the requests (`requests.rs`), the subscriptions
//! (`subscriptions.rs`), completions and prompts. Nothing is decided here; every request is
//! observed here (`observe.rs`: its span, its metrics), the one place every face passes.

use super::observe::{self, Target};
use super::results::branded;
use super::session::Handler;
use crate::sync::lock;
use rmcp::model::*;
use rmcp::service::{RequestContext, SubscriptionContext};
use rmcp::{ErrorData, RoleServer, ServerHandler};

impl Handler {
    /// Whether this request's client is told about the served views (MCP Apps): only one that
    /// declares the extension (its capabilities are read only when a view is served).
    fn tells_ui(
        &self,
        generation: &super::generation::Generation,
        context: &RequestContext<RoleServer>,
    ) -> bool {
        !generation.views.is_empty() && super::apps::declared(context.client_capabilities().as_ref())
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
        let mut result = self.negotiate_initialize(&request)?;
        result.capabilities = super::apps::told(result.capabilities, Some(&request.capabilities));
        result.instructions = self.shared.instructions.read();
        *lock(&self.state.legacy_peer) = Some(context.peer.clone());
        self.state.opened.get_or_init(observe::Gauged::session);
        #[cfg(feature = "http")]
        super::http_direct::claim(&context, &self.state);
        Ok(result)
    }

    async fn discover(&self, context: RequestContext<RoleServer>) -> Result<DiscoverResult, ErrorData> {
        let mut info = self.get_info();
        info.capabilities = super::apps::told(info.capabilities, context.client_capabilities().as_ref());
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
        let span = observe::span("resources/read", Target::Resource(&request.uri), &context);
        let principal = self.principal(&context);
        observe::request(span, self.read(request.uri, principal.as_deref())).await
    }

    #[allow(deprecated)]
    async fn subscribe(
        &self,
        request: SubscribeRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<(), ErrorData> {
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
        observe::request(span, Handler::subscribe(self, request.uri, context.peer)).await
    }

    #[allow(deprecated)]
    async fn unsubscribe(
        &self,
        request: UnsubscribeRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<(), ErrorData> {
        let _span =
            observe::span("resources/unsubscribe", Target::Resource(&request.uri), &context).entered();
        Handler::unsubscribe(self, &request.uri);
        Ok(())
    }

    fn accepted_subscription_filter(&self, requested: &SubscriptionFilter) -> Option<SubscriptionFilter> {
        Some(self.accept_filter(requested))
    }

    async fn listen(&self, context: SubscriptionContext) -> Result<(), ErrorData> {
        Handler::listen(self, context).await
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        use tracing::Instrument;
        let name = request.name.clone();
        let call = observe::Call::start(&name, &context);
        let answer = self.call(request, context).instrument(call.span()).await;
        call.end(
            &name,
            || self.shared.current().tools.contains_key(name.as_ref()),
            &answer,
        );
        answer
    }

    async fn complete(
        &self,
        request: CompleteRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CompleteResult, ErrorData> {
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
        let _span = observe::span("prompts/list", Target::None, &context).entered();
        let prompts = self.shared.current().prompt_list.to_vec();
        Ok(ListPromptsResult::with_all_items(prompts))
    }

    async fn get_prompt(
        &self,
        request: GetPromptRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<GetPromptResponse, ErrorData> {
        let span = observe::span("prompts/get", Target::Prompt(&request.name), &context);
        observe::request(span, self.prompt(request, context)).await
    }

    #[allow(deprecated)]
    async fn set_level(
        &self,
        request: SetLevelRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<(), ErrorData> {
        // 2026-07-28 removed it (a request carries its level in `_meta`).
        if super::requests::modern(&context) {
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
        let _span = observe::span("skills/list", Target::None, &context).entered();
        let principal = self.principal(&context);
        Ok(self.shared.current().list_skills(principal.as_deref()))
    }

    async fn get_skill(
        &self,
        request: GetSkillRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<GetSkillResult, ErrorData> {
        let _span = observe::span("skills/get", Target::Resource(&request.uri), &context).entered();
        let principal = self.principal(&context);
        self.shared
            .current()
            .get_skill(&request.uri, principal.as_deref())
    }

    async fn on_custom_request(
        &self,
        request: CustomRequest,
        context: RequestContext<RoleServer>,
    ) -> Result<CustomResult, ErrorData> {
        super::requests::custom(request, &context)
    }
}
