//! What an operator sees of the MCP face: one `tracing` span per request, named and attributed
//! after the OpenTelemetry semantic conventions for MCP, and metrics through the [`metrics`]
//! facade (the application installs the exporter it wants; with none installed every record
//! is a no-op).
//!
//! Every face (stdio, Streamable HTTP, the in-memory client, their direct paths) hands its
//! requests to the one handler (`session.rs`), which wraps each in `request` or, for
//! `tools/call`, `Call`: so this module is the only place either is recorded.
//!
//! The names are the constants below, and only there; the guide's chapter on observability
//! lists them with their labels.
//!
//! [`metrics`]: https://docs.rs/metrics

use super::handler_context::HandlerContext;
use rmcp::ErrorData;
use rmcp::model::{CallToolResponse, RequestId};
use std::future::Future;
use std::time::Instant;
use tracing::Instrument;

/// Counter: finished `tools/call` requests, labelled [`TOOL`] and [`OUTCOME`].
pub const TOOL_CALLS: &str = "surface_tool_calls_total";
/// Histogram: how long a `tools/call` took to answer, in seconds, labelled [`TOOL`] and
/// [`OUTCOME`].
pub const TOOL_CALL_DURATION: &str = "surface_tool_call_duration_seconds";
/// Gauge: requests being answered now (every method, every session).
pub const REQUESTS_IN_FLIGHT: &str = "surface_requests_in_flight";
/// Gauge: sessions open now (opened by `initialize`, until the connection or session ends).
pub const SESSIONS: &str = "surface_sessions";
/// Gauge: URIs watched now, over legacy subscriptions and 2026-07-28 listen streams.
pub const SUBSCRIPTIONS: &str = "surface_subscriptions";
/// Counter: questions a call asked its client, labelled [`KIND`].
pub const ASKS: &str = "surface_asks_total";
/// Counter: MCP tasks created (a `tools/call` answered with a task id).
pub const TASKS_CREATED: &str = "surface_tasks_created_total";
/// Counter: round trips to Redis (a command, a script or a pipeline each count one), with the
/// `redis` feature: what a call costs the store, and what its figures in `bench/` divide by.
pub const REDIS_ROUND_TRIPS: &str = "surface_redis_round_trips_total";

/// Label: the tool's name as served (`unknown` for a name the server does not serve, so a
/// client cannot grow the label set at will).
pub const TOOL: &str = "tool";
/// Label: how a call ended — [`OK`], [`ERROR`] (answered `isError`), [`REFUSED`] (answered
/// with a JSON-RPC error: an unknown tool, a missing capability), [`TASK`] (answered with a
/// task id; the task runs on) or [`INPUT_REQUIRED`] (a 2026-07-28 round that asks the client
/// first).
pub const OUTCOME: &str = "outcome";
/// Label: what an ask asked for — `elicitation`, `sampling` or `roots`.
pub const KIND: &str = "kind";

/// [`OUTCOME`]: answered with a result.
pub const OK: &str = "ok";
/// [`OUTCOME`]: answered `isError`.
pub const ERROR: &str = "error";
/// [`OUTCOME`]: answered with a JSON-RPC error.
pub const REFUSED: &str = "refused";
/// [`OUTCOME`]: answered with a task id.
pub const TASK: &str = "task";
/// [`OUTCOME`]: answered `input_required` (the call resumes in a later round).
pub const INPUT_REQUIRED: &str = "input_required";

/// Describes every metric above to the installed recorder (its `# HELP` lines, its units).
/// Call it once after installing an exporter; recording works without it.
pub fn describe() {
    use metrics::Unit;
    metrics::describe_counter!(
        TOOL_CALLS,
        Unit::Count,
        "Finished tools/call requests, by tool and outcome."
    );
    metrics::describe_histogram!(
        TOOL_CALL_DURATION,
        Unit::Seconds,
        "How long a tools/call took to answer."
    );
    metrics::describe_gauge!(
        REQUESTS_IN_FLIGHT,
        Unit::Count,
        "MCP requests being answered now."
    );
    metrics::describe_gauge!(SESSIONS, Unit::Count, "MCP sessions open now.");
    metrics::describe_gauge!(SUBSCRIPTIONS, Unit::Count, "Resource URIs watched now.");
    metrics::describe_counter!(ASKS, Unit::Count, "Questions calls asked their client, by kind.");
    metrics::describe_counter!(TASKS_CREATED, Unit::Count, "MCP tasks created.");
}

/// The [`TOOL`] of a name the server does not serve.
const UNKNOWN_TOOL: &str = "unknown";

