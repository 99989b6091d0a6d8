//! The rate-limit example: a call layer that gives each principal a quota, answering `isError`
//! "retry after N s" past it — as a child over its real stdio, and in process over Streamable
//! HTTP with principals an axum layer of the test's own identifies.

mod common;

#[allow(dead_code)]
#[path = "../examples/rate_limit.rs"]
mod rate_limit;

use common::raw_http::http;
use common::stdio::Wire;
use serde_json::{Value, json};
use std::net::SocketAddr;
use std::num::NonZeroU32;

/// The text of a `tools/call` answer and whether it is `isError`.
fn outcome(answer: &Value) -> (bool, String) {
    let result = &answer["result"];
    let text = result["content"][0]["text"]
        .as_str()
        .unwrap_or_default()
        .to_owned();
    (result["isError"] == true, text)
}

/// The `N` of "retry after N s".
fn retry_after(text: &str) -> u64 {
    let n = text
        .split("retry after ")
        .nth(1)
        .and_then(|rest| rest.strip_suffix(" s").or_else(|| rest.split(" s").next()))
        .unwrap_or_else(|| panic!("no \"retry after N s\" in {text:?}"));
    n.trim()
        .parse()
        .unwrap_or_else(|_| panic!("no number in {text:?}"))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn past_its_quota_a_caller_is_told_when_to_retry() {
    let binary = common::example_binary("rate_limit");
    let mut wire = Wire::start_at(&binary, &["--per-minute", "3"], &[], false);
    wire.initialize().await;
    for id in 1..=3 {
        let answer = wire
            .request(id, "tools/call", json!({"name": "load_sample", "arguments": {}}))
            .await;
        assert!(!outcome(&answer).0, "call {id} is within the quota: {answer}");
    }
    let answer = wire
        .request(4, "tools/call", json!({"name": "load_sample", "arguments": {}}))
        .await;
    let (is_error, text) = outcome(&answer);
    assert!(is_error, "{answer}");
    assert!(
        text.contains("rate limit: anonymous made too many calls"),
        "{text}"
    );
    // Three a minute: one more call in at most 20 s.
    let n = retry_after(&text);
    assert!((1..=20).contains(&n), "{text}");
    // A refused call never ran, and the session goes on answering what is not limited.
    let listed = wire.request(5, "tools/list", json!({})).await;
    assert!(listed["result"]["tools"].is_array(), "{listed}");
}

/// Serves the example's server behind an axum layer that takes the principal from `X-User`.
async fn serve_with_principals(per_minute: u32) -> SocketAddr {
    use axum::extract::Request;
    let served = rate_limit::server(rate_limit::RateLimit::per_minute(
        NonZeroU32::new(per_minute).unwrap(),
    ))
    .start()
    .unwrap();
    let identify = axum::middleware::map_request(|mut request: Request| async move {
        let user = request
            .headers()
            .get("x-user")
            .and_then(|v| v.to_str().ok())
            .map(str::to_owned);
        if let Some(user) = user {
            request
                .extensions_mut()
                // ops declares its scopes: `load_sample` needs ops.read.
                .insert(surface::Principal::new("https://test.invalid", user).with_scopes(["ops.read"]));
        }
        request
    });
    let app = axum::Router::new()
        .nest_service("/mcp", served.http_service())
        .layer(identify);
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(async move { axum::serve(listener, app).await });
    addr
}

/// One 2026-07-28 `tools/call` of `load_sample` by `user`.
async fn call_as(addr: SocketAddr, user: &str, id: u64) -> (bool, String) {
    let body = json!({"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": {
    "name": "load_sample", "arguments": {},
    "_meta": {
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": {},
        "io.modelcontextprotocol/clientInfo": {"name": "t", "version": "0"}
    }}});
    let headers = [
        ("Content-Type", "application/json"),
        ("Accept", "application/json, text/event-stream"),
        ("MCP-Protocol-Version", "2026-07-28"),
        ("Mcp-Method", "tools/call"),
        ("Mcp-Name", "load_sample"),
        ("X-User", user),
    ];
    let answer = http(addr, "POST", &headers, &body.to_string()).await;
    assert_eq!(answer.status, 200, "{answer:?}");
    outcome(&answer.message())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn each_principal_has_a_quota_of_its_own() {
    let addr = serve_with_principals(2).await;
    assert!(!call_as(addr, "alice", 1).await.0);
    assert!(!call_as(addr, "alice", 2).await.0);
    let (refused, text) = call_as(addr, "alice", 3).await;
    assert!(refused, "{text}");
    assert!(
        text.contains("rate limit: alice made too many calls; retry after"),
        "{text}"
    );
    // Bob's calls are his own: alice's spent quota does not touch them.
    let (refused, text) = call_as(addr, "bob", 4).await;
    assert!(!refused, "{text}");
    assert!(!call_as(addr, "bob", 5).await.0);
    let (refused, text) = call_as(addr, "bob", 6).await;
    assert!(refused && text.contains("bob made too many calls"), "{text}");
}
