//! The Streamable HTTP hot path (`surface-runtime/src/mcp/http_bypass.rs`): a plain request
//! (`tools/call`, `resources/read`, the lists) that cannot make the server write anything but
//! its answer is answered by the handler directly, as `application/json`; everything else goes
//! through rmcp's `StreamableHttpService` as before. Raw HTTP/1.1 against the conformance
//! example served in this process: the direct answer must equal rmcp's answer to the same
//! request (sent so that rmcp takes it: with an `Origin`, or a progress token), the statuses
//! must be rmcp's, and sessions must live, be cancelled in and end as rmcp's do.

mod common;

#[allow(dead_code)]
#[path = "../examples/conformance.rs"]
mod conformance;

use common::raw_http::{Answer, http};
use serde_json::{Value, json};
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;
use surface::mcp::HttpOptions;

const JSON: (&str, &str) = ("Content-Type", "application/json");
const ACCEPT: (&str, &str) = ("Accept", "application/json, text/event-stream");
/// A browser's request: rmcp checks it against the allowed origins, so it never takes the
/// direct path.
const ORIGIN: (&str, &str) = ("Origin", "http://localhost:9");
const MODERN: &str = "2026-07-28";
const LEGACY: &str = "2025-11-25";

async fn serve(options: HttpOptions) -> (surface::mcp::HttpServer, SocketAddr) {
    let served = conformance::start(Arc::new(conformance::Conformance::new())).unwrap();
    let server = served.serve_http(options).await.unwrap();
    let addr = server.local_addr();
    (server, addr)
}

fn content_type(answer: &Answer) -> &str {
    answer.header("content-type").unwrap_or_default()
}

fn direct(answer: &Answer) -> bool {
    content_type(answer) == "application/json"
}

fn streamed(answer: &Answer) -> bool {
    content_type(answer).starts_with("text/event-stream")
}

/// Every JSON-RPC message of an SSE body.
fn events(answer: &Answer) -> Vec<Value> {
    answer
        .body
        .lines()
        .filter_map(|l| l.strip_prefix("data: "))
        .filter_map(|d| serde_json::from_str(d).ok())
        .collect()
}

/// A 2026-07-28 request: `_meta` with `extra_meta` merged in, the standard headers, and
/// `extra` headers.
async fn modern(
    addr: SocketAddr,
    method: &str,
    mut params: Value,
    extra_meta: Value,
    extra: &[(&str, &str)],
) -> Answer {
    let mut meta = json!({
        "io.modelcontextprotocol/protocolVersion": MODERN,
        "io.modelcontextprotocol/clientCapabilities": {},
        "io.modelcontextprotocol/clientInfo": {"name": "http-direct", "version": "0"},
    });
    if let Value::Object(more) = extra_meta {
        meta.as_object_mut().unwrap().extend(more);
    }
    params["_meta"] = meta;
    let name = params["name"]
        .as_str()
        .or(params["uri"].as_str())
        .map(str::to_owned);
    let body = json!({"jsonrpc": "2.0", "id": 1, "method": method, "params": params});
    let mut headers = vec![
        JSON,
        ACCEPT,
        ("MCP-Protocol-Version", MODERN),
        ("Mcp-Method", method),
    ];
    if let Some(name) = &name {
        headers.push(("Mcp-Name", name));
    }
    headers.extend_from_slice(extra);
    http(addr, "POST", &headers, &body.to_string()).await
}

/// Opens a legacy session whose client declares `capabilities`.
async fn session(addr: SocketAddr, capabilities: Value) -> String {
    let init = json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": LEGACY, "capabilities": capabilities,
        "clientInfo": {"name": "http-direct", "version": "0"}}});
    let answer = http(addr, "POST", &[JSON, ACCEPT], &init.to_string()).await;
    assert_eq!(answer.status, 200, "{answer:?}");
    let id = answer.header("mcp-session-id").expect("a session").to_owned();
    let done = json!({"jsonrpc": "2.0", "method": "notifications/initialized"});
    assert_eq!(legacy_post(addr, &id, &done, &[]).await.status, 202);
    id
}