/// The span of one request: `mcp.method.name` now, the rest recorded by [`annotate`] only when
/// a subscriber wants the span (a disabled span computes and allocates nothing). A root: each
/// request starts its own trace (continuing only its caller's, `traceparent`), wherever it is
/// first polled — in rmcp's loop, whose connection-long span would otherwise become the parent
/// of every request, or on a task of its own.
macro_rules! request_span {
    ($method:expr) => {
        tracing::info_span!(
            target: "surface::mcp",
            parent: None,
            "mcp.request",
            otel.name = tracing::field::Empty,
            otel.kind = "server",
            otel.status_code = tracing::field::Empty,
            mcp.method.name = $method,
            gen_ai.tool.name = tracing::field::Empty,
            gen_ai.operation.name = tracing::field::Empty,
            gen_ai.prompt.name = tracing::field::Empty,
            mcp.resource.uri = tracing::field::Empty,
            mcp.session.id = tracing::field::Empty,
            mcp.protocol.version = tracing::field::Empty,
            jsonrpc.request.id = tracing::field::Empty,
            enduser.id = tracing::field::Empty,
            error.type = tracing::field::Empty,
            traceparent = tracing::field::Empty,
            tracestate = tracing::field::Empty,
        )
    };
}

/// What a request is about, for its span's name and attributes.
#[derive(Clone, Copy)]
pub(crate) enum Target<'a> {
    None,
    Tool(&'a str),
    Prompt(&'a str),
    Resource(&'a str),
}

/// The span of one request of `method` about `target`, its attributes read from `context`.
pub(crate) fn span(method: &'static str, target: Target<'_>, context: &HandlerContext) -> tracing::Span {
    let span = request_span!(method);
    if !span.is_disabled() {
        annotate(&span, method, target, context);
    }
    span
}

fn annotate(span: &tracing::Span, method: &'static str, target: Target<'_>, context: &HandlerContext) {
    // The conventions name a span "{method} {target}" when there is a target.
    match target {
        Target::None => span.record("otel.name", method),
        Target::Tool(name) => {
            span.record("gen_ai.tool.name", name);
            span.record("gen_ai.operation.name", "execute_tool");
            span.record("otel.name", format!("{method} {name}"))
        }
        Target::Prompt(name) => {
            span.record("gen_ai.prompt.name", name);
            span.record("otel.name", format!("{method} {name}"))
        }
        Target::Resource(uri) => span.record("mcp.resource.uri", uri),
    };
    match &context.id {
        RequestId::Number(n) => span.record("jsonrpc.request.id", n.to_string()),
        RequestId::String(s) => span.record("jsonrpc.request.id", s.as_ref()),
    };
    if let Some(version) = context.protocol_version() {
        span.record("mcp.protocol.version", version.as_str());
    }
    if let Some(principal) = super::caller::principal(&context.extensions) {
        span.record("enduser.id", principal.subject());
    }
    if let Some(session) = session_id(context) {
        span.record("mcp.session.id", session);
    }
    if let Some(trace) = trace_context(context) {
        span.record("traceparent", trace.parent.as_str());
        if let Some(state) = &trace.state {
            span.record("tracestate", state.as_str());
        }
        #[cfg(feature = "otlp")]
        crate::otlp::continue_trace(span, &trace.parent, trace.state.as_deref());
    }
}

/// The session a request belongs to: Streamable HTTP's `Mcp-Session-Id`.
fn session_id(context: &HandlerContext) -> Option<String> {
    header(context, "mcp-session-id")
}

/// A caller's W3C trace context: its `traceparent`, and the `tracestate` that came with it.
pub(crate) struct TraceContext {
    pub(crate) parent: String,
    pub(crate) state: Option<String>,
}

/// The caller's W3C trace context: the request's `_meta.traceparent` (the MCP convention), or
/// else the HTTP request's `traceparent` header — each with the `tracestate` of the same
/// source (a vendor's state belongs to its own parent, never to another source's).
pub(crate) fn trace_context(context: &HandlerContext) -> Option<TraceContext> {
    let meta = |key: &str| context.meta.get(key).and_then(|v| v.as_str()).map(str::to_owned);
    match meta("traceparent") {
        Some(parent) => Some(TraceContext {
            parent,
            state: meta("tracestate"),
        }),
        None => Some(TraceContext {
            parent: header(context, "traceparent")?,
            state: header(context, "tracestate"),
        }),
    }
}

/// The HTTP request header `name` a request came with (none off HTTP): from the request's
/// head, or from what the direct path kept of it ([`keep_headers`]).
fn header(context: &HandlerContext, name: &str) -> Option<String> {
    #[cfg(feature = "http")]
    {
        if let Some(parts) = context.extensions.get::<hyper::http::request::Parts>() {
            return parts
                .headers
                .get(name)
                .and_then(|v| v.to_str().ok())
                .map(str::to_owned);
        }
        if let Some(kept) = context.extensions.get::<KeptHeaders>() {
            return kept.0.get(name).and_then(|v| v.to_str().ok()).map(str::to_owned);
        }
    }
    let _ = (context, name);
    None
}

/// The headers a request's span reads, kept by the HTTP direct path (which hands the handler
/// no request head).
#[cfg(feature = "http")]
#[derive(Clone)]
struct KeptHeaders(hyper::HeaderMap);

/// Keeps in `extensions` the headers of `parts` a span reads — only when a subscriber wants
/// request spans, so the direct path copies nothing otherwise.
#[cfg(feature = "http")]
pub(crate) fn keep_headers(parts: &hyper::http::request::Parts, extensions: &mut rmcp::model::Extensions) {
    if !tracing::span_enabled!(target: "surface::mcp", tracing::Level::INFO) {
        return;
    }
    let mut kept = hyper::HeaderMap::new();
    for name in ["mcp-session-id", "traceparent", "tracestate"] {
        if let Some(value) = parts.headers.get(name) {
            kept.insert(name, value.clone());
        }
    }
    extensions.insert(KeptHeaders(kept));
}

/// Counts one in a gauge until dropped (so a cancelled request, an ended session, a dropped
/// watch leave it too).
pub(crate) struct Gauged(&'static metrics::Key);

/// The gauges' keys, hashed once when compiled (`gauge!` with a name builds and hashes its key
/// on every use, twice per request).
static REQUESTS_IN_FLIGHT_KEY: metrics::Key = metrics::Key::from_static_name(REQUESTS_IN_FLIGHT);
static SESSIONS_KEY: metrics::Key = metrics::Key::from_static_name(SESSIONS);
static SUBSCRIPTIONS_KEY: metrics::Key = metrics::Key::from_static_name(SUBSCRIPTIONS);

impl Gauged {
    /// One more request in flight.
    fn in_flight() -> Gauged {
        Gauged::enter(&REQUESTS_IN_FLIGHT_KEY)
    }

    /// One more open session.
    pub(crate) fn session() -> Gauged {
        Gauged::enter(&SESSIONS_KEY)
    }

    /// One more watched URI.
    pub(crate) fn watch() -> Gauged {
        Gauged::enter(&SUBSCRIPTIONS_KEY)
    }

    fn enter(key: &'static metrics::Key) -> Gauged {
        metrics::with_recorder(|recorder| recorder.register_gauge(key, &METADATA).increment(1.0));
        Gauged(key)
    }
}

impl Drop for Gauged {
    fn drop(&mut self) {
        metrics::with_recorder(|recorder| recorder.register_gauge(self.0, &METADATA).decrement(1.0));
    }
}

/// Records a JSON-RPC error's code as the span's `error.type`.
fn record_error(span: &tracing::Span, error: &ErrorData) {
    if !span.is_disabled() {
        span.record("error.type", error.code.0.to_string());
        span.record("otel.status_code", "ERROR");
    }
}

/// Answers a request with `answer`, inside its `span` ([`span`]) and counted in flight.
pub(crate) fn request<T, F: Future<Output = Result<T, ErrorData>>>(
    span: tracing::Span,
    answer: F,
) -> Request<F> {
    Request {
        answer: answer.instrument(span.clone()),
        span,
        _in_flight: Gauged::in_flight(),
    }
}

pin_project_lite::pin_project! {
    /// [`request`]'s future: by hand, as an `async fn` would hold `answer` twice.
    pub(crate) struct Request<F> {
        #[pin]
        answer: tracing::instrument::Instrumented<F>,
        span: tracing::Span,
        _in_flight: Gauged,
    }
}

impl<T, F: Future<Output = Result<T, ErrorData>>> Future for Request<F> {
    type Output = Result<T, ErrorData>;

    fn poll(
        self: std::pin::Pin<&mut Self>,
        cx: &mut std::task::Context<'_>,
    ) -> std::task::Poll<Self::Output> {
        let this = self.project();
        let result = std::task::ready!(this.answer.poll(cx));
        if let Err(error) = &result {
            record_error(this.span, error);
        }
        std::task::Poll::Ready(result)
    }
}

/// One `tools/call` being answered: its span, its time, its place in flight.
pub(crate) struct Call {
    span: tracing::Span,
    started: Instant,
    _in_flight: Gauged,
}

impl Call {
    pub(crate) fn start(tool: &str, context: &HandlerContext) -> Call {
        Call {
            span: span("tools/call", Target::Tool(tool), context),
            started: Instant::now(),
            _in_flight: Gauged::in_flight(),
        }
    }

    pub(crate) fn span(&self) -> tracing::Span {
        self.span.clone()
    }

    /// Records how the call of `tool` ended; `served` says whether the server serves `tool`
    /// (asked only for a refusal, the one answer an unknown name gets).
    pub(crate) fn end(
        self,
        tool: &str,
        served: impl FnOnce() -> bool,
        answer: &Result<CallToolResponse, ErrorData>,
    ) {
        let outcome = match answer {
            Ok(CallToolResponse::Task(_)) => TASK,
            Ok(CallToolResponse::InputRequired(_)) => INPUT_REQUIRED,
            Ok(CallToolResponse::Complete(r)) if r.is_error == Some(true) => ERROR,
            Ok(_) => OK,
            Err(error) => {
                record_error(&self.span, error);
                REFUSED
            }
        };
        if outcome == ERROR && !self.span.is_disabled() {
            self.span.record("error.type", "tool_error");
            self.span.record("otel.status_code", "ERROR");
        }
        let tool = match outcome {
            REFUSED if !served() => UNKNOWN_TOOL,
            _ => tool,
        };
        let seconds = self.started.elapsed().as_secs_f64();
        call_keys::with(tool, outcome, |keys| {
            metrics::with_recorder(|recorder| {
                recorder
                    .register_histogram(&keys.duration, &METADATA)
                    .record(seconds);
                recorder.register_counter(&keys.calls, &METADATA).increment(1);
            })
        });
    }
}

/// Where this module's records say they come from (what the facade's macros would pass).
static METADATA: metrics::Metadata<'static> =
    metrics::Metadata::new(module_path!(), metrics::Level::INFO, Some(module_path!()));

/// The keys of the two records a finished call makes, built once per tool and outcome: a
/// key is built with its labels owned and hashed, and building two per call cost ~7 % of a
/// stdio `tools/call`'s instructions. Only served names reach it (an unknown one is recorded
/// as `unknown`), and it holds at most [`call_keys::CACHED`] names, building the keys per call
/// past that.
mod call_keys {
    use super::{OUTCOME, TOOL, TOOL_CALL_DURATION, TOOL_CALLS};
    use crate::sync::{read, write};
    use metrics::{Key, Label};
    use std::collections::HashMap;
    use std::sync::{LazyLock, OnceLock, RwLock};

    /// How many tool names the cache holds (a roster of more serves the rest uncached).
    pub(super) const CACHED: usize = 4096;

    /// The outcomes, in the order of [`Tool`]'s slots.
    const OUTCOMES: [&str; 5] = [
        super::OK,
        super::ERROR,
        super::REFUSED,
        super::TASK,
        super::INPUT_REQUIRED,
    ];

    pub(super) struct Keys {
        pub(super) duration: Key,
        pub(super) calls: Key,
    }

    impl Keys {
        fn new(tool: &str, outcome: &'static str) -> Keys {
            let labels = vec![
                Label::new(TOOL, tool.to_owned()),
                Label::from_static_parts(OUTCOME, outcome),
            ];
            Keys {
                duration: Key::from_parts(TOOL_CALL_DURATION, labels.clone()),
                calls: Key::from_parts(TOOL_CALLS, labels),
            }
        }
    }

    /// One tool's keys, by outcome, each built on its first call.
    #[derive(Default)]
    struct Tool([OnceLock<Keys>; OUTCOMES.len()]);

    /// foldhash: read on every call, keyed by the served tools' names.
    static TOOLS: LazyLock<RwLock<HashMap<Box<str>, Tool, foldhash::fast::RandomState>>> =
        LazyLock::new(RwLock::default);

    /// Runs `record` with the keys of `tool`'s calls that ended in `outcome`.
    pub(super) fn with<T>(tool: &str, outcome: &'static str, record: impl FnOnce(&Keys) -> T) -> T {
        let Some(slot) = OUTCOMES.iter().position(|o| *o == outcome) else {
            return record(&Keys::new(tool, outcome));
        };
        if let Some(keys) = read(&TOOLS).get(tool) {
            return record(keys.0[slot].get_or_init(|| Keys::new(tool, outcome)));
        }
        let mut tools = write(&TOOLS);
        if tools.len() >= CACHED && !tools.contains_key(tool) {
            drop(tools);
            return record(&Keys::new(tool, outcome));
        }
        let keys = tools.entry(tool.into()).or_default();
        record(keys.0[slot].get_or_init(|| Keys::new(tool, outcome)))
    }
}

/// Counts one question asked of a client: `method` is the request it goes out as.
pub(crate) fn asked(method: &str) {
    let kind = match method {
        "elicitation/create" => "elicitation",
        "sampling/createMessage" => "sampling",
        _ => "roots",
    };
    metrics::counter!(ASKS, KIND => kind).increment(1);
}

/// Counts one task created.
pub(crate) fn task_created() {
    metrics::counter!(TASKS_CREATED).increment(1);
}
