//! What the handler's requests do: resolve a URI or a tool on the current generation (or say
//! why a retired one is gone), read, call, render a prompt, and answer a method rmcp did not
//! recognise. They read the connection they came on through [`Serving`], which the session
//! builds (`session.rs`), so this module names no session.

use super::asking::Deferral;
use super::cancel::until_cancelled;
use super::context::LogFilter;
use super::generation::Generation;
use super::handler_context::HandlerContext;
use super::results::{self, branded};
use super::served::Shared;
use super::watch::Target;
use crate::failure::{Failure, FailureKind};
use crate::schema;
use crate::table::ToolEntry;
use crate::tool::TaskSupport;
use rmcp::ErrorData;
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, ClientCapabilities, CustomRequest, CustomResult, ErrorCode,
    GetPromptRequestParams, GetPromptResponse, ReadResourceResponse, ReadResourceResult,
};
use std::sync::Arc;
use tokio_util::sync::CancellationToken;

/// MCP's "URL elicitation required" error: the call needs the user at a URL first.
const URL_ELICITATION_REQUIRED: ErrorCode = ErrorCode(-32042);

pub(crate) fn unknown_resource(uri: &str) -> ErrorData {
    ErrorData::resource_not_found(
        branded(&format!("unknown resource \"{uri}\"")),
        Some(serde_json::json!({ "uri": uri })),
    )
}

fn read_error(uri: &str, f: Failure) -> ErrorData {
    let message = branded(&format!("{uri}: {}", f.message));
    match f.kind {
        FailureKind::Unknown => {
            ErrorData::resource_not_found(message, Some(serde_json::json!({ "uri": uri })))
        }
        FailureKind::InvalidInput { .. } => ErrorData::invalid_params(message, None),
        _ => ErrorData::internal_error(message, None),
    }
}

/// What serving one request reads: the served state and the connection's own part of it.
pub(crate) struct Serving<'a> {
    pub(crate) shared: &'a Arc<Shared>,
    /// The least severe log level the connection hears.
    pub(crate) log: &'a Arc<LogFilter>,
    /// The connection, for its cap on live tasks.
    pub(crate) session: usize,
    /// Who the connection is, when its face fixed it for the whole connection.
    pub(crate) principal: Option<&'a Arc<crate::Principal>>,
    /// Cancelled when the connection shuts down gracefully: its listen streams end.
    pub(crate) draining: &'a tokio_util::sync::CancellationToken,
}

