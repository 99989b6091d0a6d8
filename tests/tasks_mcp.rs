//! MCP tasks (the `io.modelcontextprotocol/tasks` extension) on the real ops binary, over stdio
//! and over Streamable HTTP: `proc_wait` (`#[tool(task)]`) runs as a task for a 2026-07-28
//! client that declares the extension, inline for any other; `tasks/get` resolves the id at
//! once, shows the tool's progress as the status message and inlines the result; `tasks/cancel`
//! stops it. Questions inside a task, the TTL, the caps and `task = required` run in process.

mod common;

use common::raw_http::spawn_serving;
use common::stdio::Wire;
use serde_json::{Value, json};
use std::net::SocketAddr;
use std::time::Duration;

const TASKS: &str = "io.modelcontextprotocol/tasks";

fn meta(declares_tasks: bool) -> Value {
    let capabilities = if declares_tasks {
        json!({"extensions": {TASKS: {}}, "elicitation": {}})
    } else {
        json!({})
    };
    json!({
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": capabilities,
        "io.modelcontextprotocol/clientInfo": {"name": "tasks-test", "version": "0"}
    })
}

/// A 2026-07-28 client of ops, over one transport.
enum Ops {
    Stdio(Wire, u64),
    /// The child serving (killed on drop) and its address.
    Http(#[allow(dead_code)] tokio::process::Child, SocketAddr),
}

impl Ops {
    async fn stdio() -> Ops {
        Ops::Stdio(Wire::start(&[], false), 10)
    }

    async fn http() -> Ops {
        let (child, addr) = spawn_serving(common::stdio::ops(), &["--http", "127.0.0.1:0"]).await;
        Ops::Http(child, addr)
    }

    /// A request's whole answer (`result` or `error`).
    async fn ask(&mut self, method: &str, mut params: Value, declares_tasks: bool) -> Value {
        params["_meta"] = meta(declares_tasks);
        match self {
            Ops::Stdio(wire, next) => {
                *next += 1;
                wire.request(*next, method, params).await
            }
            Ops::Http(_, addr) => common::raw_http::modern(*addr, method, params).await,
        }
    }

    async fn result(&mut self, method: &str, params: Value) -> Value {
        let answer = self.ask(method, params, true).await;
        assert!(answer.get("result").is_some(), "{method}: {answer}");
        answer["result"].clone()
    }

    /// Polls `tasks/get` until the task's status is `status` (or it ends).
    async fn until(&mut self, id: &str, status: &str) -> Value {
        for _ in 0..200 {
            let task = self.result("tasks/get", json!({"taskId": id})).await;
            let now = task["status"].as_str().unwrap().to_owned();
            if now == status || ["completed", "failed", "cancelled"].contains(&now.as_str()) {
                return task;
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        panic!("task {id} never reached {status}")
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_task_tool_runs_as_a_task_for_a_client_that_declares_tasks() {
    for http in [false, true] {
        let mut ops = if http {
            Ops::http().await
        } else {
            Ops::stdio().await
        };
        let discovered = ops.result("server/discover", json!({})).await;
        assert!(
            discovered["capabilities"]["extensions"].get(TASKS).is_some(),
            "http={http}: {discovered}"
        );
        let created = ops
            .result(
                "tools/call",
                json!({"name": "proc_wait", "arguments": {"pid": 2}}),
            )
            .await;
        assert_eq!(created["resultType"], "task", "http={http}: {created}");
        assert_eq!(created["status"], "working");
        let id = created["taskId"].as_str().unwrap().to_owned();
        assert_eq!(id.len(), 32, "128 bits as hex: {id}");
        assert!(created["ttlMs"].as_u64().unwrap() > 0 && created["pollIntervalMs"].as_u64().is_some());
        assert!(created["createdAt"].is_string() && created["lastUpdatedAt"].is_string());
        // Resolvable at once, and the tool's progress is its status message.
        let working = ops.result("tasks/get", json!({"taskId": id})).await;
        assert_eq!(working["taskId"], id.as_str());
        assert!(working.get("result").is_none(), "{working}");
        let mut message = String::new();
        for _ in 0..40 {
            let task = ops.result("tasks/get", json!({"taskId": id})).await;
            message = task["statusMessage"].as_str().unwrap_or_default().to_owned();
            if !message.is_empty() {
                break;
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        assert!(
            message.starts_with("waiting for shell (pid 2) to exit"),
            "{message}"
        );
        // The process ends: the task completes with the tool's result inlined.
        let killed = ops
            .result(
                "tools/call",
                json!({"name": "proc_kill", "arguments": {"pid": 2}}),
            )
            .await;
        assert_eq!(killed["isError"], false, "{killed}");
        let done = ops.until(&id, "completed").await;
        assert_eq!(done["status"], "completed", "{done}");
        assert_eq!(done["result"]["structuredContent"]["pid"], 2, "{done}");
        assert_eq!(done["result"]["isError"], false);

        // tasks/cancel: acknowledged at once; the wait stops and the task is cancelled.
        let created = ops
            .result(
                "tools/call",
                json!({"name": "proc_wait", "arguments": {"pid": 1}}),
            )
            .await;
        let id = created["taskId"].as_str().unwrap().to_owned();
        let ack = ops.result("tasks/cancel", json!({"taskId": id})).await;
        assert_eq!(ack, json!({"resultType": "complete"}), "{ack}");
        let cancelled = ops.until(&id, "cancelled").await;
        assert_eq!(cancelled["status"], "cancelled", "{cancelled}");

        // A tool failure is a completed task whose result is an error.
        let created = ops
            .result(
                "tools/call",
                json!({"name": "proc_wait", "arguments": {"pid": 999}}),
            )
            .await;
        let failed = ops.until(created["taskId"].as_str().unwrap(), "completed").await;
        assert_eq!(failed["result"]["isError"], true, "{failed}");

        let unknown = ops
            .ask(
                "tasks/get",
                json!({"taskId": "0123456789abcdef0123456789abcdef"}),
                true,
            )
            .await;
        assert_eq!(unknown["error"]["code"], -32602, "{unknown}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_client_without_tasks_gets_the_call_inline_and_no_tasks_methods() {
    let mut ops = Ops::stdio().await;
    let inline = ops
        .ask(
            "tools/call",
            json!({"name": "proc_wait", "arguments": {"pid": 999}}),
            false,
        )
        .await;
    assert_eq!(inline["result"]["isError"], true, "{inline}");
    assert!(inline["result"].get("taskId").is_none());
    let refused = ops.ask("tasks/get", json!({"taskId": "x"}), false).await;
    assert_eq!(refused["error"]["code"], -32021, "{refused}");
    // A legacy session has no tasks: the call runs inline.
    let mut wire = Wire::start(&[], false);
    wire.initialize().await;
    let legacy = wire
        .request(
            5,
            "tools/call",
            json!({"name": "proc_wait", "arguments": {"pid": 999}}),
        )
        .await;
    assert_eq!(legacy["result"]["isError"], true, "{legacy}");
}
