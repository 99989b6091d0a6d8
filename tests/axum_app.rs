//! `examples/axum_app.rs`: an axum app whose own routes and the MCP endpoint mounted at `/mcp`
//! (`ServedMcp::http_service`) answer side by side over one listener, and whose graceful
//! shutdown answers the calls in flight before it exits. Plain HTTP/1.1 over real TCP; the
//! official Python SDK drives the same app in `interop/run` (`python-axum`).

mod common;

use common::raw_http::{http_at, legacy_post, legacy_session, spawn_serving_with};
use serde_json::json;
use std::net::SocketAddr;
use std::time::{Duration, Instant};

async fn app(env: &[(&str, &str)]) -> (tokio::process::Child, SocketAddr) {
    spawn_serving_with(
        &common::example_binary("axum_app"),
        &["--http", "127.0.0.1:0"],
        env,
    )
    .await
}

fn sigterm(child: &tokio::process::Child) {
    let pid = child.id().expect("the app runs").to_string();
    let status = std::process::Command::new("kill")
        .args(["-TERM", &pid])
        .status()
        .unwrap();
    assert!(status.success());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn its_own_routes_and_mcp_answer_side_by_side() {
    let (_child, addr) = app(&[]).await;
    let health = http_at(addr, "GET", "/health", &[], "").await;
    assert_eq!((health.status, health.body.as_str()), (200, "ok"));
    let load = http_at(addr, "GET", "/api/load", &[], "").await;
    assert_eq!(load.status, 200);
    assert_eq!(
        serde_json::from_str::<serde_json::Value>(&load.body).unwrap()["procs"],
        2
    );
    assert_eq!(http_at(addr, "GET", "/nothing", &[], "").await.status, 404);

    let session = legacy_session(addr).await;
    let list = legacy_post(
        addr,
        &session,
        &json!({"jsonrpc": "2.0", "id": 1, "method": "tools/list"}),
    )
    .await;
    let tools = list.message()["result"]["tools"].clone();
    let names: Vec<&str> = tools
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["name"].as_str().unwrap())
        .collect();
    assert!(
        names.contains(&"proc_spawn") && names.contains(&"load_sample"),
        "{names:?}"
    );
    let spawn = json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call",
        "params": {"name": "proc_spawn", "arguments": {"name": "vim"}}});
    let spawned = legacy_post(addr, &session, &spawn).await.message();
    assert_eq!(spawned["result"]["structuredContent"]["pid"], 3, "{spawned}");
    // The app's own route reads what the MCP call changed: one surface behind both.
    let load = http_at(addr, "GET", "/api/load", &[], "").await;
    assert_eq!(
        serde_json::from_str::<serde_json::Value>(&load.body).unwrap()["procs"],
        3
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_mounted_endpoint_keeps_the_origin_check() {
    let (_child, addr) = app(&[]).await;
    let init = json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
        "protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "x", "version": "0"}}});
    let headers = [
        ("Content-Type", "application/json"),
        ("Accept", "application/json, text/event-stream"),
        ("Origin", "http://evil.example"),
    ];
    let answer = http_at(addr, "POST", "/mcp", &headers, &init.to_string()).await;
    assert_eq!(answer.status, 403, "{answer:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sigterm_answers_the_calls_in_flight_then_exits() {
    // Each proc_spawn takes 1.5 s: long enough to be in flight when SIGTERM arrives.
    let (mut child, addr) = app(&[("OPS_SPAWN_DELAY_MS", "1500")]).await;
    let session = legacy_session(addr).await;
    let calls: Vec<_> = (0..3)
        .map(|i| {
            let session = session.clone();
            tokio::spawn(async move {
                let spawn = json!({"jsonrpc": "2.0", "id": 10 + i, "method": "tools/call",
                    "params": {"name": "proc_spawn", "arguments": {"name": format!("p{i}")}}});
                legacy_post(addr, &session, &spawn).await
            })
        })
        .collect();
    tokio::time::sleep(Duration::from_millis(400)).await;
    let asked = Instant::now();
    sigterm(&child);
    tokio::time::sleep(Duration::from_millis(200)).await;

    // Draining: a new MCP request is refused with a sentence; the call already made is not.
    let late = legacy_post(
        addr,
        &session,
        &json!({"jsonrpc": "2.0", "id": 99, "method": "tools/list"}),
    )
    .await;
    assert_eq!(late.status, 503, "{late:?}");
    assert!(
        late.message()["error"]["message"]
            .as_str()
            .unwrap()
            .contains("shutting down"),
        "{late:?}"
    );

    let mut pids = Vec::new();
    for call in calls {
        let answer = call.await.unwrap();
        assert_eq!(answer.status, 200, "{answer:?}");
        let message = answer.message();
        pids.push(
            message["result"]["structuredContent"]["pid"]
                .as_u64()
                .expect("answered, not cut off"),
        );
    }
    pids.sort();
    assert_eq!(pids, [3, 4, 5], "every call in flight was answered");

    let status = tokio::time::timeout(Duration::from_secs(10), child.wait())
        .await
        .expect("the app exits within its drain timeout")
        .unwrap();
    assert!(status.success(), "{status:?}");
    assert!(asked.elapsed() < Duration::from_secs(10));
}
