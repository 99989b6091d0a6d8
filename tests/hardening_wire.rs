//! The wire daemon and the bridge under hostile input and faults: real `ops --socket`
//! processes, real sockets, raw frames where a well-behaved client would hide the fault.
//!
//! `SURFACE_TEST_OPS=/path/to/ops` runs these against another build of the ops example (to
//! show a failure on an older commit); by default the example is built from this checkout.

mod common;

#[allow(dead_code)]
#[path = "../examples/ops.rs"]
mod ops;

use std::io::{BufRead, BufReader, Write};
use std::os::unix::fs::{FileTypeExt, PermissionsExt};
use std::os::unix::net::UnixStream;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::Arc;
use std::time::{Duration, Instant};
use surface::SurfaceClient;
use surface::wire::dial_unix_socket;

fn ops_bin() -> PathBuf {
    common::ops_binary()
}

/// A fresh directory for one test's socket.
fn dir(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("surface-hardening-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// An `ops --socket` daemon, killed on drop.
struct Daemon {
    child: Child,
}

impl Drop for Daemon {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Daemon {
    /// Runs `sh -c "<prefix> exec ops --socket PATH"` (a prefix sets a umask or an fd limit)
    /// and waits until the socket greets.
    fn start(path: &Path, prefix: &str, env: &[(&str, &str)]) -> Daemon {
        let mut command = Command::new("sh");
        command
            .arg("-c")
            .arg(format!("{prefix} exec \"$0\" --socket \"$1\""))
            .arg(ops_bin())
            .arg(path)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null());
        for (k, v) in env {
            command.env(k, v);
        }
        let child = command.spawn().expect("the daemon starts");
        let daemon = Daemon { child };
        let deadline = Instant::now() + Duration::from_secs(20);
        while Instant::now() < deadline {
            if greets(path, Duration::from_secs(2)) {
                return daemon;
            }
            std::thread::sleep(Duration::from_millis(25));
        }
        panic!("the daemon never greeted on {}", path.display());
    }

    fn pid(&self) -> u32 {
        self.child.id()
    }

    /// `VmRSS` and `VmHWM` (peak) in kB, from /proc.
    fn memory_kb(&self) -> (u64, u64) {
        let status = std::fs::read_to_string(format!("/proc/{}/status", self.pid())).unwrap();
        let field = |name: &str| {
            status
                .lines()
                .find_map(|l| l.strip_prefix(name))
                .and_then(|v| v.trim().trim_end_matches("kB").trim().parse::<u64>().ok())
                .unwrap_or_else(|| panic!("no {name} in {status}"))
        };
        (field("VmRSS:"), field("VmHWM:"))
    }
}

/// Whether a fresh connection to `path` gets the greeting within `wait`.
fn greets(path: &Path, wait: Duration) -> bool {
    let Ok(stream) = UnixStream::connect(path) else {
        return false;
    };
    stream.set_read_timeout(Some(wait)).unwrap();
    let mut line = String::new();
    BufReader::new(stream).read_line(&mut line).is_ok() && line.contains("\"surface\":\"Ops\"")
}

/// One request over a fresh connection, answered within `wait`: the answer line.
fn one_request(path: &Path, frame: &str, wait: Duration) -> Option<String> {
    let mut stream = UnixStream::connect(path).ok()?;
    stream.set_read_timeout(Some(wait)).unwrap();
    writeln!(stream, "{frame}").ok()?;
    let mut reader = BufReader::new(stream);
    let mut line = String::new();
    reader.read_line(&mut line).ok()?; // the greeting
    line.clear();
    reader.read_line(&mut line).ok()?;
    Some(line)
}

#[test]
fn a_client_that_writes_without_reading_cannot_grow_the_daemon() {
    let path = dir("unread").join("ops.sock");
    let daemon = Daemon::start(&path, "", &[]);
    let (before, _) = daemon.memory_kb();

    // 200,000 requests, never reading an answer. A bounded daemon stops reading this socket,
    // so the writes block: give up on them after a pause rather than wait forever.
    let mut stream = UnixStream::connect(&path).unwrap();
    stream.set_write_timeout(Some(Duration::from_secs(3))).unwrap();
    let mut batch = String::new();
    let mut written = 0;
    'write: for chunk in 0..200 {
        batch.clear();
        for i in 0..1000 {
            let id = chunk * 1000 + i + 1;
            batch.push_str(&format!(
                "{{\"id\":{id},\"op\":\"read\",\"member\":\"processes\"}}\n"
            ));
        }
        if stream.write_all(batch.as_bytes()).is_err() {
            break 'write;
        }
        written += 1000;
    }
    // Let whatever the daemon accepted run.
    std::thread::sleep(Duration::from_secs(2));
    let (during, peak) = daemon.memory_kb();
    drop(stream);
    std::thread::sleep(Duration::from_millis(500));

    eprintln!("wrote {written} requests; RSS {before} kB before, {during} kB during, peak {peak} kB");
    assert!(
        peak < before + 64 * 1024,
        "the daemon grew from {before} kB to a peak of {peak} kB under {written} unread requests"
    );
    // The daemon still serves a new client.
    let answer = one_request(
        &path,
        r#"{"id":1,"op":"read","member":"load"}"#,
        Duration::from_secs(5),
    )
    .expect("a new client is answered");
    assert!(answer.contains("\"procs\":2"), "{answer}");
}

#[test]
fn running_out_of_file_descriptors_pauses_accepting_instead_of_ending_it() {
    let path = dir("emfile").join("ops.sock");
    let daemon = Daemon::start(&path, "ulimit -n 48;", &[]);
    // Open clients until one is not greeted: the daemon is out of descriptors.
    let mut clients = Vec::new();
    let mut starved = false;
    for _ in 0..200 {
        let Ok(stream) = UnixStream::connect(&path) else {
            // Refused outright: the daemon gave up its listener.
            starved = true;
            break;
        };
        stream
            .set_read_timeout(Some(Duration::from_millis(1500)))
            .unwrap();
        let mut reader = BufReader::new(stream);
        let mut line = String::new();
        let greeted = reader.read_line(&mut line).is_ok_and(|n| n > 0);
        clients.push(reader);
        if !greeted {
            starved = true;
            break;
        }
    }
    assert!(starved, "the daemon never ran out of descriptors at ulimit -n 48");
    let held = clients.len();
    drop(clients);
    // Descriptors are free again: a new client is served.
    let deadline = Instant::now() + Duration::from_secs(10);
    let mut served = false;
    while !served && Instant::now() < deadline {
        served = one_request(
            &path,
            r#"{"id":1,"op":"read","member":"load"}"#,
            Duration::from_secs(2),
        )
        .is_some_and(|a| a.contains("\"procs\":2"));
    }
    assert!(
        served,
        "after {held} clients came and went, a new client is not served"
    );
    drop(daemon);
}

#[test]
fn a_regular_file_at_the_socket_path_survives_and_is_refused() {
    let path = dir("regular").join("ops.sock");
    std::fs::write(&path, "precious").unwrap();
    let out = refused_daemon(&path);
    assert!(!out.status.success(), "a refusal exits nonzero: {out:?}");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("exists and is not a socket"),
        "the refusal says why: {stderr}"
    );
    assert_eq!(std::fs::read_to_string(&path).unwrap(), "precious");
}

