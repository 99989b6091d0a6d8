//! Bridging a live surface: the ops daemon served on a unix socket (a real process, killed and
//! restarted), dialled by the MCP face; plus the connection semantics with counted dials.

mod common;

#[allow(dead_code)]
#[path = "../examples/ops.rs"]
mod ops;

use common::{Era, connect, empty, ops_binary, text};
use serde_json::json;
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;
use surface::mcp::{BundleClient, McpServer, Member, OwnedBundle};
use surface::testing::{Era as TestEra, Notice, TestClient};
use surface::wire::CloseSignal;
use tokio::io::AsyncReadExt;
use tokio::process::{Child, Command};

const STILL_RUNNING: &str = "This MCP server is still running and has discarded the dead connection";

struct Daemon {
    child: Child,
}

impl Daemon {
    /// Starts `ops --socket path` and waits until it answers a dial.
    async fn start(path: &Path, spawn_delay_ms: Option<u64>) -> Daemon {
        let mut command = Command::new(ops_binary());
        command
            .arg("--socket")
            .arg(path)
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .kill_on_drop(true);
        if let Some(ms) = spawn_delay_ms {
            command.env("OPS_SPAWN_DELAY_MS", ms.to_string());
        }
        let child = command.spawn().expect("the daemon starts");
        for _ in 0..200 {
            if let Ok(c) = surface::wire::dial_unix_socket::<ops::Ops>(path).await {
                c.dispose();
                return Daemon { child };
            }
            tokio::time::sleep(Duration::from_millis(25)).await;
        }
        panic!("the daemon never answered on {}", path.display());
    }

    /// Kills it and answers what it wrote to stderr.
    async fn kill(mut self) -> String {
        self.child.kill().await.unwrap();
        let mut err = String::new();
        self.child
            .stderr
            .take()
            .unwrap()
            .read_to_string(&mut err)
            .await
            .unwrap();
        err
    }
}

