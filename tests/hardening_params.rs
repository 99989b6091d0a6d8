//! Malformed params of the methods the server has are `-32602` (invalid params), never
//! `-32601` (method not found); a method the request's era removed is `-32601`. The same on
//! stdio (raw lines over an in-process pipe) and on Streamable HTTP, in both eras.

mod common;

#[allow(dead_code)]
#[path = "../examples/conformance.rs"]
mod conformance;

use common::raw_http::http;
use serde_json::{Value, json};
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;
use surface::mcp::{HttpOptions, ServedMcp};
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader, DuplexStream, ReadHalf, WriteHalf};

const MODERN: &str = "2026-07-28";
const LEGACY: &str = "2025-11-25";

fn served() -> ServedMcp {
    conformance::start(Arc::new(conformance::Conformance::new())).unwrap()
}

fn meta() -> Value {
    json!({
        "io.modelcontextprotocol/protocolVersion": MODERN,
        "io.modelcontextprotocol/clientCapabilities": {},
        "io.modelcontextprotocol/clientInfo": {"name": "hardening", "version": "0"},
    })
}

/// Each malformed request of a method the server has, by what is wrong with it.
fn malformed() -> Vec<(&'static str, &'static str, Value)> {
    let complete = |r#ref: Value, argument: Option<Value>| {
        let mut params = json!({"ref": r#ref});
        if let Some(argument) = argument {
            params["argument"] = argument;
        }
        params
    };
    let prompt = json!({"type": "ref/prompt", "name": "test_prompt_with_arguments"});
    vec![
        (
            "a prompt name that is a number",
            "prompts/get",
            json!({"name": 5}),
        ),
        (
            "prompt arguments that are a string",
            "prompts/get",
            json!({"name": "test_prompt_with_arguments", "arguments": "x"}),
        ),
        (
            "an unknown ref type",
            "completion/complete",
            complete(
                json!({"type": "ref/bogus", "name": "x"}),
                Some(json!({"name": "arg1", "value": "a"})),
            ),
        ),
        (
            "no argument",
            "completion/complete",
            complete(prompt.clone(), None),
        ),
        (
            "an argument value that is not a string",
            "completion/complete",
            complete(prompt, Some(json!({"name": "arg1", "value": 5}))),
        ),
    ]
}

/// What each era answers: `(what, method, params, code)`.
fn expected(modern: bool) -> Vec<(&'static str, &'static str, Value, i64)> {
    let mut cases: Vec<_> = malformed()
        .into_iter()
        .map(|(what, method, params)| (what, method, params, -32602))
        .collect();
    if modern {
        // Removed at 2026-07-28 (the level rides each request's `_meta`), whatever its params.
        cases.push((
            "setLevel on 2026-07-28",
            "logging/setLevel",
            json!({"level": "info"}),
            -32601,
        ));
        cases.push((
            "a bad setLevel on 2026-07-28",
            "logging/setLevel",
            json!({"level": "loud"}),
            -32601,
        ));
    } else {
        cases.push((
            "an unknown log level",
            "logging/setLevel",
            json!({"level": "loud"}),
            -32602,
        ));
    }
    cases
}

/// A stdio session over an in-process pipe, one raw JSON-RPC line at a time.
struct Lines {
    write: WriteHalf<DuplexStream>,
    read: BufReader<ReadHalf<DuplexStream>>,
}

impl Lines {
    fn open(served: &ServedMcp) -> Lines {
        let (read, write) = tokio::io::split(common::pipe(served, 1 << 20));
        Lines {
            write,
            read: BufReader::new(read),
        }
    }

    async fn send(&mut self, message: Value) {
        let mut line = serde_json::to_vec(&message).unwrap();
        line.push(b'\n');
        self.write.write_all(&line).await.unwrap();
    }

    async fn request(&mut self, id: u64, method: &str, params: Value) -> Value {
        self.send(json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}))
            .await;
        loop {
            let mut line = String::new();
            tokio::time::timeout(Duration::from_secs(10), self.read.read_line(&mut line))
                .await
                .expect("an answer in time")
                .unwrap();
            let v: Value = serde_json::from_str(&line).unwrap_or_else(|e| panic!("{line:?}: {e}"));
            if v["id"] == id {
                return v;
            }
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn malformed_params_are_invalid_params_on_stdio_in_both_eras() {
    let served = served();
    let mut legacy = Lines::open(&served);
    let init = legacy
        .request(
            0,
            "initialize",
            json!({"protocolVersion": LEGACY, "capabilities": {}, "clientInfo": {"name": "t", "version": "0"}}),
        )
        .await;
    assert!(init.get("result").is_some(), "{init}");
    legacy
        .send(json!({"jsonrpc": "2.0", "method": "notifications/initialized"}))
        .await;
    for (n, (what, method, params, code)) in expected(false).into_iter().enumerate() {
        let answer = legacy.request(1 + n as u64, method, params).await;
        assert_eq!(answer["error"]["code"], code, "legacy, {what}: {answer}");
    }
    let mut modern = Lines::open(&served);
    let discover = modern
        .request(0, "server/discover", json!({"_meta": meta()}))
        .await;
    assert!(discover.get("result").is_some(), "{discover}");
    for (n, (what, method, mut params, code)) in expected(true).into_iter().enumerate() {
        params["_meta"] = meta();
        let answer = modern.request(1 + n as u64, method, params).await;
        assert_eq!(answer["error"]["code"], code, "2026-07-28, {what}: {answer}");
    }
}

async fn post(addr: SocketAddr, headers: &[(&str, &str)], body: Value) -> Value {
    let mut all = vec![
        ("Content-Type", "application/json"),
        ("Accept", "application/json, text/event-stream"),
    ];
    all.extend_from_slice(headers);
    let answer = http(addr, "POST", &all, &body.to_string()).await;
    answer.message()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn malformed_params_are_invalid_params_on_http_in_both_eras() {
    let server = served().serve_http(HttpOptions::loopback(0)).await.unwrap();
    let addr = server.local_addr();
    let init = json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
        "protocolVersion": LEGACY, "capabilities": {}, "clientInfo": {"name": "t", "version": "0"}}});
    let all = [
        ("Content-Type", "application/json"),
        ("Accept", "application/json, text/event-stream"),
    ];
    let opened = http(addr, "POST", &all, &init.to_string()).await;
    let session = opened.header("mcp-session-id").expect("a session").to_owned();
    let legacy = [
        ("Mcp-Session-Id", session.as_str()),
        ("MCP-Protocol-Version", LEGACY),
    ];
    let initialized = json!({"jsonrpc": "2.0", "method": "notifications/initialized"});
    let mut headers = all.to_vec();
    headers.extend_from_slice(&legacy);
    let accepted = http(addr, "POST", &headers, &initialized.to_string()).await;
    assert_eq!(accepted.status, 202, "{accepted:?}");
    for (n, (what, method, params, code)) in expected(false).into_iter().enumerate() {
        let body = json!({"jsonrpc": "2.0", "id": 1 + n, "method": method, "params": params});
        let answer = post(addr, &legacy, body).await;
        assert_eq!(answer["error"]["code"], code, "legacy, {what}: {answer}");
    }
    for (n, (what, method, mut params, code)) in expected(true).into_iter().enumerate() {
        params["_meta"] = meta();
        let mut headers = vec![("MCP-Protocol-Version", MODERN), ("Mcp-Method", method)];
        let name = params["name"].as_str().map(str::to_owned);
        if let Some(name) = &name {
            headers.push(("Mcp-Name", name));
        }
        let body = json!({"jsonrpc": "2.0", "id": 1 + n, "method": method, "params": params});
        let answer = post(addr, &headers, body).await;
        assert_eq!(answer["error"]["code"], code, "2026-07-28, {what}: {answer}");
    }
}
