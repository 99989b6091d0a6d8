//! The request spans exported over OTLP/HTTP (feature `otlp`) to a collector stand-in this
//! test runs, which records every export it receives: the span of a `tools/call` carries the
//! MCP attributes, continues the caller's trace from `_meta.traceparent` with its
//! `_meta.tracestate`, and is the parent of the span the tool opens, which carries that state
//! on.

mod common;

use serde_json::{Value, json};
use std::convert::Infallible;
use std::sync::{Arc, Mutex};
use std::time::Duration;
use surface::mcp::McpServer;
use surface::otlp::Otlp;
use surface::{Cell, Expose, expose, surface};
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};

/// A job queue whose one verb opens a span of its own.
#[surface]
pub struct Jobs {
    /// Jobs run so far.
    #[cell]
    pub done: u64,
}

#[surface]
impl Jobs {
    /// Runs one job.
    #[procedure("job.run")]
    async fn run(&self) -> Result<u64, Infallible> {
        let _work = tracing::info_span!("job.work").entered();
        Ok(self.done.update(|d| {
            *d += 1;
            *d
        }))
    }
}

const EXPOSE: Expose<Jobs> = expose!(Jobs { done: resource, "job.run": tool(mutates) });

const TRACE_ID: &str = "4bf92f3577b34da6a3ce929d0e0e4736";
const CALLER_SPAN: &str = "00f067aa0ba902b7";
const CALLER_STATE: &str = "congo=t61rcWkgMzE,rojo=00f067aa0ba902b7";

/// The collector stand-in: every body posted to `/v1/traces`, as JSON.
async fn collector() -> (String, Arc<Mutex<Vec<Value>>>) {
    let received = Arc::new(Mutex::new(Vec::new()));
    let record = received.clone();
    let app = axum::Router::new().route(
        "/v1/traces",
        axum::routing::post(move |body: axum::body::Bytes| {
            let record = record.clone();
            async move {
                let export: Value = serde_json::from_slice(&body).expect("an OTLP/JSON export");
                record.lock().unwrap().push(export);
                ([("content-type", "application/json")], "{}")
            }
        }),
    );
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let endpoint = format!("http://{}/v1/traces", listener.local_addr().unwrap());
    tokio::spawn(async move { axum::serve(listener, app).await });
    (endpoint, received)
}

/// Every span received, with the `service.name` of its resource.
fn spans(received: &[Value]) -> Vec<(String, Value)> {
    let mut all = Vec::new();
    for export in received {
        for resource in export["resourceSpans"].as_array().into_iter().flatten() {
            let service = attribute(&resource["resource"], "service.name").unwrap_or_default();
            for scope in resource["scopeSpans"].as_array().into_iter().flatten() {
                for span in scope["spans"].as_array().into_iter().flatten() {
                    all.push((service.clone(), span.clone()));
                }
            }
        }
    }
    all
}

/// The string value of attribute `key` of an OTLP span or resource.
fn attribute(of: &Value, key: &str) -> Option<String> {
    of["attributes"]
        .as_array()?
        .iter()
        .find(|a| a["key"] == key)
        .and_then(|a| a["value"]["stringValue"].as_str().map(str::to_owned))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_call_span_reaches_the_collector_in_the_callers_trace() {
    let (endpoint, received) = collector().await;
    let traces = Otlp::new(endpoint)
        .json()
        .service_name("jobs-test")
        .install()
        .unwrap();
    let served = McpServer::new("jobs", "1.0.0")
        .surface(Jobs { done: Cell::new(0) }, EXPOSE)
        .start()
        .unwrap();
    let mut io = BufReader::new(common::pipe(&served, 1 << 16));
    let mut send = async |line: Value| {
        io.get_mut()
            .write_all((line.to_string() + "\n").as_bytes())
            .await
            .unwrap();
    };
    send(
        json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
        "protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "t", "version": "0"}}}),
    )
    .await;
    send(json!({"jsonrpc": "2.0", "method": "notifications/initialized"})).await;
    send(
        json!({"jsonrpc": "2.0", "id": 3, "method": "tools/call", "params": {
        "name": "job_run", "arguments": {},
        "_meta": {
            "traceparent": format!("00-{TRACE_ID}-{CALLER_SPAN}-01"),
            "tracestate": CALLER_STATE,
        }}}),
    )
    .await;
    let answer = tokio::time::timeout(Duration::from_secs(20), async {
        loop {
            let mut line = String::new();
            io.read_line(&mut line).await.unwrap();
            let v: Value = serde_json::from_str(&line).unwrap();
            if v["id"] == 3 {
                return v;
            }
        }
    })
    .await
    .expect("the call answers");
    assert_eq!(answer["result"]["isError"], false, "{answer}");

    // Flush: the batch goes out now, not on its timer.
    tokio::task::spawn_blocking(move || traces.shutdown())
        .await
        .unwrap();
    let spans = tokio::time::timeout(Duration::from_secs(30), async {
        loop {
            let spans = spans(&received.lock().unwrap());
            if spans.iter().any(|(_, s)| s["name"] == "job.work") {
                return spans;
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    })
    .await
    .unwrap_or_else(|_| panic!("the collector received the spans: {:?}", received.lock().unwrap()));

    let (service, call) = spans
        .iter()
        .find(|(_, s)| s["name"] == "tools/call job_run")
        .unwrap_or_else(|| panic!("a span named after the call: {spans:?}"));
    assert_eq!(service, "jobs-test");
    for (key, value) in [
        ("mcp.method.name", "tools/call"),
        ("gen_ai.tool.name", "job_run"),
        ("gen_ai.operation.name", "execute_tool"),
        ("jsonrpc.request.id", "3"),
    ] {
        assert_eq!(attribute(call, key).as_deref(), Some(value), "{key}: {call}");
    }
    // SPAN_KIND_SERVER.
    assert!(call["kind"] == 2 || call["kind"] == "SPAN_KIND_SERVER", "{call}");
    // The caller's trace continues: same trace id, the caller's span as parent.
    assert_eq!(
        call["traceId"].as_str().map(str::to_ascii_lowercase).as_deref(),
        Some(TRACE_ID),
        "{call}"
    );
    assert_eq!(
        call["parentSpanId"]
            .as_str()
            .map(str::to_ascii_lowercase)
            .as_deref(),
        Some(CALLER_SPAN),
        "{call}"
    );
    // … with the caller's vendors' state, as W3C trace context carries it.
    assert_eq!(call["traceState"], CALLER_STATE, "{call}");
    assert_eq!(
        attribute(call, "tracestate").as_deref(),
        Some(CALLER_STATE),
        "{call}"
    );
    // … into the tool: its span is the call span's child, in the same trace, with that state.
    let (_, work) = spans.iter().find(|(_, s)| s["name"] == "job.work").unwrap();
    assert_eq!(work["traceId"], call["traceId"], "{work}");
    assert_eq!(work["parentSpanId"], call["spanId"], "{work}");
    assert_eq!(work["traceState"], CALLER_STATE, "{work}");
}
