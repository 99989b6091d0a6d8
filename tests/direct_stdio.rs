//! The plain requests of a stdio session are answered off rmcp's service loop
//! (`surface-runtime/src/mcp/direct.rs`) with rmcp's semantics: progress reaches the host
//! before the answer, `notifications/cancelled` cancels the call and its answer is never
//! written, a cancelled id can be used again, and a request naming its own protocol version
//! still gets rmcp's per-request judgement. Driven with raw JSON-RPC lines over the transport
//! `serve_stdio` uses, on the conformance example.

mod common;

#[allow(dead_code)]
#[path = "../examples/conformance.rs"]
mod conformance;

use conformance::Conformance;
use serde_json::{Value, json};
use std::sync::Arc;
use std::time::Duration;
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader, DuplexStream, ReadHalf, WriteHalf};

struct Raw {
    out: WriteHalf<DuplexStream>,
    lines: BufReader<ReadHalf<DuplexStream>>,
    /// Every line read so far.
    seen: Vec<Value>,
}

impl Raw {
    /// A served conformance bundle, opened with `initialize` and `initialized`.
    async fn open() -> Raw {
        let served = conformance::start(Arc::new(Conformance::new())).expect("composes");
        let (r, w) = tokio::io::split(common::pipe(&served, 1 << 20));
        let mut raw = Raw {
            out: w,
            lines: BufReader::new(r),
            seen: Vec::new(),
        };
        raw.send(
            json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
            "protocolVersion": "2025-06-18", "capabilities": {},
            "clientInfo": {"name": "t", "version": "0"}}}),
        )
        .await;
        raw.until(0).await;
        raw.send(json!({"jsonrpc": "2.0", "method": "notifications/initialized"}))
            .await;
        raw
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

fn call(id: u64, tool: &str, meta: Value) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "method": "tools/call",
        "params": {"name": tool, "arguments": {}, "_meta": meta}})
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn progress_comes_before_the_answer() {
    let mut raw = Raw::open().await;
    raw.send(call(1, "test_tool_with_progress", json!({"progressToken": "p"})))
        .await;
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
    let mut raw = Raw::open().await;
    // ~100 ms of work, cancelled at once: the tool sees its token cancelled and stops.
    raw.send(call(2, "test_tool_with_progress", json!({}))).await;
    raw.send(json!({"jsonrpc": "2.0", "method": "notifications/cancelled",
        "params": {"requestId": 2, "reason": "changed my mind"}}))
        .await;
    // The id is free at once: a new request with it is answered, once.
    raw.send(json!({"jsonrpc": "2.0", "id": 2, "method": "ping"}))
        .await;
    assert_eq!(raw.until(2).await["result"], json!({}));
    // Long after the cancelled call would have finished, nothing more came for it.
    tokio::time::sleep(Duration::from_millis(400)).await;
    raw.send(json!({"jsonrpc": "2.0", "id": 3, "method": "ping"}))
        .await;
    raw.until(3).await;
    assert_eq!(raw.answers_to(2), 1, "only the ping was answered: {:?}", raw.seen);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_request_naming_an_unsupported_version_is_refused_as_rmcp_refuses_it() {
    let mut raw = Raw::open().await;
    raw.send(call(
        4,
        "test_simple_text",
        json!({"io.modelcontextprotocol/protocolVersion": "1999-01-01"}),
    ))
    .await;
    let answer = raw.until(4).await;
    assert!(answer.get("error").is_some(), "{answer}");
    // A plain call beside it is answered as usual.
    raw.send(call(5, "test_simple_text", json!({}))).await;
    let answer = raw.until(5).await;
    assert_eq!(answer["result"]["isError"], false, "{answer}");
}
