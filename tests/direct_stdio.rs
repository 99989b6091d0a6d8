//! The plain requests of a stdio session are answered off rmcp's service loop
//! (`surface-runtime/src/mcp/stdio_bypass.rs`) with rmcp's semantics: progress reaches the host
//! before the answer, `notifications/cancelled` cancels the call and its answer is never
//! written, a cancelled id can be used again, and a request naming its own protocol version
//! still gets rmcp's per-request judgement. Sessions opened the 2026-07-28 way (every request
//! carrying its `_meta`) take the same path, with the same semantics. Driven with raw JSON-RPC
//! lines over the transport `serve_stdio` uses, on the conformance example. A legacy session's
//! `tools/call` skips rmcp's dispatch too (`call_in_legacy_session` in `session.rs`), and answers
//! what rmcp's dispatch answers, call by call.

mod common;

#[allow(dead_code)]
#[path = "../examples/conformance.rs"]
mod conformance;

use conformance::Conformance;
use serde_json::{Value, json};
use std::sync::Arc;
use std::time::Duration;
use tokio::io::{AsyncBufReadExt, AsyncReadExt, AsyncWriteExt, BufReader, DuplexStream, ReadHalf, WriteHalf};

struct Raw {
    served: surface::mcp::ServedMcp,
    out: WriteHalf<DuplexStream>,
    lines: BufReader<ReadHalf<DuplexStream>>,
    /// Every line read so far.
    seen: Vec<Value>,
}

impl Raw {
    /// A served conformance bundle, opened with `initialize` and `initialized`.
    async fn open() -> Raw {
        let mut raw = Raw::unopened();
        raw.send(initialize(0)).await;
        raw.until(0).await;
        raw.send(json!({"jsonrpc": "2.0", "method": "notifications/initialized"}))
            .await;
        raw
    }

    /// A served conformance bundle, opened the 2026-07-28 way: by a first request that carries
    /// its version in `_meta` (a ping), answered.
    async fn open_modern() -> Raw {
        let mut raw = Raw::unopened();
        raw.send(
            json!({"jsonrpc": "2.0", "id": 0, "method": "ping", "params": {"_meta": modern(json!({}))}}),
        )
        .await;
        assert_eq!(raw.until(0).await["result"], json!({}));
        raw
    }

    fn unopened() -> Raw {
        let served = conformance::start(Arc::new(Conformance::new())).expect("composes");
        let (r, w) = tokio::io::split(common::pipe(&served, 1 << 20));
        Raw {
            served,
            out: w,
            lines: BufReader::new(r),
            seen: Vec::new(),
        }
    }

    async fn send(&mut self, message: Value) {
        let mut line = serde_json::to_vec(&message).unwrap();
        line.push(b'\n');
        self.out.write_all(&line).await.unwrap();
    }

    /// Reads lines until the answer to `id`; answers it.
    async fn until(&mut self, id: u64) -> Value {
        loop {
            let mut line = String::new();
            let n = tokio::time::timeout(Duration::from_secs(20), self.lines.read_line(&mut line))
                .await
                .expect("an answer in time")
                .unwrap();
            assert!(n > 0, "the server closed");
            let v: Value = serde_json::from_str(&line).unwrap();
            self.seen.push(v.clone());
            if v["id"] == id && v.get("method").is_none() {
                return v;
            }
        }
    }

    fn answers_to(&self, id: u64) -> usize {
        self.seen
            .iter()
            .filter(|v| v["id"] == id && v.get("method").is_none())
            .count()
    }
}

/// A legacy `initialize` request.
fn initialize(id: u64) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "method": "initialize", "params": {
        "protocolVersion": "2025-06-18", "capabilities": {},
        "clientInfo": {"name": "t", "version": "0"}}})
}

/// `meta` with the keys every 2026-07-28 request carries.
fn modern(mut meta: Value) -> Value {
    meta["io.modelcontextprotocol/protocolVersion"] = json!("2026-07-28");
    meta["io.modelcontextprotocol/clientCapabilities"] = json!({});
    meta["io.modelcontextprotocol/clientInfo"] = json!({"name": "t", "version": "0"});
    meta
}

