//! One `tracing` span per MCP request, with the OpenTelemetry MCP attributes, on stdio and
//! over Streamable HTTP: read back through a subscriber that records every span it is given.

mod common;

use serde_json::{Value, json};
use std::collections::BTreeMap;
use std::convert::Infallible;
use std::sync::{Arc, Mutex};
use std::time::Duration;
use surface::mcp::{HttpOptions, McpServer};
use surface::{Cell, Expose, expose, surface};
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};
use tracing::field::{Field, Visit};
use tracing::span::{Attributes, Id, Record};
use tracing_subscriber::layer::{Context, SubscriberExt};
use tracing_subscriber::registry::LookupSpan;

#[surface]
pub struct Counter {
    /// How far it has counted.
    #[cell]
    pub count: u32,
}

#[surface]
impl Counter {
    /// Adds one and answers the new count.
    #[procedure("count.up")]
    async fn up(&self) -> Result<u32, Infallible> {
        // Inside the tool: the request's span is the current one.
        tracing::info!("counting");
        Ok(self.count.update(|c| {
            *c += 1;
            *c
        }))
    }
}

const EXPOSE: Expose<Counter> = expose!(Counter { count: resource, "count.up": tool(mutates) });

/// One closed span: its name and fields, and the events emitted inside it.
#[derive(Clone, Debug, Default)]
struct Seen {
    name: &'static str,
    /// Whether it has no parent span (it starts its own trace).
    root: bool,
    fields: BTreeMap<String, String>,
    events: Vec<String>,
}

#[derive(Clone, Default)]
struct Spans(Arc<Mutex<Vec<Seen>>>);

struct Fields<'a>(&'a mut BTreeMap<String, String>);

impl Visit for Fields<'_> {
    fn record_str(&mut self, field: &Field, value: &str) {
        self.0.insert(field.name().to_owned(), value.to_owned());
    }
    fn record_debug(&mut self, field: &Field, value: &dyn std::fmt::Debug) {
        self.0.insert(field.name().to_owned(), format!("{value:?}"));
    }
}

impl<S: tracing::Subscriber + for<'a> LookupSpan<'a>> tracing_subscriber::Layer<S> for Spans {
    fn on_new_span(&self, attrs: &Attributes<'_>, id: &Id, ctx: Context<'_, S>) {
        let mut seen = Seen {
            name: attrs.metadata().name(),
            root: ctx.span(id).unwrap().parent().is_none(),
            ..Seen::default()
        };
        attrs.record(&mut Fields(&mut seen.fields));
        ctx.span(id).unwrap().extensions_mut().insert(seen);
    }

    fn on_record(&self, id: &Id, values: &Record<'_>, ctx: Context<'_, S>) {
        let span = ctx.span(id).unwrap();
        let mut extensions = span.extensions_mut();
        let seen = extensions.get_mut::<Seen>().unwrap();
        values.record(&mut Fields(&mut seen.fields));
    }

    fn on_event(&self, event: &tracing::Event<'_>, ctx: Context<'_, S>) {
        if let Some(span) = ctx.event_span(event) {
            let mut fields = BTreeMap::new();
            event.record(&mut Fields(&mut fields));
            if let Some(seen) = span.extensions_mut().get_mut::<Seen>() {
                seen.events.push(fields.remove("message").unwrap_or_default());
            }
        }
    }

    fn on_close(&self, id: Id, ctx: Context<'_, S>) {
        let span = ctx.span(&id).unwrap();
        if let Some(seen) = span.extensions_mut().remove::<Seen>() {
            self.0.lock().unwrap().push(seen);
        }
    }
}

impl Spans {
    /// The closed request spans whose `mcp.method.name` is `method`.
    fn of(&self, method: &str) -> Vec<Seen> {
        self.0
            .lock()
            .unwrap()
            .iter()
            .filter(|s| {
                s.name == "mcp.request" && s.fields.get("mcp.method.name").map(String::as_str) == Some(method)
            })
            .cloned()
            .collect()
    }