fn socket(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("surface-bridge-{}-{name}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    dir.join("ops.sock")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_wire_serves_only_what_is_exposed() {
    let path = socket("exposed");
    let daemon = Daemon::start(&path, None).await;
    let connection = surface::wire::dial_unix_socket::<ops::Ops>(&path).await.unwrap();
    let client = &connection.client;
    assert_eq!(
        client.load().get().await.unwrap(),
        ops::Load { cpu: 0.0, procs: 2 }
    );
    assert_eq!(client.processes().keys().await.unwrap(), vec![1, 2]);
    let spawned = client
        .proc()
        .spawn(ops::Spawn {
            name: "vim".into(),
            paused: false,
        })
        .await
        .unwrap();
    assert_eq!(spawned.pid, 3);
    let refusal = client.proc().kill(ops::Kill { pid: 99 }).await.unwrap_err();
    assert_eq!(
        refusal.detail,
        Some(json!({"kind": "no-such-process", "pid": 99}))
    );
    // Unexposed answers exactly like never declared.
    let hidden = client
        .proc()
        .configure(ops::Configure { pid: 1, nice: 0 })
        .await
        .unwrap_err();
    assert_eq!(hidden.message, "Ops has no procedure \"proc.configure\"");
    let never = surface::call_typed::<_, serde_json::Value>(
        &**surface::SurfaceClient::dispatch(client),
        "proc.never",
        &json!({}),
    )
    .await
    .unwrap_err();
    assert_eq!(never.message, "Ops has no procedure \"proc.never\"");
    connection.dispose();
    daemon.kill().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_wire_serves_over_a_child_process_stdio_too() {
    let mut command = Command::new(ops_binary());
    command.arg("--wire-stdio");
    let connection = surface::wire::dial_child::<ops::Ops>(command).await.unwrap();
    let on_close = connection.on_close();
    assert_eq!(connection.client.load().get().await.unwrap().procs, 2);
    connection.dispose();
    tokio::time::timeout(Duration::from_secs(5), on_close.closed())
        .await
        .unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn with_on_close_a_daemon_restart_costs_no_request() {
    let path = socket("on-close");
    let daemon = Daemon::start(&path, None).await;
    let served = ops::bridge_server(path.clone(), true).start().unwrap();
    let client = connect(&served, Era::Legacy).await;
    assert_eq!(client.call_ok("load_sample", empty()).await["procs"], 2);
    daemon.kill().await;
    let daemon = Daemon::start(&path, None).await;
    tokio::time::sleep(Duration::from_millis(100)).await;
    let spawned = client
        .call_ok("proc_spawn", json!({"name": "after-restart"}))
        .await;
    assert_eq!(spawned["pid"], 3, "a fresh daemon, dialled afresh");
    daemon.kill().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn without_on_close_exactly_the_first_call_after_a_restart_fails() {
    let path = socket("no-on-close");
    let daemon = Daemon::start(&path, None).await;
    let served = ops::bridge_server(path.clone(), false).start().unwrap();
    let client = connect(&served, Era::Modern).await;
    assert_eq!(client.call_ok("load_sample", empty()).await["procs"], 2);
    daemon.kill().await;
    let daemon = Daemon::start(&path, None).await;
    let first = client.call("load_sample", empty()).await.unwrap();
    assert_eq!(first.is_error, Some(true));
    let sentence = text(&first);
    assert!(
        sentence.starts_with("surface-mcp: The connection to the served surface had closed"),
        "{sentence}"
    );
    assert!(
        sentence.contains(&format!("{STILL_RUNNING} — retry")),
        "{sentence}"
    );
    assert_eq!(client.call_ok("load_sample", empty()).await["procs"], 2);
    daemon.kill().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_call_cut_off_in_flight_has_an_unknown_outcome_and_is_never_replayed() {
    let path = socket("in-flight");
    let daemon = Daemon::start(&path, Some(3_000)).await;
    let served = ops::bridge_server(path.clone(), true).start().unwrap();
    let client = Arc::new(connect(&served, Era::Legacy).await);
    let caller = client.clone();
    let call = tokio::spawn(async move {
        caller
            .call("proc_spawn", json!({"name": "doomed"}))
            .await
            .unwrap()
    });
    tokio::time::sleep(Duration::from_millis(700)).await;
    let first_stderr = daemon.kill().await;
    let answer = call.await.unwrap();
    assert_eq!(answer.is_error, Some(true));
    let sentence = text(&answer);
    assert!(
        sentence.contains("while this request was in flight"),
        "{sentence}"
    );
    assert!(sentence.contains("its outcome is unknown"), "{sentence}");
    assert!(sentence.contains(STILL_RUNNING), "{sentence}");
    assert!(sentence.contains("nothing was replayed"), "{sentence}");
    assert_eq!(
        first_stderr.matches("executing proc.spawn").count(),
        1,
        "{first_stderr}"
    );

    let daemon = Daemon::start(&path, None).await;
    // The next request dials the new daemon; the cut-off spawn was not replayed there.
    assert_eq!(client.call_ok("load_sample", empty()).await["procs"], 2);
    let processes = client.read("surface://collections/processes").await.unwrap();
    assert_eq!(processes, json!([1, 2]));
    let second_stderr = daemon.kill().await;
    assert_eq!(
        second_stderr.matches("executing proc.spawn").count(),
        0,
        "{second_stderr}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_subscription_keeps_delivering_after_the_daemon_comes_back() {
    for era in TestEra::ALL {
        let path = socket(&format!("subscription-{era:?}"));
        let daemon = Daemon::start(&path, None).await;
        let served = ops::bridge_server(path.clone(), true).start().unwrap();
        let agent = TestClient::connect(&served, era).await;
        // Dial first: a listen's feeds start before rmcp acknowledges it, but a cold dial
        // finishes after the acknowledgement.
        agent.call("load_sample", empty()).await.value();
        let mut processes = agent.subscribe("surface://collections/processes").await.unwrap();
        agent.call("proc_spawn", json!({"name": "before"})).await.value();
        let updated = Some(Notice::Updated("surface://collections/processes".into()));
        assert_eq!(processes.next().await, updated, "{era:?}");
        daemon.kill().await;
        let daemon = Daemon::start(&path, None).await;
        // Give the watch a moment to re-attach on a fresh dial.
        tokio::time::sleep(Duration::from_millis(800)).await;
        agent.call("proc_spawn", json!({"name": "after"})).await.value();
        assert_eq!(processes.next().await, updated, "{era:?}");
        daemon.kill().await;
    }
}

/// An in-process ops surface behind a counted dial, optionally born dead.
fn counted(dials: Arc<AtomicUsize>, born_dead: bool, delay: Duration) -> McpServer {
    let ops = Arc::new(ops::Ops::new());
    McpServer::new("ops", "0")
        .core(Member::new(ops::EXPOSE))
        .dial(move || {
            let (ops, dials) = (ops.clone(), dials.clone());
            async move {
                dials.fetch_add(1, Ordering::SeqCst);
                tokio::time::sleep(delay).await;
                let signal = CloseSignal::new();
                if born_dead {
                    signal.close();
                }
                Ok(OwnedBundle::new(BundleClient::with_core(ops::OpsClient::direct(ops))).on_close(signal))
            }
        })
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_connection_born_dead_is_redialled_a_bounded_number_of_times_then_fails_loudly() {
    let dials = Arc::new(AtomicUsize::new(0));
    let served = counted(dials.clone(), true, Duration::ZERO).start().unwrap();
    let client = connect(&served, Era::Legacy).await;
    let r = client.call("load_sample", empty()).await.unwrap();
    assert_eq!(r.is_error, Some(true));
    assert_eq!(
        text(&r),
        format!(
            "surface-mcp: The connection to the served surface died as it was dialled, 3 times within 10 s. {STILL_RUNNING} — check that the served process stays up, then retry."
        )
    );
    assert_eq!(dials.load(Ordering::SeqCst), surface::mcp::BORN_DEAD_DIALS);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn concurrent_first_calls_share_one_dial_and_close_opens_nothing() {
    let dials = Arc::new(AtomicUsize::new(0));
    let served = counted(dials.clone(), false, Duration::from_millis(200))
        .start()
        .unwrap();
    let client = Arc::new(connect(&served, Era::Legacy).await);
    let (a, b) = tokio::join!(
        client.call_ok("load_sample", empty()),
        client.call_ok("load_sample", empty())
    );
    assert_eq!((a["procs"].clone(), b["procs"].clone()), (json!(2), json!(2)));
    assert_eq!(
        dials.load(Ordering::SeqCst),
        1,
        "two simultaneous first calls, one dial"
    );
    // An application error keeps the connection.
    let refused = client.call("proc_kill", json!({"pid": 404})).await.unwrap();
    assert_eq!(refused.is_error, Some(true));
    client.call_ok("load_sample", empty()).await;
    assert_eq!(dials.load(Ordering::SeqCst), 1);

    served.close();
    let _ = client.call("load_sample", empty()).await;
    tokio::time::sleep(Duration::from_millis(300)).await;
    assert_eq!(
        dials.load(Ordering::SeqCst),
        1,
        "nothing is dialled after close()"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_connection_dialled_with_scopes_is_narrowed_by_the_daemon() {
    let path = socket("narrowed");
    let daemon = Daemon::start(&path, None).await;
    let options = surface::wire::DialOptions::default().scopes(["ops.read"]);
    let connection = surface::wire::dial_unix_socket_with::<ops::Ops>(&path, &options)
        .await
        .unwrap();
    let client = &connection.client;
    // The daemon's owner holds every scope, but this connection gave up all but `ops.read`.
    let refused = client.proc().kill(ops::Kill { pid: 1 }).await.unwrap_err();
    assert_eq!(refused.message, "Ops has no procedure \"proc.kill\"");
    assert_eq!(client.load().get().await.unwrap().procs, 2);
    connection.dispose();
    daemon.kill().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_bridge_given_scopes_lists_and_calls_only_what_they_reach() {
    let path = socket("scoped-bridge");
    let daemon = Daemon::start(&path, None).await;
    let mut bridge = common::stdio::Wire::start_with(
        &["--bridge", path.to_str().unwrap(), "--scope", "ops.read"],
        &[],
        false,
    );
    bridge.initialize().await;
    let listed = bridge.request(1, "tools/list", json!({})).await;
    let names: Vec<&str> = listed["result"]["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["name"].as_str().unwrap())
        .collect();
    assert!(names.contains(&"load_sample"), "{names:?}");
    assert!(
        !names.contains(&"proc_kill") && !names.contains(&"proc_spawn"),
        "{names:?}"
    );
    // Outside the scopes: exactly as a tool that does not exist.
    let kill = bridge
        .request(
            2,
            "tools/call",
            json!({"name": "proc_kill", "arguments": {"pid": 1}}),
        )
        .await;
    let never = bridge
        .request(3, "tools/call", json!({"name": "proc_never", "arguments": {}}))
        .await;
    assert_eq!(kill["error"]["code"], never["error"]["code"], "{kill} {never}");
    assert!(
        kill["error"]["message"].as_str().unwrap().contains("proc_kill"),
        "{kill}"
    );
    let sample = bridge
        .request(4, "tools/call", json!({"name": "load_sample", "arguments": {}}))
        .await;
    assert_eq!(sample["result"]["isError"], false, "{sample}");
    drop(bridge);
    daemon.kill().await;
}
