//! The ops example as a child process over real stdio: stdout carries only JSON-RPC even when
//! a handler prints, both eras open on the same binary, unknown methods get standard errors.

mod common;

use common::stdio::Wire;
use serde_json::{Value, json};

fn modern_meta() -> Value {
    json!({
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": {},
        "io.modelcontextprotocol/clientInfo": {"name": "wire-test", "version": "0"}
    })
}

#[tokio::test]
async fn legacy_session_survives_a_handler_that_prints_to_stdout() {
    let mut wire = Wire::start(&[], true);
    let init = wire
        .request(
            1,
            "initialize",
            json!({"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "t", "version": "0"}}),
        )
        .await;
    assert_eq!(init["result"]["serverInfo"]["name"], "ops");
    assert_eq!(
        init["result"]["instructions"],
        "Everything here is about processes, not files."
    );
    wire.send(json!({"jsonrpc": "2.0", "method": "notifications/initialized"}))
        .await;

    // proc.spawn prints to stdout; the answer still arrives intact and nothing else does.
    let spawned = wire
        .request(
            2,
            "tools/call",
            json!({"name": "proc_spawn", "arguments": {"name": "vim"}}),
        )
        .await;
    assert_eq!(spawned["result"]["structuredContent"]["name"], "vim");
    let after = wire
        .request(3, "tools/call", json!({"name": "load_sample"}))
        .await;
    assert_eq!(after["result"]["structuredContent"]["procs"], 3);

    // The whole tools/list answer, byte for byte as it crosses the wire.
    wire.send(json!({"jsonrpc": "2.0", "id": 4, "method": "tools/list"}))
        .await;
    let raw = wire.receive_raw().await;
    let path = format!(
        "{}/tests/golden/ops_tools_list.wire.json",
        env!("CARGO_MANIFEST_DIR")
    );
    if std::env::var_os("SURFACE_BLESS").is_some() {
        std::fs::write(&path, &raw).unwrap();
    }
    assert_eq!(
        raw,
        std::fs::read_to_string(&path).expect("golden (bless with SURFACE_BLESS=1)")
    );

    let unknown = wire.request(5, "no/such/method", json!({})).await;
    assert_eq!(unknown["error"]["code"], -32601, "{unknown}");

    let stderr = wire.stderr().await;
    assert!(
        stderr.contains("spawned vim as 3"),
        "the stray print went to stderr: {stderr}"
    );
}

#[tokio::test]
async fn modern_session_opens_with_server_discover() {
    let mut wire = Wire::start(&[], true);
    let discovered = wire
        .request(1, "server/discover", json!({"_meta": modern_meta()}))
        .await;
    let result = &discovered["result"];
    assert!(
        result["supportedVersions"].to_string().contains("2026-07-28"),
        "{discovered}"
    );
    assert_eq!(
        result["instructions"], "Everything here is about processes, not files.",
        "{discovered}"
    );
    let listed = wire
        .request(2, "tools/list", json!({"_meta": modern_meta()}))
        .await;
    assert_eq!(listed["result"]["tools"].as_array().unwrap().len(), 6, "{listed}");
    let killed = wire
        .request(
            3,
            "tools/call",
            json!({"_meta": modern_meta(), "name": "proc_kill", "arguments": {"pid": 77}}),
        )
        .await;
    assert_eq!(killed["result"]["isError"], true);
    assert_eq!(
        killed["result"]["structuredContent"],
        json!({"kind": "no-such-process", "pid": 77})
    );
    let unknown = wire
        .request(4, "no/such/method", json!({"_meta": modern_meta()}))
        .await;
    assert_eq!(unknown["error"]["code"], -32601, "{unknown}");
    wire.stderr().await;
}