    /// Waits (generously) until `done` holds of the spans seen.
    async fn wait(&self, what: &str, mut done: impl FnMut(&Spans) -> bool) {
        let waited = tokio::time::timeout(Duration::from_secs(30), async {
            while !done(self) {
                tokio::time::sleep(Duration::from_millis(20)).await;
            }
        })
        .await;
        assert!(waited.is_ok(), "{what}: {:?}", self.0.lock().unwrap());
    }
}

const PARENT: &str = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01";
const HEADER_PARENT: &str = "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01";

fn server() -> surface::mcp::ServedMcp {
    McpServer::new("counter", "1.0.0")
        .surface(Counter { count: Cell::new(0) }, EXPOSE)
        .start()
        .unwrap()
}

/// Sends one JSON-RPC line on `io` and answers the message with `id`.
async fn request(io: &mut BufReader<tokio::io::DuplexStream>, id: u64, method: &str, params: Value) -> Value {
    let line = json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}).to_string() + "\n";
    io.get_mut().write_all(line.as_bytes()).await.unwrap();
    loop {
        let mut got = String::new();
        tokio::time::timeout(Duration::from_secs(20), io.read_line(&mut got))
            .await
            .expect("an answer in time")
            .unwrap();
        let v: Value = serde_json::from_str(&got).unwrap();
        if v["id"] == id {
            return v;
        }
    }
}