#[test]
fn a_live_daemons_socket_is_not_taken_over() {
    let path = dir("live").join("ops.sock");
    let first = Daemon::start(&path, "", &[]);
    let out = refused_daemon(&path);
    assert!(!out.status.success(), "the second daemon refuses: {out:?}");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains(&format!("another daemon is serving {}", path.display())),
        "{stderr}"
    );
    // The first daemon is still the one answering.
    let spawned = one_request(
        &path,
        r#"{"id":1,"op":"call","procedure":"proc.spawn","input":{"name":"first"}}"#,
        Duration::from_secs(5),
    )
    .expect("the first daemon still answers");
    assert!(spawned.contains("\"pid\":3"), "{spawned}");
    drop(first);
}

#[test]
fn a_stale_socket_is_replaced() {
    let path = dir("stale").join("ops.sock");
    // A socket nobody listens on: bound, then its listener dropped.
    drop(std::os::unix::net::UnixListener::bind(&path).unwrap());
    assert!(std::fs::symlink_metadata(&path).unwrap().file_type().is_socket());
    let _daemon = Daemon::start(&path, "", &[]);
    assert!(greets(&path, Duration::from_secs(5)));
}

#[test]
fn the_socket_is_owner_only_whatever_the_umask() {
    let path = dir("umask").join("ops.sock");
    let _daemon = Daemon::start(&path, "umask 000;", &[]);
    let mode = std::fs::symlink_metadata(&path).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode, 0o600, "socket mode {mode:o} under umask 000");
    // Nothing is left beside it (the private directory it was bound in is gone).
    let entries: Vec<_> = std::fs::read_dir(path.parent().unwrap())
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    assert_eq!(entries, [std::ffi::OsString::from("ops.sock")]);
}