fn call(id: u64, tool: &str, meta: Value) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "method": "tools/call",
        "params": {"name": tool, "arguments": {}, "_meta": meta}})
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn progress_comes_before_the_answer() {
    progress_before_the_answer(Raw::open().await, json!({"progressToken": "p"})).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn progress_comes_before_the_answer_in_a_2026_session() {
    progress_before_the_answer(Raw::open_modern().await, modern(json!({"progressToken": "p"}))).await;
}

async fn progress_before_the_answer(mut raw: Raw, meta: Value) {
    raw.send(call(1, "test_tool_with_progress", meta)).await;
    let answer = raw.until(1).await;
    assert_eq!(answer["result"]["isError"], false, "{answer}");
    let progress: Vec<&Value> = raw
        .seen
        .iter()
        .filter(|v| v["method"] == "notifications/progress")
        .map(|v| &v["params"]["progress"])
        .collect();
    assert_eq!(progress, [&json!(0.0), &json!(50.0), &json!(100.0)]);
    assert!(
        raw.seen
            .iter()
            .filter(|v| v["method"] == "notifications/progress")
            .all(|v| v["params"]["progressToken"] == "p")
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_cancelled_call_is_never_answered_and_its_id_is_free_again() {
    let ping = |id: u64| json!({"jsonrpc": "2.0", "id": id, "method": "ping"});
    cancelled_never_answered(Raw::open().await, json!({}), ping, |r| *r == json!({})).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_cancelled_call_in_a_2026_session_is_never_answered_and_its_id_is_free_again() {
    // 2026-07-28 has no `ping` (rmcp answers it -32601): a list stands in.
    let list = |id: u64| json!({"jsonrpc": "2.0", "id": id, "method": "resources/list", "params": {"_meta": modern(json!({}))}});
    cancelled_never_answered(Raw::open_modern().await, modern(json!({})), list, |r| {
        r["resources"].is_array()
    })
    .await;
}

/// `follow(id)` is a request answered at once, with a result that passes `answer`.
async fn cancelled_never_answered(
    mut raw: Raw,
    meta: Value,
    follow: impl Fn(u64) -> Value,
    answer: impl Fn(&Value) -> bool,
) {
    // ~100 ms of work, cancelled at once: the tool sees its token cancelled and stops.
    raw.send(call(2, "test_tool_with_progress", meta.clone())).await;
    raw.send(json!({"jsonrpc": "2.0", "method": "notifications/cancelled",
        "params": {"requestId": 2, "reason": "changed my mind"}}))
        .await;
    // The id is free at once: a new request with it is answered, once.
    raw.send(follow(2)).await;
    let answered = raw.until(2).await;
    assert!(answer(&answered["result"]), "{answered}");
    // Long after the cancelled call would have finished, nothing more came for it.
    tokio::time::sleep(Duration::from_millis(400)).await;
    raw.send(follow(3)).await;
    raw.until(3).await;
    assert_eq!(raw.answers_to(2), 1, "only the ping was answered: {:?}", raw.seen);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_request_naming_an_unsupported_version_is_refused_as_rmcp_refuses_it() {
    let mut raw = Raw::open().await;
    // Sent four times: from the third on, the connection remembers this `_meta` and lends its
    // map, which must still reach rmcp's loop (that refuses it) where rmcp's own read puts it.
    let mut refusals = Vec::new();
    for id in [1, 2, 3, 4] {
        raw.send(call(
            id,
            "test_simple_text",
            json!({"io.modelcontextprotocol/protocolVersion": "1999-01-01"}),
        ))
        .await;
        let mut answer = raw.until(id).await;
        assert!(answer.get("error").is_some(), "{answer}");
        answer.as_object_mut().unwrap().remove("id");
        refusals.push(answer);
    }
    assert!(refusals.iter().all(|r| *r == refusals[0]), "{refusals:?}");
    // A plain call beside it is answered as usual.
    raw.send(call(5, "test_simple_text", json!({}))).await;
    let answer = raw.until(5).await;
    assert_eq!(answer["result"]["isError"], false, "{answer}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_2026_session_refuses_a_request_without_its_meta_as_rmcp_does() {
    let mut raw = Raw::open_modern().await;
    raw.send(call(6, "test_simple_text", json!({}))).await;
    let answer = raw.until(6).await;
    assert_eq!(answer["error"]["code"], -32602, "{answer}");
    raw.send(call(7, "test_simple_text", modern(json!({})))).await;
    let answer = raw.until(7).await;
    assert_eq!(answer["result"]["isError"], false, "{answer}");
}

/// `call` in a legacy session, once as sent (answered by `call_in_legacy_session`, off rmcp's
/// dispatch) and once naming the session's own version in `_meta` (which rmcp's loop and its
/// dispatch answer): the two answers, without their ids.
async fn both_ways(raw: &mut Raw, id: u64, tool: &str, arguments: Value) -> (Value, Value) {
    let mut answers = Vec::new();
    for (id, meta) in [
        (id, json!({})),
        (
            id + 1,
            json!({"io.modelcontextprotocol/protocolVersion": "2025-06-18"}),
        ),
    ] {
        raw.send(json!({"jsonrpc": "2.0", "id": id, "method": "tools/call",
            "params": {"name": tool, "arguments": arguments, "_meta": meta}}))
            .await;
        let mut answer = raw.until(id).await;
        answer.as_object_mut().unwrap().remove("id");
        answers.push(answer);
    }
    let through_rmcp = answers.pop().unwrap();
    (answers.pop().unwrap(), through_rmcp)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_legacy_call_answers_as_rmcps_dispatch_answers_it() {
    let mut raw = Raw::open().await;
    for (n, (tool, arguments)) in calls().into_iter().enumerate() {
        let (direct, through_rmcp) = both_ways(&mut raw, 100 + 2 * n as u64, tool, arguments).await;
        assert_eq!(direct, through_rmcp, "{tool}");
        assert!(
            direct.get("result").is_some() || direct.get("error").is_some(),
            "{direct}"
        );
    }
    // Whichever way it came, the legacy shape: no `resultType`.
    let (direct, _) = both_ways(&mut raw, 200, "test_simple_text", json!({})).await;
    assert!(direct["result"].get("resultType").is_none(), "{direct}");
    assert_eq!(direct["result"]["isError"], false, "{direct}");
}

/// Calls of every kind a direct answer is held to rmcp's on: their tools and arguments.
fn calls() -> [(&'static str, Value); 14] {
    [
        // Successes: text, pictures, sound, embedded and mixed blocks, structured values.
        ("test_simple_text", json!({})),
        ("test_image_content", json!({})),
        ("test_audio_content", json!({})),
        ("test_embedded_resource", json!({})),
        ("test_multiple_content_types", json!({})),
        ("greet", json!({"name": "Ada"})),
        (
            "json_schema_2020_12_tool",
            json!({"name": "Ada", "contactMethod": "email", "email": "a@b.c"}),
        ),
        ("test_tool_with_logging", json!({})),
        // A task tool in a session that cannot have tasks runs inline; one that must be a task
        // fails as a tool.
        ("slow_compute", json!({"seconds": 0.0, "label": "x"})),
        ("failing_job", json!({})),
        // Failures as results, and errors.
        ("test_error_handling", json!({})),
        ("greet", json!({"name": 3})),
        ("greet", json!({})),
        ("no_such_tool", json!({})),
    ]
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_2026_call_answers_as_rmcps_dispatch_answers_it() {
    // In an open 2026-07-28 session a call is answered off rmcp's dispatch
    // (`call_in_2026_era`); the request that opens a session is rmcp's loop's, and its dispatch
    // answers it. Each call both ways: the answers must be the same.
    let mut opened = Raw::open_modern().await;
    for (n, (tool, arguments)) in calls().into_iter().enumerate() {
        let id = 100 + n as u64;
        let request = json!({"jsonrpc": "2.0", "id": id, "method": "tools/call",
            "params": {"name": tool, "arguments": arguments, "_meta": modern(json!({}))}});
        let mut first = Raw::unopened();
        first.send(request.clone()).await;
        let through_rmcp = first.until(id).await;
        opened.send(request).await;
        let direct = opened.until(id).await;
        assert_eq!(direct, through_rmcp, "{tool}");
        assert!(
            direct.get("result").is_some() || direct.get("error").is_some(),
            "{direct}"
        );
    }
    // The 2026-07-28 shape, whichever way it came: `resultType` is there.
    opened
        .send(call(300, "test_simple_text", modern(json!({}))))
        .await;
    let direct = opened.until(300).await;
    assert_eq!(direct["result"]["resultType"], "complete", "{direct}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_2026_session_sent_initialize_still_refuses_a_call_without_its_meta() {
    // Opened by a list carrying its `_meta` (a ping before the opening is answered without
    // opening anything).
    let mut raw = Raw::unopened();
    raw.send(
        json!({"jsonrpc": "2.0", "id": 0, "method": "tools/list", "params": {"_meta": modern(json!({}))}}),
    )
    .await;
    assert!(raw.until(0).await["result"]["tools"].is_array());
    // A stray `initialize` does not make it a legacy session: rmcp still asks each request
    // for its `_meta`, and so does the direct path.
    raw.send(initialize(8)).await;
    raw.until(8).await;
    raw.send(call(9, "test_simple_text", json!({}))).await;
    let answer = raw.until(9).await;
    assert_eq!(answer["error"]["code"], -32602, "{answer}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_call_that_waits_is_cancelled_when_its_connection_ends() {
    let mut raw = Raw::open().await;
    // An hour of work, answered off rmcp's loop; then the server closes its connections.
    raw.send(json!({"jsonrpc": "2.0", "id": 10, "method": "tools/call",
        "params": {"name": "slow_compute", "arguments": {"seconds": 3600.0, "label": "hour"}}}))
        .await;
    tokio::time::sleep(Duration::from_millis(100)).await;
    raw.served.close();
    // The call is cancelled with the connection, which then ends: the output closes long
    // before the hour is out, with no answer to the cancelled call.
    let mut rest = String::new();
    let read = tokio::time::timeout(Duration::from_secs(20), raw.lines.read_to_string(&mut rest)).await;
    read.expect("the connection ends once its call is cancelled")
        .unwrap();
    assert!(!rest.contains("computed hour"), "{rest}");
}