#[tokio::test]
async fn every_request_has_one_span_with_the_mcp_attributes() {
    let spans = Spans::default();
    tracing::subscriber::set_global_default(tracing_subscriber::registry().with(spans.clone())).unwrap();
    let served = server();

    // Over stdio (an in-process pipe served as stdio is): `_meta.traceparent` is the parent.
    let mut io = BufReader::new(common::pipe(&served, 1 << 16));
    let init = request(
        &mut io,
        0,
        "initialize",
        json!({"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "t", "version": "0"}}),
    )
    .await;
    assert!(init["result"].is_object(), "{init}");
    let line = json!({"jsonrpc": "2.0", "method": "notifications/initialized"}).to_string() + "\n";
    io.get_mut().write_all(line.as_bytes()).await.unwrap();
    let called = request(
        &mut io,
        7,
        "tools/call",
        json!({"name": "count_up", "arguments": {}, "_meta": {"traceparent": PARENT}}),
    )
    .await;
    assert_eq!(called["result"]["isError"], false, "{called}");
    let unknown = request(
        &mut io,
        8,
        "tools/call",
        json!({"name": "count_down", "arguments": {}}),
    )
    .await;
    assert!(unknown["error"].is_object(), "{unknown}");
    let listed = request(&mut io, 9, "tools/list", json!({})).await;
    assert!(listed["result"]["tools"].is_array(), "{listed}");

    spans
        .wait("the stdio spans close", |s| {
            s.of("tools/call").len() == 2 && s.of("tools/list").len() == 1
        })
        .await;
    let calls = spans.of("tools/call");
    let call = calls
        .iter()
        .find(|s| s.fields.get("jsonrpc.request.id").map(String::as_str) == Some("7"))
        .expect("the span of request 7");
    assert_eq!(call.fields["otel.name"], "tools/call count_up", "{call:?}");
    assert_eq!(call.fields["otel.kind"], "server", "{call:?}");
    assert_eq!(call.fields["gen_ai.tool.name"], "count_up", "{call:?}");
    assert_eq!(call.fields["gen_ai.operation.name"], "execute_tool", "{call:?}");
    assert_eq!(call.fields["traceparent"], PARENT, "{call:?}");
    assert!(!call.fields.contains_key("error.type"), "{call:?}");
    // Its own trace, not a child of rmcp's connection-long `serve_inner` span (the call is
    // answered directly, polled first inside rmcp's loop on this current-thread runtime).
    assert!(call.root, "{call:?}");
    assert!(spans.of("tools/list").iter().all(|s| s.root));
    // The tool ran inside the request's span.
    assert_eq!(call.events, ["counting"], "{call:?}");
    let refused = calls
        .iter()
        .find(|s| s.fields.get("jsonrpc.request.id").map(String::as_str) == Some("8"))
        .expect("the span of request 8");
    // -32602, invalid params: the JSON-RPC error code is the error type.
    assert_eq!(refused.fields["error.type"], "-32602", "{refused:?}");
    assert!(!refused.fields.contains_key("traceparent"), "{refused:?}");

    // Over Streamable HTTP: the session id, and the `traceparent` header as the parent.
    let http = served
        .serve_http(HttpOptions::new(([127, 0, 0, 1], 0)))
        .await
        .unwrap();
    let addr = http.local_addr();
    let session = common::raw_http::legacy_session(addr).await;
    let call = json!({"jsonrpc": "2.0", "id": 21, "method": "tools/call",
        "params": {"name": "count_up", "arguments": {}}});
    let headers = [
        ("Content-Type", "application/json"),
        ("Accept", "application/json, text/event-stream"),
        ("Mcp-Session-Id", session.as_str()),
        ("MCP-Protocol-Version", "2025-11-25"),
        ("traceparent", HEADER_PARENT),
    ];
    let answer = common::raw_http::http(addr, "POST", &headers, &call.to_string()).await;
    assert_eq!(answer.status, 200, "{answer:?}");
    spans
        .wait("the HTTP call's span closes", |s| {
            s.of("tools/call")
                .iter()
                .any(|s| s.fields.get("jsonrpc.request.id").map(String::as_str) == Some("21"))
        })
        .await;
    let calls = spans.of("tools/call");
    let call = calls
        .iter()
        .find(|s| s.fields.get("jsonrpc.request.id").map(String::as_str) == Some("21"))
        .unwrap();
    assert_eq!(call.fields["mcp.session.id"], session, "{call:?}");
    assert_eq!(call.fields["traceparent"], HEADER_PARENT, "{call:?}");
    assert_eq!(call.events, ["counting"], "{call:?}");
    // Unauthenticated, the span names no end user.
    assert!(!call.fields.contains_key("enduser.id"), "{call:?}");

    // Authenticated (2026-07-28, one POST a request): the token's subject is the end user.
    let (port, auth) = common::custom_auth(Alice);
    let authed = server()
        .serve_http(HttpOptions::loopback(port).auth(auth))
        .await
        .unwrap();
    let body = json!({"jsonrpc": "2.0", "id": 31, "method": "tools/call", "params": {
        "name": "count_up", "arguments": {}, "_meta": {
            "io.modelcontextprotocol/protocolVersion": "2026-07-28",
            "io.modelcontextprotocol/clientInfo": {"name": "spans", "version": "0"},
            "io.modelcontextprotocol/clientCapabilities": {}}}});
    let headers = [
        ("Content-Type", "application/json"),
        ("Accept", "application/json, text/event-stream"),
        ("Authorization", "Bearer alice-token"),
        ("MCP-Protocol-Version", "2026-07-28"),
        ("Mcp-Method", "tools/call"),
        ("Mcp-Name", "count_up"),
    ];
    let answer = common::raw_http::http(authed.local_addr(), "POST", &headers, &body.to_string()).await;
    assert_eq!(answer.status, 200, "{answer:?}");
    spans
        .wait("the authenticated call's span closes", |s| {
            s.of("tools/call")
                .iter()
                .any(|s| s.fields.get("jsonrpc.request.id").map(String::as_str) == Some("31"))
        })
        .await;
    let calls = spans.of("tools/call");
    let call = calls
        .iter()
        .find(|s| s.fields.get("jsonrpc.request.id").map(String::as_str) == Some("31"))
        .unwrap();
    assert_eq!(call.fields["enduser.id"], "alice", "{call:?}");
    assert!(
        !format!("{call:?}").contains("alice-token"),
        "the token is never recorded: {call:?}"
    );
}

/// Alice's token, and nobody else's.
struct Alice;

impl surface::auth::TokenVerifier for Alice {
    async fn verify(&self, token: &str) -> Result<surface::Principal, surface::auth::Refusal> {
        match token {
            "alice-token" => Ok(surface::Principal::new("https://issuer.test", "alice")),
            _ => Err(surface::auth::Refusal::new("unknown token")),
        }
    }
}
