//! The request spans (`mcp::observe`) exported as OpenTelemetry traces over OTLP/HTTP
//! (feature `otlp`): a caller's `traceparent` — from the request's `_meta` or the HTTP header —
//! becomes the parent of the request's span, with the `tracestate` of the same source carried
//! along, so the agent's trace (and its vendors' state) continues into the tool and through
//! whatever the tool calls.
//!
//! ```no_run
//! # async fn run() -> Result<(), Box<dyn std::error::Error>> {
//! // Inside the tokio runtime that serves: the exporter sends from it.
//! let traces = surface_runtime::otlp::Otlp::new("http://127.0.0.1:4318/v1/traces")
//!     .service_name("ops")
//!     .install()?;
//! // … serve; then flush what is buffered before the process ends:
//! traces.shutdown();
//! # Ok(()) }
//! ```

use opentelemetry::propagation::TextMapPropagator;
use opentelemetry::trace::TracerProvider as _;
use opentelemetry_otlp::{Protocol, WithExportConfig};
use opentelemetry_sdk::trace::SdkTracerProvider;
use std::fmt;
use tracing_subscriber::Layer;
use tracing_subscriber::layer::SubscriberExt;
use tracing_subscriber::util::SubscriberInitExt;

/// Where and how to export traces.
#[derive(Clone, Debug)]
pub struct Otlp {
    endpoint: String,
    service: String,
    json: bool,
}

/// Why traces could not be set up.
#[derive(Debug)]
pub struct OtlpError(String);

impl fmt::Display for OtlpError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "surface-otlp: {}", self.0)
    }
}

impl std::error::Error for OtlpError {}

/// Keeps the exporter; [`shutdown`](Traces::shutdown) (or dropping it) flushes what is
/// buffered.
pub struct Traces {
    provider: Option<SdkTracerProvider>,
}

impl Traces {
    /// Sends what is buffered and stops the exporter. Blocks until then: on a current-thread
    /// runtime call it outside the runtime (after `block_on` returns), or from
    /// `spawn_blocking`.
    pub fn shutdown(mut self) {
        if let Some(provider) = self.provider.take() {
            let _ = provider.shutdown();
        }
    }
}

impl Drop for Traces {
    fn drop(&mut self) {
        if let Some(provider) = self.provider.take() {
            let _ = provider.shutdown();
        }
    }
}

impl Otlp {
    /// Traces to the OTLP/HTTP traces `endpoint` (a collector's `http://HOST:4318/v1/traces`),
    /// as protobuf.
    pub fn new(endpoint: impl Into<String>) -> Otlp {
        Otlp {
            endpoint: endpoint.into(),
            service: "surface".to_owned(),
            json: false,
        }
    }

    /// The `service.name` the traces carry (default `surface`).
    pub fn service_name(mut self, name: impl Into<String>) -> Otlp {
        self.service = name.into();
        self
    }

    /// Sends OTLP/JSON instead of protobuf.
    pub fn json(mut self) -> Otlp {
        self.json = true;
        self
    }

    /// The exporter, and a `tracing` layer that hands it every span: for an application that
    /// builds its own subscriber. Call it inside the tokio runtime the exporter is to use.
    pub fn layer<S>(self) -> Result<(impl Layer<S>, Traces), OtlpError>
    where
        S: tracing::Subscriber + for<'a> tracing_subscriber::registry::LookupSpan<'a>,
    {
        let protocol = match self.json {
            true => Protocol::HttpJson,
            false => Protocol::HttpBinary,
        };
        let exporter = opentelemetry_otlp::SpanExporter::builder()
            .with_http()
            .with_endpoint(self.endpoint)
            .with_protocol(protocol)
            .build()
            .map_err(|e| OtlpError(format!("cannot build the OTLP exporter: {e}")))?;
        let current = tokio::runtime::Handle::try_current().map_err(|_| {
            OtlpError("set up traces inside a tokio runtime (the exporter sends from it)".to_owned())
        })?;
        use opentelemetry_sdk::trace::span_processor_with_async_runtime::BatchSpanProcessor;
        let resource = opentelemetry_sdk::Resource::builder()
            .with_service_name(self.service)
            .build();
        let builder = SdkTracerProvider::builder().with_resource(resource);
        let builder = match current.runtime_flavor() {
            tokio::runtime::RuntimeFlavor::CurrentThread => builder.with_span_processor(
                BatchSpanProcessor::builder(exporter, opentelemetry_sdk::runtime::TokioCurrentThread).build(),
            ),
            _ => builder.with_span_processor(
                BatchSpanProcessor::builder(exporter, opentelemetry_sdk::runtime::Tokio).build(),
            ),
        };
        let provider = builder.build();
        let layer = tracing_opentelemetry::layer().with_tracer(provider.tracer("surface"));
        Ok((
            layer,
            Traces {
                provider: Some(provider),
            },
        ))
    }

    /// Installs the global `tracing` subscriber: every span to the exporter, and warnings and
    /// errors to stderr as [`init_tracing`](crate::mcp::init_tracing) writes them. Fails when
    /// a global subscriber is already set.
    pub fn install(self) -> Result<Traces, OtlpError> {
        let (layer, traces) = self.layer()?;
        let stderr = tracing_subscriber::fmt::layer()
            .with_writer(std::io::stderr)
            .with_ansi(false)
            .with_filter(tracing_subscriber::filter::LevelFilter::WARN);
        tracing_subscriber::registry()
            .with(layer)
            .with(stderr)
            .try_init()
            .map_err(|e| OtlpError(format!("cannot install the tracing subscriber: {e}")))?;
        Ok(traces)
    }
}

/// Makes the caller's W3C `traceparent` the parent of `span`, carrying its `tracestate` (which
/// the span and its children then carry on); a malformed one is ignored: the span starts a
/// trace of its own.
pub(crate) fn continue_trace(span: &tracing::Span, traceparent: &str, tracestate: Option<&str>) {
    use tracing_opentelemetry::OpenTelemetrySpanExt;
    let mut carrier = std::collections::HashMap::from([("traceparent".to_owned(), traceparent.to_owned())]);
    if let Some(state) = tracestate {
        carrier.insert("tracestate".to_owned(), state.to_owned());
    }
    let parent = opentelemetry_sdk::propagation::TraceContextPropagator::new().extract(&carrier);
    let _ = span.set_parent(parent);
}