impl Serving<'_> {
    /// Who makes this request: the one its face identified (an authenticated HTTP request),
    /// or the connection's own (stdio given scopes); `None` reaches everything.
    pub(crate) fn principal(&self, extensions: &rmcp::model::Extensions) -> Option<Arc<crate::Principal>> {
        super::caller::principal(extensions).or_else(|| self.principal.cloned())
    }

    /// `uri` on the current generation, or the refusal `resources/read` gives.
    fn resolve(&self, uri: &str) -> Result<Target, ErrorData> {
        let generation = self.shared.current();
        match Target::resolve(&generation, uri) {
            Some(target) => Ok(target),
            None => Err(match self.shared.tombstone("resource", uri, &generation) {
                Some(message) => ErrorData::invalid_params(message, None),
                None => unknown_resource(uri),
            }),
        }
    }

    /// Resolves `uri` for a subscription: the same refusals as `resources/read` (an unknown
    /// URI; an item id its collection's key type does not spell canonically), but an absent
    /// item is a valid address (a subscription hears it appear) and a link that is down does
    /// not refuse (the watch re-attaches).
    pub(crate) async fn resolve_watchable(&self, uri: &str) -> Result<Target, ErrorData> {
        let target = self.resolve(uri)?;
        if let Some(id) = &target.item
            && let Ok(lease) = target.generation.link.lease().await
            && let Ok(dispatch) = lease.bundle.dispatch_for(target.entry.owner.as_deref())
            && let Err(f) = dispatch.read_item(target.entry.member, id).await
            && matches!(f.kind, FailureKind::InvalidInput { .. })
        {
            return Err(read_error(uri, f));
        }
        Ok(target)
    }

    /// `resources/read`.
    pub(crate) async fn read(
        &self,
        uri: String,
        principal: Option<&crate::Principal>,
    ) -> Result<ReadResourceResponse, ErrorData> {
        // Outside the caller's scopes: as if it did not exist (HTTP answers 403 before).
        if !self.shared.current().reaches_uri(&uri, principal) {
            return Err(unknown_resource(&uri));
        }
        if let Some(view) = self.shared.current().views.read(&uri) {
            return Ok(view.into());
        }
        if let Some(skill) = self.shared.current().skills.get(&uri) {
            return Ok(skill.read().into());
        }
        let Target {
            generation,
            entry,
            item,
            ..
        } = self.resolve(&uri)?;
        let lease = generation.link.lease().await.map_err(|f| read_error(&uri, f))?;
        let answer = match lease.bundle.dispatch_for(entry.owner.as_deref()) {
            Ok(dispatch) => match &item {
                None => dispatch.read(entry.member).await,
                Some(id) => dispatch.read_item(entry.member, id).await,
            },
            Err(f) => Err(f),
        };
        let value = match answer {
            Ok(v) => v,
            Err(f) => return Err(read_error(&uri, generation.link.after(&lease, f).await)),
        };
        let contents =
            super::resources::contents(entry.body, uri.clone(), value).map_err(|f| read_error(&uri, f))?;
        Ok(ReadResourceResult::new(vec![contents]).into())
    }

    /// `tools/call`: a failure of the tool is a result (`isError`), an unknown tool an error.
    /// Its arguments, responses and state are taken out of `request`; the name stays, for the
    /// caller's record of the call (borrowed, not copied). `modern`: whether the request is of
    /// the 2026-07-28 era ([`super::era::modern`], read once by the caller); `held`: what the
    /// caller holds for it already ([`super::asking::Held`]). `context` stays
    /// the caller's: a 2026-07-28 call's `_meta` is given back to its connection after
    /// ([`super::meta_memo`]). Not an `async fn`, which would hold its arguments twice.
    #[allow(clippy::manual_async_fn)]
    pub(crate) fn call<'a>(
        &'a self,
        request: &'a mut CallToolRequestParams,
        context: &'a HandlerContext,
        modern: bool,
        held: super::asking::Held,
    ) -> impl Future<Output = Result<CallToolResponse, ErrorData>> + 'a {
        async move {
            let generation = self.shared.current();
            let name = request.name.as_ref();
            // A tool outside the caller's scopes does not exist for it (HTTP answers 403 before).
            let principal = self.principal(&context.extensions);
            let entry = generation
                .tools
                .get(name)
                .filter(|_| generation.reaches_tool(name, principal.as_deref()));
            let Some(entry) = entry else {
                return match self.shared.tombstone("tool", name, &generation) {
                    Some(message) => Ok(results::failure(Failure::new(FailureKind::Unknown, message)).into()),
                    None => Err(ErrorData::invalid_params(
                        branded(&format!("unknown tool \"{name}\"")),
                        None,
                    )),
                };
            };
            let layers = &self.shared.settings.layers;
            if !layers.is_empty() {
                let call =
                    crate::layer::CallInfo::new(name, principal.as_deref(), request.arguments.as_ref());
                if let Err(refusal) = layers.admit(&call) {
                    return Ok(results::failure(Failure::new(FailureKind::Error, refusal)).into());
                }
            }
            if entry.task != TaskSupport::Never {
                let declared = match &held.capabilities {
                    Some(known) => known.supports_tasks(),
                    None => context.client_capabilities().is_some_and(|c| c.supports_tasks()),
                };
                if modern && declared {
                    return self.call_as_task(&generation, entry, request, context).await;
                }
                if modern && entry.task == TaskSupport::Required {
                    return Err(ErrorData::missing_required_client_capability(
                        ClientCapabilities::builder().enable_tasks().build(),
                    ));
                }
            }
            let round = if modern {
                super::asking::Round::modern(
                    context,
                    held,
                    "tools/call",
                    name,
                    super::asking::Arguments::Tool(request.arguments.as_ref()),
                    request.input_responses.take(),
                    request.request_state.take(),
                )?
            } else {
                super::asking::Round::legacy(context, self.shared.settings.ask_timeout)
            };
            let audited = crate::audit::Audited::start(self.shared.settings.audit, entry.mutates, || {
                serde_json::Value::Object(request.arguments.clone().unwrap_or_default()).to_string()
            });
            let answer = match schema::unwrap_input(&entry.input, request.arguments.take()) {
                Ok(input) => {
                    let call = super::context::for_request(context, self.log, &round, principal.clone());
                    let run = call.scope(until_cancelled(
                        &context.ct,
                        run_tool(&generation, &entry.target, input, &context.ct),
                    ));
                    match round.run(run).await {
                        Ok(answer) => answer,
                        Err(halt) => {
                            if let Some(audited) = audited {
                                audited.end(principal.as_deref(), name, "interrupted");
                            }
                            return halt.into();
                        }
                    }
                }
                Err(e) => Err(invalid_argument(e)),
            };
            if let Some(audited) = audited {
                audited.answered(principal.as_deref(), name, &answer);
            }
            let result = match answer {
                Ok(output) => results::success(output),
                // The 2025-11-25 error, not a result: the host shows the URL, then retries. The
                // 2026-07-28 era retired -32042 (a call asks with `elicit_url` there, one
                // `input_required` round), so there it stays the tool's error, naming the URL.
                Err(failure) if failure.kind == FailureKind::UrlElicitationRequired && !modern => {
                    return Err(ErrorData::new(
                        URL_ELICITATION_REQUIRED,
                        branded(&failure.message),
                        failure.detail,
                    ));
                }
                Err(failure) => results::failure(failure),
            };
            // A view-bound tool's answer, text first, with its page for a client that renders it
            // (the capabilities are read only for such a tool: most calls have no view).
            let client = entry.view.and_then(|_| {
                context
                    .client_capabilities()
                    .and_then(|c| serde_json::to_value(c).ok())
            });
            Ok(generation.views.finish(entry.view, client, result).into())
        }
    }

    /// `tools/call` of a task tool for a client that declared tasks (2026-07-28). The call runs
    /// inline until it first waits: waiting on questions it asked before the task
    /// (`Asking::before_task`), it ends there with an `input_required` round of this request,
    /// as any call does on 2026-07-28; otherwise it is handed, still running, to a new task,
    /// and the task's id is the answer (`CreateTaskResult`, once `tasks/get` resolves it).
    /// Arguments that do not fit are answered inline, as always.
    async fn call_as_task(
        &self,
        generation: &Arc<Generation>,
        entry: &ToolEntry,
        request: &mut CallToolRequestParams,
        context: &HandlerContext,
    ) -> Result<CallToolResponse, ErrorData> {
        let round = super::asking::Round::open_deferred(
            context,
            &request.name,
            super::asking::Arguments::Tool(request.arguments.as_ref()),
            request.input_responses.take(),
            request.request_state.take(),
        )?;
        let input = match schema::unwrap_input(&entry.input, request.arguments.take()) {
            Ok(input) => input,
            Err(e) => return Ok(results::failure(invalid_argument(e)).into()),
        };
        // The call's cancellation, its task's once it is one (`tasks/cancel`).
        let cancel = CancellationToken::new();
        let principal = self.principal(&context.extensions);
        let asks = round.asks();
        let call = super::context::for_request_cancelled_by(
            context,
            self.log,
            &round,
            cancel.clone(),
            principal.clone(),
        );
        // Owned: the call may outlive this request, as its task.
        let (generation, target, stop) = (generation.clone(), entry.target.clone(), cancel.clone());
        let run = Box::pin(call.scope(async move { run_tool(&generation, &target, input, &stop).await }));
        let task: futures::future::BoxFuture<'static, super::tasks::Outcome> = match round.defer(run).await {
            Deferral::Ended(Err(super::asking::Halt::InputRequired(result))) => return Ok(result.into()),
            // It answered (or was refused) in its first poll: a task all the same, already ended.
            Deferral::Ended(end) => Box::pin(std::future::ready(task_outcome(end))),
            Deferral::Handing(call, round) => Box::pin(async move { task_outcome(round.run(call).await) }),
        };
        let created = self
            .shared
            .tasks
            .create(cancel, self.session, principal, |inputs| {
                // From here on its questions are the task's (and those waiting for it are asked).
                asks.hand_off(inputs);
                task
            })?;
        // Shared with other instances: mirrored before the id goes out (a store that cannot be
        // reached leaves the task to this instance alone, as without one).
        if let Some(stored) = created.stored {
            let _ = stored.await;
        }
        Ok(CallToolResponse::Task(rmcp::model::CreateTaskResult::new(
            created.task,
        )))
    }

    /// `prompts/get`.
    pub(crate) async fn prompt(
        &self,
        request: GetPromptRequestParams,
        context: HandlerContext,
    ) -> Result<GetPromptResponse, ErrorData> {
        let generation = self.shared.current();
        let Some(entry) = generation.prompts.get(&request.name) else {
            return Err(super::prompts::unknown(&request.name));
        };
        let lease = generation
            .link
            .lease()
            .await
            .map_err(|f| read_error(&request.name, f))?;
        let round = if super::era::modern(&context) {
            super::asking::Round::modern(
                &context,
                super::asking::Held::default(),
                "prompts/get",
                &request.name,
                super::asking::Arguments::Prompt(request.arguments.as_ref()),
                request.input_responses,
                request.request_state,
            )?
        } else {
            super::asking::Round::legacy(&context, self.shared.settings.ask_timeout)
        };
        let call =
            super::context::for_request(&context, self.log, &round, self.principal(&context.extensions));
        let render = call.scope(super::prompts::render(entry, &lease.bundle, request.arguments));
        match round.run(render).await {
            Ok(Ok(result)) => Ok(result.into()),
            Ok(Err(f)) => Err(read_error(&request.name, generation.link.after(&lease, f).await)),
            Err(halt) => halt.into(),
        }
    }
}

