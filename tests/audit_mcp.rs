//! The audit trail (`McpServer::audit`, `WireOptions::audit`): one `tracing` event per mutating
//! call, none for a read-only one, none at all by default; arguments only when asked for — on
//! the MCP face (both eras, in memory and over authenticated HTTP, where the subject is the
//! token's) and on the wire face (the subject is the peer's `uid:<n>`).

mod common;

#[allow(dead_code)]
#[path = "../examples/ops.rs"]
mod ops;

use serde_json::json;
use std::io::Write;
use std::sync::{Arc, Mutex};
use surface::mcp::{Audit, McpServer, ServedMcp};
use surface::testing::{Era, TestClient};
use surface::wire::{WireOptions, dial_unix_socket, serve_unix_socket_with};

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
    /// Captures every event of this thread until the guard drops (the tests' runtimes are
    /// current-thread: every event of the calls, and of the served side's tasks, lands here).
    fn start() -> (Captured, tracing::subscriber::DefaultGuard) {
        let captured = Captured::default();
        let writer = captured.clone();
        let subscriber = tracing_subscriber::fmt()
            .with_writer(move || writer.clone())
            .with_ansi(false)
            .finish();
        (captured, tracing::subscriber::set_default(subscriber))
    }

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
    let (captured, _guard) = Captured::start();
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

/// The wire face's audit trail: on a unix socket, with `audit`, spawns and kills one process
/// and samples the load (read-only): the audit lines.
async fn run_wire(audit: Option<Audit>) -> Vec<String> {
    let (captured, _guard) = Captured::start();
    let dir = std::env::temp_dir().join(format!(
        "surface-audit-wire-{}-{}",
        std::process::id(),
        audit.is_some()
    ));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("ops.sock");
    let mut options = WireOptions::default();
    if let Some(audit) = audit {
        options = options.audit(audit);
    }
    let server = serve_unix_socket_with(&path, Arc::new(ops::Ops::new()), ops::EXPOSE, options).unwrap();
    let connection = dial_unix_socket::<ops::Ops>(&path).await.unwrap();
    let proc = connection.client.proc();
    let spawned = proc
        .spawn(ops::Spawn {
            name: "audited".into(),
            paused: false,
        })
        .await
        .unwrap();
    proc.kill(ops::Kill { pid: spawned.pid }).await.unwrap();
    proc.kill(ops::Kill { pid: 999_999 }).await.unwrap_err();
    let dispatch = surface::SurfaceClient::dispatch(&connection.client);
    surface::call_typed::<_, serde_json::Value>(&**dispatch, "load.sample", &json!({}))
        .await
        .unwrap();
    connection.dispose();
    drop(server);
    let _ = std::fs::remove_dir_all(&dir);
    captured.lines()
}