/// Runs `ops --socket path`, which must exit (refusing) within 10 s: its output.
fn refused_daemon(path: &Path) -> std::process::Output {
    let child = Command::new(ops_bin())
        .arg("--socket")
        .arg(path)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    wait_output(child, Duration::from_secs(10))
}

fn wait_output(mut child: Child, limit: Duration) -> std::process::Output {
    let deadline = Instant::now() + limit;
    loop {
        if child.try_wait().unwrap().is_some() {
            return child.wait_with_output().unwrap();
        }
        if Instant::now() > deadline {
            let _ = child.kill();
            let out = child.wait_with_output().unwrap();
            panic!("the process did not exit within {limit:?}: {out:?}");
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_answer_over_the_frame_limit_is_refused_alone_and_a_bystander_call_completes() {
    let path = dir("large").join("ops.sock");
    // Spawns take a while, so one is still in flight when the large answer is sent.
    let _daemon = Daemon::start(&path, "", &[("OPS_SPAWN_DELAY_MS", "1500")]);
    let connection = dial_unix_socket::<ops::Ops>(&path).await.unwrap();
    let client = Arc::new(connection.client.clone());
    // Three 6 MiB log lines: the `log` stream reads as over 18 MiB, the wire's limit is 16 MiB.
    let name = "x".repeat(6 << 20);
    let fills = (0..3).map(|_| {
        let (client, name) = (client.clone(), name.clone());
        tokio::spawn(async move { client.proc().spawn(ops::Spawn { name, paused: false }).await })
    });
    for fill in futures_join(fills).await {
        fill.unwrap().expect("a large spawn succeeds");
    }
    let bystander = {
        let client = client.clone();
        tokio::spawn(async move {
            client
                .proc()
                .spawn(ops::Spawn {
                    name: "bystander".into(),
                    paused: false,
                })
                .await
        })
    };
    tokio::time::sleep(Duration::from_millis(300)).await;
    let large = SurfaceClient::dispatch(&*client).read("log").await;
    let refusal = large.expect_err("an answer over the limit is refused");
    assert!(
        refusal.message.contains("too large to send") && refusal.message.contains("16777216 bytes"),
        "{refusal:?}"
    );
    assert!(
        !matches!(refusal.kind, surface::FailureKind::Transport { .. }),
        "{refusal:?}"
    );
    let spawned = bystander.await.unwrap().expect("the bystander call completes");
    assert_eq!(spawned.name, "bystander");
    // And the connection is still good.
    assert_eq!(client.load().get().await.unwrap().procs, 6);
    assert!(!connection.on_close().is_closed());
}

async fn futures_join<T>(
    tasks: impl Iterator<Item = tokio::task::JoinHandle<T>>,
) -> Vec<Result<T, tokio::task::JoinError>> {
    let mut out = Vec::new();
    for t in tasks {
        out.push(t.await);
    }
    out
}

/// A peer that greets as `Ops` and then never answers anything: what it was sent, by
/// connection.
async fn silent_peer(path: &Path) -> Arc<std::sync::Mutex<Vec<String>>> {
    use tokio::io::{AsyncBufReadExt, AsyncWriteExt};
    let listener = tokio::net::UnixListener::bind(path).unwrap();
    let heard: Arc<std::sync::Mutex<Vec<String>>> = Arc::default();
    let log = heard.clone();
    tokio::spawn(async move {
        while let Ok((stream, _)) = listener.accept().await {
            let log = log.clone();
            tokio::spawn(async move {
                let (r, mut w) = stream.into_split();
                w.write_all(b"{\"id\":0,\"ok\":{\"surface\":\"Ops\",\"wire\":1}}\n")
                    .await
                    .unwrap();
                let mut lines = tokio::io::BufReader::new(r).lines();
                while let Ok(Some(line)) = lines.next_line().await {
                    log.lock().unwrap().push(line);
                }
                drop(w);
            });
        }
    });
    heard
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_bridged_call_to_a_silent_peer_times_out_with_a_sentence() {
    use serde_json::{Value, json};
    use tokio::io::{AsyncBufReadExt, AsyncWriteExt};
    let path = dir("silent").join("peer.sock");
    let heard = silent_peer(&path).await;
    let mut bridge = tokio::process::Command::new(ops_bin())
        .args(["--bridge"])
        .arg(&path)
        .args(["--bridge-timeout-ms", "500"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .kill_on_drop(true)
        .spawn()
        .unwrap();
    let mut stdin = bridge.stdin.take().unwrap();
    let mut stdout = tokio::io::BufReader::new(bridge.stdout.take().unwrap()).lines();
    let mut send = async |message: Value| {
        let mut line = serde_json::to_vec(&message).unwrap();
        line.push(b'\n');
        stdin.write_all(&line).await.unwrap();
    };
    send(json!({"jsonrpc":"2.0","id":1,"method":"initialize","params":{
        "protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"0"}}}))
    .await;
    send(json!({"jsonrpc":"2.0","method":"notifications/initialized"})).await;
    for id in [2, 3] {
        send(json!({"jsonrpc":"2.0","id":id,"method":"tools/call","params":{"name":"load_sample","arguments":{}}}))
            .await;
    }
    let mut answers = Vec::new();
    let started = Instant::now();
    while answers.len() < 3 {
        let line = tokio::time::timeout(Duration::from_secs(10), stdout.next_line())
            .await
            .expect("the bridge answers within 10 s (the peer never does)")
            .unwrap()
            .expect("the bridge keeps running");
        let v: Value = serde_json::from_str(&line).unwrap();
        if v.get("id").is_some() {
            answers.push(v);
        }
    }
    assert!(
        started.elapsed() < Duration::from_secs(8),
        "{:?}",
        started.elapsed()
    );
    for answer in &answers[1..] {
        let result = &answer["result"];
        assert_eq!(result["isError"], true, "{answer}");
        let sentence = result["content"][0]["text"].as_str().unwrap();
        assert!(
            sentence.starts_with("surface-mcp: The served surface did not answer this request in time (the served surface did not answer within 500 ms)"),
            "{sentence}"
        );
        assert!(sentence.contains("its outcome is unknown"), "{sentence}");
        assert!(
            sentence.contains("This MCP server is still running and keeps the connection for other requests — check the state before retrying."),
            "{sentence}"
        );
    }
    // Both calls reached the peer, which acted on neither.
    let calls = heard
        .lock()
        .unwrap()
        .iter()
        .filter(|l| l.contains("load.sample"))
        .count();
    assert_eq!(calls, 2);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_watch_nobody_reads_is_bounded_and_then_says_it_lagged() {
    use futures::StreamExt;
    let path = dir("lag").join("ops.sock");
    let _daemon = Daemon::start(&path, "", &[]);
    let connection = dial_unix_socket::<ops::Ops>(&path).await.unwrap();
    let client = &connection.client;
    let mut changes = client.processes().watch().await.unwrap();
    // 1,000 changes while the watch is not read.
    for i in 0..1000 {
        client
            .proc()
            .spawn(ops::Spawn {
                name: format!("p{i}"),
                paused: false,
            })
            .await
            .unwrap();
    }
    tokio::time::sleep(Duration::from_millis(500)).await;
    let (mut buffered, mut lagged, mut after) = (0u64, 0u64, 0u64);
    while let Ok(Some(change)) = tokio::time::timeout(Duration::from_millis(500), changes.next()).await {
        match change {
            surface::Change::Lagged(n) => lagged += n,
            _ if lagged == 0 => buffered += 1,
            _ => after += 1,
        }
    }
    assert!(lagged > 0, "{buffered} changes buffered and no Lagged");
    assert!(
        buffered <= surface::wire::DialOptions::DEFAULT_WATCH_BUFFER as u64,
        "{buffered} changes buffered"
    );
    assert_eq!(
        buffered + lagged + after,
        1000,
        "every change delivered or counted"
    );
    // The connection answers as before.
    assert_eq!(client.load().get().await.unwrap().procs, 1002);
}