/// The failure an argument that does not fit the input schema answers.
fn invalid_argument(e: schema::InputError) -> Failure {
    Failure::new(
        FailureKind::InvalidInput {
            field: e.field.clone(),
        },
        format!("invalid argument `{}`: {}", e.field, e.message),
    )
}

/// Runs one tool on the generation's link; a failure that tells of the link is judged by it.
async fn run_tool(
    generation: &Generation,
    target: &super::generation::ToolTarget,
    input: serde_json::Value,
    cancel: &tokio_util::sync::CancellationToken,
) -> Result<crate::blocks::ToolOutput, Failure> {
    let lease = generation.link.lease().await?;
    match target.run(&lease.bundle, input, cancel).await {
        Ok(output) => Ok(output),
        Err(f) => Err(generation.link.after(&lease, f).await),
    }
}

/// A method rmcp did not parse: one 2026-07-28 removed, a known one with malformed params,
/// or one this server does not serve.
pub(crate) fn custom(request: CustomRequest, context: &HandlerContext) -> Result<CustomResult, ErrorData> {
    // Removed at 2026-07-28: a request of that era naming them is "not found" (HTTP 404),
    // whatever its params.
    const REMOVED_IN_2026: &[&str] = &["resources/subscribe", "resources/unsubscribe", "logging/setLevel"];
    if super::era::modern(context) && REMOVED_IN_2026.contains(&request.method.as_str()) {
        return Err(removed(request.method));
    }
    // A known method whose params did not parse lands here too: say so, not "not found".
    const KNOWN: &[&str] = &[
        "tools/call",
        "tools/list",
        "resources/read",
        "resources/list",
        "resources/templates/list",
        "resources/subscribe",
        "resources/unsubscribe",
        "subscriptions/listen",
        "prompts/get",
        "prompts/list",
        "completion/complete",
        "logging/setLevel",
    ];
    if KNOWN.contains(&request.method.as_str()) {
        return Err(ErrorData::invalid_params(
            branded(&format!("malformed params for {}", request.method)),
            None,
        ));
    }
    Err(ErrorData::new(ErrorCode::METHOD_NOT_FOUND, request.method, None))
}

/// The answer to a method the request's era does not have (as rmcp answers `ping` there).
pub(crate) fn removed(method: impl Into<std::borrow::Cow<'static, str>>) -> ErrorData {
    ErrorData::new(ErrorCode::METHOD_NOT_FOUND, method, None)
}

/// What a task ends with, from how its call ended: the tool's answer (a failure is an `isError`
/// result), or the protocol's error when the call was refused (a question the client cannot be
/// asked) — a task fails with it as the call would have.
fn task_outcome(
    end: Result<Result<crate::blocks::ToolOutput, Failure>, super::asking::Halt>,
) -> super::tasks::Outcome {
    match end {
        Ok(answer) => Ok(super::tasks::outcome(answer)),
        Err(super::asking::Halt::Refused(error)) => Err(error),
        Err(super::asking::Halt::InputRequired(_)) => Err(ErrorData::internal_error(
            branded("a task cannot end waiting for input"),
            None,
        )),
    }
}