async fn legacy_post(addr: SocketAddr, session: &str, body: &Value, extra: &[(&str, &str)]) -> Answer {
    let mut headers = vec![
        JSON,
        ACCEPT,
        ("Mcp-Session-Id", session),
        ("MCP-Protocol-Version", LEGACY),
    ];
    headers.extend_from_slice(extra);
    http(addr, "POST", &headers, &body.to_string()).await
}

async fn legacy(addr: SocketAddr, session: &str, id: u64, method: &str, params: Value) -> Answer {
    let body = json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params});
    legacy_post(addr, session, &body, &[]).await
}

/// What the plain requests are checked with, and their params.
fn plain_requests() -> Vec<(&'static str, Value)> {
    vec![
        ("tools/list", json!({})),
        ("tools/call", json!({"name": "test_simple_text", "arguments": {}})),
        (
            "tools/call",
            json!({"name": "test_error_handling", "arguments": {}}),
        ),
        ("resources/read", json!({"uri": "test://static-text"})),
        ("resources/list", json!({})),
        ("prompts/list", json!({})),
        (
            "prompts/get",
            json!({"name": "test_simple_prompt", "arguments": {}}),
        ),
    ]
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn plain_requests_answer_as_rmcp_does_in_both_eras() {
    let (_server, addr) = serve(HttpOptions::loopback(0)).await;
    for (method, params) in plain_requests() {
        let fast = modern(addr, method, params.clone(), json!({}), &[]).await;
        let slow = modern(addr, method, params.clone(), json!({}), &[ORIGIN]).await;
        assert!(direct(&fast), "{method} answered directly: {fast:?}");
        assert!(streamed(&slow), "{method} with an Origin is rmcp's: {slow:?}");
        assert_eq!(fast.status, slow.status, "{method}");
        assert_eq!(fast.message(), slow.message(), "{method} on 2026-07-28");
    }
    let id = session(addr, json!({})).await;
    for (n, (method, params)) in plain_requests().into_iter().enumerate() {
        let n = 10 + 2 * n as u64;
        let fast = legacy(addr, &id, n, method, params.clone()).await;
        let mut tokened = params.clone();
        tokened["_meta"] = json!({"progressToken": n});
        let slow = legacy(addr, &id, n + 1, method, tokened).await;
        assert!(direct(&fast), "{method} answered directly: {fast:?}");
        assert!(
            streamed(&slow),
            "{method} with a progress token is rmcp's: {slow:?}"
        );
        let mut slow = slow.message();
        slow["id"] = json!(n);
        assert_eq!(fast.message(), slow, "{method} in a legacy session");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn what_may_write_more_than_the_answer_stays_with_rmcp() {
    let (_server, addr) = serve(HttpOptions::loopback(0)).await;
    // A progress token: the progress rides the POST's stream.
    let id = session(addr, json!({})).await;
    let params = json!({"name": "test_tool_with_progress", "arguments": {}, "_meta": {"progressToken": "p"}});
    let answer = legacy(addr, &id, 3, "tools/call", params).await;
    assert!(streamed(&answer), "{answer:?}");
    let progress = events(&answer)
        .into_iter()
        .filter(|m| m["method"] == "notifications/progress")
        .count();
    assert_eq!(progress, 3, "{answer:?}");
    // A 2026-07-28 log level: the log messages ride the POST's stream; none, and it is direct.
    let call = json!({"name": "test_logging_tool", "arguments": {}});
    let logged = modern(
        addr,
        "tools/call",
        call.clone(),
        json!({"io.modelcontextprotocol/logLevel": "info"}),
        &[],
    )
    .await;
    assert!(streamed(&logged), "{logged:?}");
    assert!(
        events(&logged)
            .iter()
            .any(|m| m["method"] == "notifications/message"),
        "{logged:?}"
    );
    let quiet = modern(addr, "tools/call", call, json!({}), &[]).await;
    assert!(direct(&quiet), "{quiet:?}");
    assert_eq!(quiet.message()["result"]["structuredContent"]["value"], "logged");
}

/// A host that can be asked takes the direct path too: a call that asks nothing is answered as
/// JSON, and one that asks turns its `POST` into its own event stream, the request first and
/// the answer last, as rmcp answers it (the host's answer is a `POST` of its own).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_askable_session_s_call_asks_on_its_own_stream() {
    let (_server, addr) = serve(HttpOptions::loopback(0)).await;
    for capabilities in [json!({"elicitation": {}}), json!({"sampling": {}, "roots": {}})] {
        let askable = session(addr, capabilities).await;
        let plain = legacy(addr, &askable, 2, "tools/list", json!({})).await;
        assert!(direct(&plain), "{plain:?}");
        let call = json!({"name": "test_simple_text", "arguments": {}});
        let plain = legacy(addr, &askable, 3, "tools/call", call).await;
        assert!(direct(&plain), "{plain:?}");
    }
    let askable = session(addr, json!({"elicitation": {}})).await;
    let call = json!({"jsonrpc": "2.0", "id": 4, "method": "tools/call", "params": {
        "name": "test_elicitation", "arguments": {"message": "Who are you?"}}});
    let headers = [
        JSON,
        ACCEPT,
        ("Mcp-Session-Id", askable.as_str()),
        ("MCP-Protocol-Version", LEGACY),
    ];
    let mut stream = common::raw_http::Listen::post(addr, &headers, &call).await;
    let asked = stream.next().await;
    assert_eq!(asked["method"], "elicitation/create", "{asked}");
    assert_eq!(asked["params"]["message"], "Who are you?", "{asked}");
    assert!(
        stream
            .raw()
            .to_ascii_lowercase()
            .contains("content-type: text/event-stream"),
        "{}",
        stream.raw()
    );
    let reply = json!({"jsonrpc": "2.0", "id": asked["id"], "result": {
        "action": "accept", "content": {"username": "ada", "email": "ada@example.com"}}});
    assert_eq!(legacy_post(addr, &askable, &reply, &[]).await.status, 202);
    let answer = stream.next().await;
    assert_eq!(answer["id"], 4, "{answer}");
    let text = answer["result"]["content"][0]["text"]
        .as_str()
        .unwrap_or_default();
    assert!(
        text.contains("accept") && text.contains("ada@example.com"),
        "{answer}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn stateless_errors_keep_rmcp_s_statuses() {
    let (_server, addr) = serve(HttpOptions::loopback(0)).await;
    // The handler's own refusals: a capability the host lacks (400), an unknown tool (200).
    for (params, status, code) in [
        (
            json!({"name": "test_missing_capability", "arguments": {}}),
            400,
            -32021,
        ),
        (json!({"name": "no_such_tool", "arguments": {}}), 200, -32602),
    ] {
        let fast = modern(addr, "tools/call", params.clone(), json!({}), &[]).await;
        let slow = modern(addr, "tools/call", params, json!({}), &[ORIGIN]).await;
        assert!(direct(&fast), "{fast:?}");
        assert_eq!((fast.status, slow.status), (status, status), "{fast:?} {slow:?}");
        assert_eq!(fast.message()["error"]["code"], code, "{fast:?}");
        assert_eq!(fast.message()["error"], slow.message()["error"]);
    }
    // Headers that disagree with the body are rmcp's to refuse.
    let params = json!({"name": "test_simple_text", "arguments": {}});
    let body = json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": params});
    let mut wrong = body.clone();
    wrong["params"]["_meta"] = json!({
        "io.modelcontextprotocol/protocolVersion": MODERN,
        "io.modelcontextprotocol/clientCapabilities": {},
        "io.modelcontextprotocol/clientInfo": {"name": "http-direct", "version": "0"},
    });
    for headers in [
        vec![
            JSON,
            ACCEPT,
            ("MCP-Protocol-Version", MODERN),
            ("Mcp-Method", "tools/call"),
            ("Mcp-Name", "other"),
        ],
        vec![
            JSON,
            ACCEPT,
            ("MCP-Protocol-Version", MODERN),
            ("Mcp-Name", "test_simple_text"),
        ],
    ] {
        let answer = http(addr, "POST", &headers, &wrong.to_string()).await;
        assert_eq!(answer.status, 400, "{answer:?}");
        assert_eq!(answer.message()["error"]["code"], -32020, "{answer:?}");
    }
    // An Origin that is not allowed is refused whatever the request.
    let refused = modern(
        addr,
        "tools/list",
        json!({}),
        json!({}),
        &[("Origin", "http://evil.example")],
    )
    .await;
    assert_eq!(refused.status, 403, "{refused:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn input_required_rounds_run_on_the_direct_path() {
    let (_server, addr) = serve(HttpOptions::loopback(0)).await;
    let call = json!({"name": "test_input_required_result_elicitation", "arguments": {}});
    let caps = json!({"io.modelcontextprotocol/clientCapabilities": {"elicitation": {}}});
    let first = modern(addr, "tools/call", call.clone(), caps.clone(), &[]).await;
    assert!(direct(&first), "{first:?}");
    let result = &first.message()["result"];
    assert!(result["inputRequests"]["user_name"].is_object(), "{result}");
    let state = result["requestState"].as_str().expect("a sealed state");
    let mut again = call.clone();
    again["inputResponses"] = json!({"user_name": {"action": "accept", "content": {"name": "Ada"}}});
    again["requestState"] = json!(state);
    let second = modern(addr, "tools/call", again, caps, &[]).await;
    assert!(direct(&second), "{second:?}");
    assert_eq!(
        second.message()["result"]["structuredContent"]["value"],
        "Hello, Ada!",
        "{second:?}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_stateless_client_s_steady_meta_is_remembered_and_each_call_answers_by_its_own() {
    let (_server, addr) = serve(HttpOptions::loopback(0)).await;
    // Asks its host only what the request's `_meta` declares it can answer.
    let call = json!({"name": "test_input_required_result_capabilities", "arguments": {}});
    let asks = json!({"io.modelcontextprotocol/clientCapabilities": {"elicitation": {}}});
    // The answer less its `requestState`, which is new on every answer.
    let answer = |meta: &Value| {
        let meta = meta.clone();
        let call = call.clone();
        async move {
            let answer = modern(addr, "tools/call", call, meta, &[]).await;
            assert!(direct(&answer), "{answer:?}");
            let mut message: Value = serde_json::from_str(&answer.body).unwrap();
            message["result"].as_object_mut().unwrap().remove("requestState");
            message
        }
    };
    let plain = answer(&json!({})).await;
    let asking = answer(&asks).await;
    assert_eq!(plain["result"]["resultType"], "complete", "{plain}");
    assert_eq!(asking["result"]["resultType"], "input_required", "{asking}");
    // The endpoint keeps a `_meta` text seen twice in a row and lends its map from then on:
    // each text several times running, then in turn, every answer its own request's.
    let turns = [0, 0, 0, 0, 1, 1, 1, 1, 0, 1, 0, 0, 0, 1, 1];
    for (turn, asks_too) in turns.into_iter().enumerate() {
        let (meta, want) = if asks_too == 1 {
            (&asks, &asking)
        } else {
            (&json!({}), &plain)
        };
        assert_eq!(&answer(meta).await, want, "turn {turn}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_cancelled_request_ends_without_an_answer() {
    let (_server, addr) = serve(HttpOptions::loopback(0)).await;
    let id = session(addr, json!({})).await;
    let slow = {
        let id = id.clone();
        tokio::spawn(async move {
            let params = json!({"name": "test_tool_with_progress", "arguments": {}});
            legacy(addr, &id, 7, "tools/call", params).await
        })
    };
    tokio::time::sleep(Duration::from_millis(30)).await;
    let cancel = json!({"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 7}});
    assert_eq!(legacy_post(addr, &id, &cancel, &[]).await.status, 202);
    let answer = slow.await.unwrap();
    assert_eq!(answer.status, 200, "{answer:?}");
    assert!(
        events(&answer).is_empty() && !answer.body.contains("jsonrpc"),
        "no answer after a cancellation: {answer:?}"
    );
    // The session goes on.
    assert!(direct(&legacy(addr, &id, 8, "tools/list", json!({})).await));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn calls_still_running_when_the_drain_ends_are_cancelled() {
    let options = HttpOptions::loopback(0).drain_timeout(Duration::from_millis(10));
    let (server, addr) = serve(options).await;
    let id = session(addr, json!({})).await;
    // ~100 ms of work, which stops early (and says so) once its call is cancelled.
    let slow = tokio::spawn(async move {
        let params = json!({"name": "test_tool_with_progress", "arguments": {}});
        legacy(addr, &id, 7, "tools/call", params).await
    });
    // The same in a 2026-07-28 request, which answers how its call ended.
    let stateless = tokio::spawn(async move {
        let params = json!({"name": "test_tool_with_progress", "arguments": {}});
        modern(addr, "tools/call", params, json!({}), &[]).await
    });
    tokio::time::sleep(Duration::from_millis(20)).await;
    let answered = server.shutdown().await.unwrap();
    assert!(!answered, "the drain ended with the calls in flight");
    let answer = slow.await.unwrap();
    assert_eq!(answer.status, 200, "{answer:?}");
    assert!(
        events(&answer).is_empty() && !answer.body.contains("jsonrpc"),
        "a call cancelled by the shutdown answers nothing: {answer:?}"
    );
    let answer = stateless.await.unwrap();
    assert!(
        answer.body.contains("cancelled") && !answer.body.contains("completed"),
        "the stateless call saw its cancel: {answer:?}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_busy_session_is_not_idle_and_an_ended_one_is_gone() {
    let options = HttpOptions::loopback(0).session_idle_timeout(Some(Duration::from_secs(2)));
    let (_server, addr) = serve(options).await;
    let id = session(addr, json!({})).await;
    // Requests answered directly are messages to the session: 3 s of them, 2 s timeout.
    for n in 0..12 {
        let answer = legacy(addr, &id, 100 + n, "tools/list", json!({})).await;
        assert!(direct(&answer) && answer.status == 200, "request {n}: {answer:?}");
        tokio::time::sleep(Duration::from_millis(250)).await;
    }
    tokio::time::sleep(Duration::from_secs(4)).await;
    let gone = legacy(addr, &id, 200, "tools/list", json!({})).await;
    assert_eq!(gone.status, 404, "the idle session ended: {gone:?}");
    // A deleted session is gone at once.
    let id = session(addr, json!({})).await;
    assert!(direct(&legacy(addr, &id, 2, "tools/list", json!({})).await));
    let deleted = http(
        addr,
        "DELETE",
        &[("Mcp-Session-Id", &id), ("MCP-Protocol-Version", LEGACY)],
        "",
    )
    .await;
    assert_eq!(deleted.status, 200, "{deleted:?}");
    assert_eq!(legacy(addr, &id, 3, "tools/list", json!({})).await.status, 404);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_legacy_call_whose_client_hangs_up_runs_to_its_end() {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let (_server, addr) = serve(HttpOptions::loopback(0)).await;
    let id = session(addr, json!({})).await;
    let level = legacy(addr, &id, 2, "logging/setLevel", json!({"level": "debug"})).await;
    assert_eq!(level.status, 200, "{level:?}");
    // The session's standalone stream, where its calls' log messages go.
    let mut stream = tokio::net::TcpStream::connect(addr).await.unwrap();
    let get = format!(
        "GET /mcp HTTP/1.1\r\nHost: {addr}\r\nAccept: text/event-stream\r\nMcp-Session-Id: {id}\r\nMCP-Protocol-Version: {LEGACY}\r\n\r\n"
    );
    stream.write_all(get.as_bytes()).await.unwrap();
    // A call that waits (it logs, sleeps, logs …), its connection closed while it runs.
    let call = json!({"jsonrpc": "2.0", "id": 3, "method": "tools/call",
        "params": {"name": "test_tool_with_logging", "arguments": {}}})
    .to_string();
    let post = format!(
        "POST /mcp HTTP/1.1\r\nHost: {addr}\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\nMcp-Session-Id: {id}\r\nMCP-Protocol-Version: {LEGACY}\r\nContent-Length: {}\r\n\r\n{call}",
        call.len()
    );
    let mut caller = tokio::net::TcpStream::connect(addr).await.unwrap();
    caller.write_all(post.as_bytes()).await.unwrap();
    tokio::time::sleep(Duration::from_millis(20)).await;
    drop(caller);
    // Its last log message comes all the same.
    let mut seen = String::new();
    let mut buf = [0u8; 4096];
    let read = tokio::time::timeout(Duration::from_secs(5), async {
        while !seen.contains("Tool execution completed") {
            let n = stream.read(&mut buf).await.unwrap();
            assert!(n > 0, "the stream ended: {seen}");
            seen.push_str(&String::from_utf8_lossy(&buf[..n]));
        }
    })
    .await;
    assert!(read.is_ok(), "the call stopped when its client hung up: {seen}");
}
