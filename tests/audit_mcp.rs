//! The audit trail (`McpServer::audit`): one `tracing` event per mutating call, none for a
//! read-only one, none at all by default; arguments only when asked for.

#[allow(dead_code)]
#[path = "../examples/ops.rs"]
mod ops;

use serde_json::json;
use std::io::Write;
use std::sync::{Arc, Mutex};
use surface::mcp::{Audit, McpServer, ServedMcp};
use surface::testing::{Era, TestClient};

/// What a subscriber wrote, shared with the test.
#[derive(Clone, Default)]
struct Captured(Arc<Mutex<Vec<u8>>>);

impl Write for Captured {
    fn write(&mut self, bytes: &[u8]) -> std::io::Result<usize> {
        self.0.lock().unwrap().extend_from_slice(bytes);
        Ok(bytes.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

impl Captured {
    fn lines(&self) -> Vec<String> {
        let text = String::from_utf8(self.0.lock().unwrap().clone()).unwrap();
        text.lines()
            .filter(|l| l.contains("surface::audit"))
            .map(str::to_owned)
            .collect()
    }
}

fn served(audit: Option<Audit>) -> ServedMcp {
    let server = ops::mcp_server(Arc::new(ops::Ops::new()));
    let server: McpServer = match audit {
        Some(audit) => server.audit(audit),
        None => server,
    };
    server.start().unwrap()
}

/// Spawns and kills one process and reads the load, in `era`, with `audit`: the audit lines.
async fn run(audit: Option<Audit>, era: Era) -> Vec<String> {
    let captured = Captured::default();
    let writer = captured.clone();
    let subscriber = tracing_subscriber::fmt()
        .with_writer(move || writer.clone())
        .with_ansi(false)
        .finish();
    // One thread (the test's runtime is current-thread): every event of the calls lands here.
    let _guard = tracing::subscriber::set_default(subscriber);
    let agent = TestClient::connect(&served(audit), era).await;
    let spawned = agent.call("proc_spawn", json!({"name": "audited"})).await;
    let pid = spawned.value()["pid"].as_u64().unwrap();
    agent.call("proc_kill", json!({"pid": pid})).await;
    agent.call("proc_kill", json!({"pid": 999_999})).await;
    agent.call("count", json!({})).await;
    captured.lines()
}

#[tokio::test]
async fn mutating_calls_leave_one_event_each_and_reads_none() {
    for era in [Era::Legacy, Era::Modern] {
        let lines = run(Some(Audit::Mutations), era).await;
        assert_eq!(lines.len(), 3, "{era:?}: {lines:#?}");
        assert!(lines[0].contains("tool=\"proc_spawn\""), "{}", lines[0]);
        assert!(lines[1].contains("tool=\"proc_kill\""), "{}", lines[1]);
        for line in &lines[..2] {
            assert!(
                line.contains(" INFO ") && line.contains("surface::audit: call"),
                "{line}"
            );
            assert!(
                line.contains("subject=\"-\""),
                "stdio-like transports identify nobody: {line}"
            );
            assert!(line.contains("outcome=\"ok\""), "{line}");
            assert!(line.contains("duration_ms="), "{line}");
            assert!(!line.contains("arguments"), "no arguments unless asked: {line}");
        }
        assert!(lines[2].contains("outcome=\"failed: "), "{}", lines[2]);
    }
}

#[tokio::test]
async fn arguments_are_recorded_only_on_request_and_nothing_by_default() {
    let lines = run(Some(Audit::MutationsWithArguments), Era::Legacy).await;
    assert!(
        lines[0].contains(r#"arguments="{\"name\":\"audited\"}""#),
        "{}",
        lines[0]
    );
    assert!(run(None, Era::Legacy).await.is_empty());
    assert!(run(Some(Audit::Off), Era::Modern).await.is_empty());
}
