//! `notifications/tasks` over `subscriptions/listen` with the `taskIds` filter, on the real ops
//! binary over stdio and over Streamable HTTP: a listen naming a `proc_wait` task hears its state
//! at once (`working`), then its end (`completed`, the result inlined) when another call kills
//! the process; every notification is marked with the listen's id, and an id the caller cannot
//! see is ignored.

mod common;

use common::raw_http::{Listen, http, spawn_serving};
use common::stdio::Wire;
use serde_json::{Value, json};
use std::net::SocketAddr;

const TASKS: &str = "io.modelcontextprotocol/tasks";

fn meta() -> Value {
    json!({
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": {"extensions": {TASKS: {}}},
        "io.modelcontextprotocol/clientInfo": {"name": "tasks-listen-test", "version": "0"}
    })
}

fn with_meta(mut params: Value) -> Value {
    params["_meta"] = meta();
    params
}

fn request(id: u64, method: &str, params: Value) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "method": method, "params": with_meta(params)})
}

fn listen(id: u64, task_ids: &[&str]) -> Value {
    request(
        id,
        "subscriptions/listen",
        json!({"notifications": {"taskIds": task_ids}}),
    )
}

/// Checks the two notifications a listen on `listen_id` heard for task `id`: `working`, then
/// `completed` with the tool's result.
fn assert_heard(heard: &[Value], id: &str, listen_id: u64) {
    let statuses: Vec<&str> = heard
        .iter()
        .map(|n| n["params"]["status"].as_str().unwrap())
        .collect();
    assert_eq!(statuses, ["working", "completed"], "{heard:?}");
    for n in heard {
        assert_eq!(n["params"]["taskId"], id, "{n}");
        assert_eq!(
            n["params"]["_meta"]["io.modelcontextprotocol/subscriptionId"], listen_id,
            "{n}"
        );
        assert!(
            n["params"]["createdAt"].is_string() && n["params"]["ttlMs"].is_u64(),
            "{n}"
        );
    }
    assert_eq!(
        heard[1]["params"]["result"]["structuredContent"]["pid"], 2,
        "{:?}",
        heard[1]
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_listen_naming_a_task_hears_its_status_over_stdio() {
    let mut wire = Wire::start(&[], false);
    let created = wire
        .request(
            1,
            "tools/call",
            with_meta(json!({"name": "proc_wait", "arguments": {"pid": 2}})),
        )
        .await;
    assert_eq!(created["result"]["resultType"], "task", "{created}");
    let id = created["result"]["taskId"].as_str().unwrap().to_owned();
    // Also names an id nobody created: ignored.
    wire.send(listen(7, &[&id, "0123456789abcdef0123456789abcdef"]))
        .await;
    let mut heard = Vec::new();
    let mut killed = false;
    while heard.len() < 2 {
        let message = wire.receive().await;
        match message["method"].as_str() {
            Some("notifications/tasks") => {
                heard.push(message);
                if !killed {
                    // The task is watched: end it through another call.
                    wire.send(request(
                        2,
                        "tools/call",
                        json!({"name": "proc_kill", "arguments": {"pid": 2}}),
                    ))
                    .await;
                    killed = true;
                }
            }
            Some("notifications/subscriptions/acknowledged") => {}
            _ if message["id"] == 2 => assert!(message.get("result").is_some(), "{message}"),
            _ => panic!("unexpected {message}"),
        }
    }
    assert_heard(&heard, &id, 7);
}

async fn post(addr: SocketAddr, body: &Value) -> Value {
    let method = body["method"].as_str().unwrap();
    let name = body["params"]["name"]
        .as_str()
        .or(body["params"]["taskId"].as_str())
        .unwrap_or("")
        .to_owned();
    let mut headers = vec![
        ("Content-Type", "application/json"),
        ("Accept", "application/json, text/event-stream"),
        ("MCP-Protocol-Version", "2026-07-28"),
        ("Mcp-Method", method),
    ];
    if !name.is_empty() {
        headers.push(("Mcp-Name", &name));
    }
    http(addr, "POST", &headers, &body.to_string()).await.message()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_listen_naming_a_task_hears_its_status_over_http() {
    let (_child, addr) = spawn_serving(common::stdio::ops(), &["--http", "127.0.0.1:0"]).await;
    let created = post(
        addr,
        &request(
            1,
            "tools/call",
            json!({"name": "proc_wait", "arguments": {"pid": 2}}),
        ),
    )
    .await;
    assert_eq!(created["result"]["resultType"], "task", "{created}");
    let id = created["result"]["taskId"].as_str().unwrap().to_owned();
    let mut stream = Listen::open(addr, &listen(9, &[&id, "0123456789abcdef0123456789abcdef"])).await;
    let mut heard = Vec::new();
    while heard.len() < 2 {
        let message = stream.next().await;
        match message["method"].as_str() {
            Some("notifications/tasks") => {
                heard.push(message);
                if heard.len() == 1 {
                    let killed = post(
                        addr,
                        &request(
                            2,
                            "tools/call",
                            json!({"name": "proc_kill", "arguments": {"pid": 2}}),
                        ),
                    )
                    .await;
                    assert!(killed.get("result").is_some(), "{killed}");
                }
            }
            Some("notifications/subscriptions/acknowledged") => {}
            _ => panic!("unexpected {message}"),
        }
    }
    assert_heard(&heard, &id, 9);
}
