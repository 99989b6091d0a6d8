//! Graceful shutdown on stdio and on the wire face (its socket and its stdio), through the real ops binary and SIGTERM:
//! slow calls already in flight are answered, work sent after the shutdown began is refused
//! (wire) or never read (stdio), the long-lived streams end with a final event (a listen's
//! result, a watch's final frame), and the process exits well within its drain timeout.

mod common;

use common::daemon::{settle, socket_dir};
use common::stdio::Wire;
use serde_json::{Value, json};
use std::process::Stdio;
use std::time::{Duration, Instant};
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};

fn sigterm(pid: u32) {
    let status = std::process::Command::new("kill")
        .args(["-TERM", &pid.to_string()])
        .status()
        .unwrap();
    assert!(status.success());
}

/// A 2026-07-28 request: the session opens with the first one, no `initialize`.
fn modern(id: u64, method: &str, mut params: Value) -> Value {
    params["_meta"] = json!({
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": {},
        "io.modelcontextprotocol/clientInfo": {"name": "shutdown-test", "version": "0"}
    });
    json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params})
}

fn spawn(id: u64, name: &str) -> Value {
    modern(
        id,
        "tools/call",
        json!({"name": "proc_spawn", "arguments": {"name": name}}),
    )
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sigterm_on_stdio_answers_the_calls_in_flight_ends_the_listen_and_exits() {
    // Each proc_spawn takes 1.5 s: in flight when SIGTERM arrives.
    let mut wire = Wire::start(&[("OPS_SPAWN_DELAY_MS", "1500")], true);
    let mut stderr = BufReader::new(wire.child.stderr.take().unwrap()).lines();
    // A listen stream (naming a task nobody created: it hears nothing until it ends).
    wire.send(modern(
        1,
        "subscriptions/listen",
        json!({"notifications": {"taskIds": ["0123456789abcdef0123456789abcdef"]}}),
    ))
    .await;
    for (id, name) in [(10, "a"), (11, "b"), (12, "c")] {
        wire.send(spawn(id, name)).await;
    }
    // Input is read in order: once the ping is answered, the three calls are in flight.
    wire.send(modern(5, "ping", json!({}))).await;
    let mut seen = Vec::new();
    loop {
        let message = wire.receive().await;
        if message["id"] == 5 {
            break;
        }
        seen.push(message);
    }
    let asked = Instant::now();
    sigterm(wire.child.id().unwrap());
    loop {
        let line = tokio::time::timeout(Duration::from_secs(20), stderr.next_line())
            .await
            .expect("ops says it is shutting down")
            .unwrap()
            .expect("stderr open");
        if line.contains("shutting down") {
            break;
        }
    }
    // Sent after the shutdown began: never started.
    wire.send(spawn(20, "late")).await;
    let mut pids = Vec::new();
    let mut listen_ended = false;
    loop {
        let mut line = String::new();
        let n = tokio::time::timeout(Duration::from_secs(20), wire.stdout.read_line(&mut line))
            .await
            .expect("stdout ends within the drain timeout")
            .unwrap();
        if n == 0 {
            break;
        }
        seen.push(serde_json::from_str(&line).unwrap());
    }
    for message in &seen {
        match message["id"].as_u64() {
            Some(10..=12) => pids.push(
                message["result"]["structuredContent"]["pid"]
                    .as_u64()
                    .unwrap_or_else(|| panic!("answered, not cut off: {message}")),
            ),
            Some(1) => {
                assert!(
                    message.get("result").is_some(),
                    "the listen's final result: {message}"
                );
                listen_ended = true;
            }
            Some(20) => panic!("a call sent after the shutdown began was answered: {message}"),
            _ => {}
        }
    }
    pids.sort();
    assert_eq!(pids, [3, 4, 5], "every call in flight was answered: {seen:?}");
    assert!(listen_ended, "the listen ended with its final result: {seen:?}");
    let status = tokio::time::timeout(Duration::from_secs(10), wire.child.wait())
        .await
        .expect("ops exits within its drain timeout")
        .unwrap();
    assert!(status.success(), "{status:?}");
    assert!(asked.elapsed() < Duration::from_secs(10));
}

/// Drives one wire connection through a graceful shutdown of the ops process `pid`: a watch,
/// three slow calls in flight, SIGTERM, then (once `began` says the shutdown has begun) a late
/// call. Reads to the end of the connection and checks that every call in flight was answered,
/// the late one refused with a sentence and the watch ended with a final frame; then that the
/// process exits well within its drain timeout.
async fn wire_shutdown(
    mut child: tokio::process::Child,
    reader: impl tokio::io::AsyncRead + Unpin,
    mut writer: impl tokio::io::AsyncWrite + Unpin,
    began: impl std::future::Future<Output = ()>,
) {
    let mut frames = BufReader::new(reader).lines();
    let mut next = async || -> Option<Value> {
        let line = tokio::time::timeout(Duration::from_secs(20), frames.next_line())
            .await
            .expect("a frame in time")
            .unwrap()?;
        Some(serde_json::from_str(&line).unwrap())
    };
    let greeting = next().await.unwrap();
    assert_eq!(greeting["ok"]["surface"], "Ops", "{greeting}");
    let mut send = async |frame: Value| {
        writer.write_all(format!("{frame}\n").as_bytes()).await.unwrap();
        writer.flush().await.unwrap();
    };
    send(json!({"id": 1, "op": "watch", "member": "processes"})).await;
    for (id, name) in [(10, "a"), (11, "b"), (12, "c")] {
        send(json!({"id": id, "op": "call", "procedure": "proc.spawn", "input": {"name": name}})).await;
    }
    // Read in order: once the list is answered, the three calls are in flight.
    send(json!({"id": 5, "op": "list"})).await;
    let mut seen = Vec::new();
    loop {
        let frame = next().await.expect("the connection is open");
        if frame["id"] == 5 {
            break;
        }
        seen.push(frame);
    }
    let asked = Instant::now();
    sigterm(child.id().unwrap());
    // Sent once the shutdown has begun, while the calls in flight still run (1.5 s each).
    began.await;
    send(json!({"id": 20, "op": "call", "procedure": "proc.spawn", "input": {"name": "late"}})).await;
    // The process ends the connection without the client closing its side.
    while let Some(frame) = next().await {
        seen.push(frame);
    }
    let answer = |id: u64| {
        seen.iter()
            .filter(|f| f["id"] == id && f.get("change").is_none())
            .cloned()
            .collect::<Vec<_>>()
    };
    let mut pids: Vec<u64> = [10, 11, 12]
        .into_iter()
        .map(|id| {
            answer(id)
                .first()
                .unwrap_or_else(|| panic!("call {id} answered: {seen:?}"))["ok"]["pid"]
                .as_u64()
                .unwrap_or_else(|| panic!("call {id} answered, not cut off: {seen:?}"))
        })
        .collect();
    pids.sort();
    assert_eq!(pids, [3, 4, 5], "every call in flight was answered");
    let late = answer(20);
    assert_eq!(late.len(), 1, "{seen:?}");
    assert!(
        late[0]["err"]["message"]
            .as_str()
            .is_some_and(|m| m.contains("shutting down")),
        "refused with a sentence: {late:?}"
    );
    let watch = answer(1);
    assert_eq!(
        watch.len(),
        2,
        "the acknowledgement, then the final frame: {watch:?}"
    );
    assert!(watch[0]["ok"].is_null(), "{watch:?}");
    assert!(
        watch[1]["err"]["message"]
            .as_str()
            .is_some_and(|m| m.contains("shutting down")),
        "{watch:?}"
    );
    let status = tokio::time::timeout(Duration::from_secs(10), child.wait())
        .await
        .expect("ops exits within its drain timeout")
        .unwrap();
    assert!(status.success(), "{status:?}");
    assert!(asked.elapsed() < Duration::from_secs(10));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sigterm_on_the_wire_answers_the_calls_in_flight_refuses_new_ones_and_exits() {
    let dir = socket_dir("shutdown-wire");
    let path = dir.join("ops.sock");
    let daemon = tokio::process::Command::new(common::ops_binary())
        .arg("--socket")
        .arg(&path)
        .env("OPS_SPAWN_DELAY_MS", "1500")
        .stderr(Stdio::null())
        .kill_on_drop(true)
        .spawn()
        .expect("ops starts");
    assert!(settle(|| std::os::unix::net::UnixStream::connect(&path).is_ok()).await);
    let stream = tokio::net::UnixStream::connect(&path).await.unwrap();
    let (reader, writer) = stream.into_split();
    // The socket file goes once new work is refused.
    let began = async {
        assert!(settle(|| !path.exists()).await, "the socket file is removed");
    };
    wire_shutdown(daemon, reader, writer, began).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sigterm_on_the_wire_over_stdio_answers_the_calls_in_flight_refuses_new_ones_and_exits() {
    let mut child = tokio::process::Command::new(common::ops_binary())
        .arg("--wire-stdio")
        .env("OPS_SPAWN_DELAY_MS", "1500")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .expect("ops starts");
    let mut stderr = BufReader::new(child.stderr.take().unwrap()).lines();
    let (writer, reader) = (child.stdin.take().unwrap(), child.stdout.take().unwrap());
    // Its stdout carries frames alone: the handler's `println!` of each spawn goes to stderr,
    // which is read to its end (a closed stderr would fail those prints).
    let (said, hear) = tokio::sync::oneshot::channel();
    tokio::spawn(async move {
        let mut said = Some(said);
        while let Ok(Some(line)) = stderr.next_line().await {
            if line.contains("shutting down") {
                said.take().map(|said| said.send(()));
            }
        }
    });
    let began = async {
        tokio::time::timeout(Duration::from_secs(20), hear)
            .await
            .expect("ops says it is shutting down in time")
            .expect("ops says it is shutting down");
    };
    wire_shutdown(child, reader, writer, began).await;
}