#[tokio::test]
async fn the_wire_face_audits_each_mutating_call_by_uid_and_nothing_by_default() {
    let uid = std::os::unix::fs::MetadataExt::uid(&std::fs::metadata("/proc/self").unwrap());
    let lines = run_wire(Some(Audit::Mutations)).await;
    assert_eq!(lines.len(), 3, "{lines:#?}");
    assert!(lines[0].contains("tool=\"proc.spawn\""), "{}", lines[0]);
    assert!(lines[1].contains("tool=\"proc.kill\""), "{}", lines[1]);
    for line in &lines {
        assert!(
            line.contains(" INFO ") && line.contains("surface::audit: call"),
            "{line}"
        );
        assert!(line.contains(&format!("subject=\"uid:{uid}\"")), "{line}");
        assert!(line.contains("issuer=\"unix\""), "{line}");
        assert!(line.contains("duration_ms="), "{line}");
        assert!(!line.contains("arguments"), "no arguments unless asked: {line}");
    }
    assert!(lines[1].contains("outcome=\"ok\""), "{}", lines[1]);
    assert!(lines[2].contains("outcome=\"failed: "), "{}", lines[2]);
    let with_arguments = run_wire(Some(Audit::MutationsWithArguments)).await;
    assert!(
        with_arguments[0].contains(r#"arguments="{\"name\":\"audited\",\"paused\":false}""#),
        "{}",
        with_arguments[0]
    );
    assert!(run_wire(None).await.is_empty());
}

/// Alice's token, and nobody else's.
struct Alice;

impl surface::auth::TokenVerifier for Alice {
    async fn verify(&self, token: &str) -> Result<surface::Principal, surface::auth::Refusal> {
        match token {
            "alice-admin" => {
                Ok(surface::Principal::new("https://issuer.test", "alice").with_scopes(["ops.admin"]))
            }
            _ => Err(surface::auth::Refusal::new("unknown token")),
        }
    }
}

/// Over Streamable HTTP with authentication, in the 2026-07-28 era (one POST a request): the
/// event names the token's subject and issuer, and never the token.
#[tokio::test]
async fn over_http_the_event_names_the_tokens_subject() {
    let (captured, _guard) = Captured::start();
    let (port, auth) = common::custom_auth(Alice);
    let options = surface::mcp::HttpOptions::loopback(port).auth(auth);
    let server = served(Some(Audit::Mutations)).serve_http(options).await.unwrap();
    let addr = server.local_addr();
    let call = |name: &str, arguments: serde_json::Value| {
        let body = json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {
            "name": name, "arguments": arguments, "_meta": {
                "io.modelcontextprotocol/protocolVersion": "2026-07-28",
                "io.modelcontextprotocol/clientInfo": {"name": "audit", "version": "0"},
                "io.modelcontextprotocol/clientCapabilities": {}}}});
        let name = name.to_owned();
        async move {
            let headers = [
                ("Content-Type", "application/json"),
                ("Accept", "application/json, text/event-stream"),
                ("Authorization", "Bearer alice-admin"),
                ("MCP-Protocol-Version", "2026-07-28"),
                ("Mcp-Method", "tools/call"),
                ("Mcp-Name", name.as_str()),
            ];
            common::raw_http::http(addr, "POST", &headers, &body.to_string()).await
        }
    };
    let spawned = call("proc_spawn", json!({"name": "audited"})).await;
    assert_eq!(spawned.status, 200, "{spawned:?}");
    assert_eq!(call("count", json!({})).await.status, 200);
    let lines = captured.lines();
    assert_eq!(lines.len(), 1, "{lines:#?}");
    assert_says(
        &lines[0],
        &[
            "subject=\"alice\"",
            "issuer=\"https://issuer.test\"",
            "tool=\"proc_spawn\" outcome=\"ok\"",
        ],
    );
    assert!(!lines[0].contains("alice-admin"), "never the token: {}", lines[0]);
    drop(server);
}

/// The argv face in-process, with `audit`: spawns one process and counts them (read-only).
async fn run_cli(audit: Option<Audit>) -> Vec<String> {
    let (captured, _guard) = Captured::start();
    let mut cli = surface::cli::Cli::new("opsctl", "0")
        .core(ops::core())
        .client(|| surface::mcp::BundleClient::with_core(ops::OpsClient::direct(Arc::new(ops::Ops::new()))));
    if let Some(audit) = audit {
        cli = cli.audit(audit);
    }
    let cli = cli.build().unwrap();
    assert_eq!(cli.run(["opsctl", "proc_spawn", "--name", "audited"]).await, 0);
    assert_eq!(cli.run(["opsctl", "count"]).await, 0);
    captured.lines()
}

#[tokio::test]
async fn the_argv_face_audits_its_mutating_calls_by_uid() {
    let uid = std::os::unix::fs::MetadataExt::uid(&std::fs::metadata("/proc/self").unwrap());
    let lines = run_cli(Some(Audit::Mutations)).await;
    assert_eq!(lines.len(), 1, "{lines:#?}");
    let subject = format!("subject=\"uid:{uid}\"");
    assert_says(&lines[0], &[&subject, "tool=\"proc_spawn\" outcome=\"ok\""]);
    assert!(!lines[0].contains("arguments"), "{}", lines[0]);
    assert!(run_cli(None).await.is_empty());
}

/// Asserts `line` says each of `parts`.
fn assert_says(line: &str, parts: &[&str]) {
    for part in parts {
        assert!(line.contains(part), "{part} is not in {line}");
    }
}
