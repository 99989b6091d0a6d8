//! `McpServer::stdio_scopes`: a stdio client given `ops.read` only sees and reaches exactly what
//! that scope reaches on the ops example; anything else answers as if it did not exist. Driven
//! with raw JSON-RPC lines over the transport `serve_stdio` uses.

mod common;

#[allow(dead_code)]
#[path = "../examples/ops.rs"]
mod ops;

use serde_json::{Value, json};
use std::sync::Arc;
use std::time::Duration;
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader, DuplexStream, ReadHalf, WriteHalf};

struct Raw {
    out: WriteHalf<DuplexStream>,
    lines: BufReader<ReadHalf<DuplexStream>>,
    next: u64,
}

impl Raw {
    /// The ops server given `scopes` on stdio (none: all), opened with `initialize`.
    async fn open(scopes: Option<&[&str]>) -> Raw {
        let mut server = ops::mcp_server(Arc::new(ops::Ops::new()));
        if let Some(scopes) = scopes {
            server = server.stdio_scopes(scopes.iter().copied());
        }
        let served = server.start().expect("composes");
        let (r, w) = tokio::io::split(common::pipe(&served, 1 << 20));
        let mut raw = Raw {
            out: w,
            lines: BufReader::new(r),
            next: 1,
        };
        raw.ask(
            "initialize",
            json!({"protocolVersion": "2025-06-18", "capabilities": {},
                "clientInfo": {"name": "t", "version": "0"}}),
        )
        .await;
        raw.send(json!({"jsonrpc": "2.0", "method": "notifications/initialized"}))
            .await;
        raw
    }

    async fn send(&mut self, message: Value) {
        let mut line = serde_json::to_vec(&message).unwrap();
        line.push(b'\n');
        self.out.write_all(&line).await.unwrap();
    }

    /// Sends one request and answers its answer.
    async fn ask(&mut self, method: &str, params: Value) -> Value {
        let id = self.next;
        self.next += 1;
        self.send(json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}))
            .await;
        loop {
            let mut line = String::new();
            let n = tokio::time::timeout(Duration::from_secs(30), self.lines.read_line(&mut line))
                .await
                .expect("an answer in time")
                .unwrap();
            assert!(n > 0, "the server closed");
            let v: Value = serde_json::from_str(&line).unwrap();
            if v["id"] == id && v.get("method").is_none() {
                return v;
            }
        }
    }

    async fn names(&mut self, method: &str, items: &str, key: &str) -> Vec<String> {
        let answer = self.ask(method, json!({})).await;
        let mut names: Vec<String> = answer["result"][items]
            .as_array()
            .unwrap_or_else(|| panic!("{answer}"))
            .iter()
            .map(|i| i[key].as_str().unwrap().to_owned())
            .collect();
        names.sort();
        names
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_stdio_client_given_ops_read_reaches_only_what_it_reaches() {
    let mut reader = Raw::open(Some(&["ops.read"])).await;
    let tools = reader.names("tools/list", "tools", "name").await;
    assert_eq!(tools, ["count", "load_sample", "proc_wait", "processes_view"]);
    let resources = reader.names("resources/list", "resources", "uri").await;
    assert!(
        resources.contains(&"surface://cells/load".to_owned()),
        "{resources:?}"
    );
    // proc_kill needs ops.admin: as if it did not exist.
    let kill = reader
        .ask(
            "tools/call",
            json!({"name": "proc_kill", "arguments": {"pid": 1}}),
        )
        .await;
    assert_eq!(kill["error"]["code"], -32602, "{kill}");
    assert!(
        kill["error"]["message"]
            .as_str()
            .unwrap()
            .contains("unknown tool \"proc_kill\""),
        "{kill}"
    );
    let load = reader
        .ask("resources/read", json!({"uri": "surface://cells/load"}))
        .await;
    assert!(load["result"]["contents"].is_array(), "{load}");

    // Given nothing: none of ops' scoped tools or resources exist for it.
    let mut nobody = Raw::open(Some(&[])).await;
    assert_eq!(
        nobody.names("tools/list", "tools", "name").await,
        Vec::<String>::new()
    );
    let uris = nobody.names("resources/list", "resources", "uri").await;
    assert_eq!(uris, Vec::<String>::new());
    let load = nobody
        .ask("resources/read", json!({"uri": "surface://cells/load"}))
        .await;
    assert_eq!(load["error"]["code"], -32002, "{load}");
    let sub = nobody
        .ask("resources/subscribe", json!({"uri": "surface://cells/load"}))
        .await;
    assert!(sub.get("error").is_some(), "{sub}");

    // Without stdio_scopes the parent is trusted: everything.
    let mut trusted = Raw::open(None).await;
    let all = trusted.names("tools/list", "tools", "name").await;
    assert!(all.contains(&"proc_kill".to_owned()), "{all:?}");
}
