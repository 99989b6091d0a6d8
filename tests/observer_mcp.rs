//! The observer example — an observer-safe projection of ops — over MCP: in process in both
//! eras, and as the real `observer --socket` binary dialling a real `ops --socket` daemon.

mod common;

#[allow(dead_code)]
#[path = "../examples/observer.rs"]
mod observer;

use common::daemon::{Daemon, socket_dir};
use common::stdio::Wire;
use observer::ops::{self, Load, Ops, OpsClient, Spawn};
use observer::{Observer, mcp_server};
use serde_json::{Value, json};
use std::sync::Arc;
use std::time::Duration;
use surface::mcp::ServedMcp;
use surface::project::Source;
use surface::testing::{Era, Notice, TestClient};

const PROCESSES: &str = "surface://cells/processes";
const LOG: &str = "surface://streams/log";

/// ops in this process, and the observer of it served over MCP.
async fn serve() -> (Arc<Ops>, ServedMcp) {
    let ops = Arc::new(Ops::new());
    let observer = Observer::project(Source::new(OpsClient::direct(ops.clone())))
        .await
        .expect("the projection reads ops");
    let served = mcp_server(Arc::new(observer))
        .start()
        .expect("the observer composes");
    (ops, served)
}

/// Spawns `name` on ops (as an operator would, on ops itself).
async fn spawn(ops: &Arc<Ops>, name: &str, paused: bool) -> u32 {
    let spawn = Spawn {
        name: name.into(),
        paused,
    };
    OpsClient::direct(ops.clone())
        .proc()
        .spawn(spawn)
        .await
        .unwrap()
        .pid
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_tools_are_exactly_the_passthrough_ones_in_both_eras() {
    let (_, served) = serve().await;
    for era in Era::ALL {
        let agent = TestClient::connect(&served, era).await;
        assert_eq!(agent.tool_names().await, ["load_sample"], "{era:?}");
        assert!(agent.list_tools().await[0].read_only, "{era:?}");
        let resources: Vec<String> = agent.list_resources().await.into_iter().map(|r| r.uri).collect();
        assert_eq!(
            resources,
            [PROCESSES, LOG, "surface://cells/load"],
            "{era:?}: ops' names, nothing else"
        );
        for dropped in ["proc_kill", "proc_spawn", "proc_configure"] {
            let rejected = agent.call(dropped, json!({"pid": 1})).await.rejection();
            assert_eq!(
                rejected.code,
                Some(-32602),
                "{era:?}: {dropped} does not exist here"
            );
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_read_answers_the_process_table_with_its_verdicts() {
    let (ops, served) = serve().await;
    let agent = TestClient::connect(&served, Era::Modern).await;
    assert_eq!(
        agent.read(PROCESSES).await.unwrap(),
        json!([
            {"pid": 1, "name": "init", "state": "running", "red": false},
            {"pid": 2, "name": "shell", "state": "running", "red": false},
        ])
    );
    let pid = spawn(&ops, "cron", true).await;
    let mut table = Value::Null;
    for _ in 0..500 {
        table = agent.read(PROCESSES).await.unwrap();
        if table.as_array().is_some_and(|t| t.len() == 3) {
            break;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    assert_eq!(
        table[2],
        json!({"pid": pid, "name": "cron", "state": "sleeping", "red": true})
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_subscriber_on_the_observer_hears_a_change_made_on_ops_in_both_eras() {
    let (ops, served) = serve().await;
    for era in Era::ALL {
        let agent = TestClient::connect(&served, era).await;
        let mut processes = agent.subscribe(PROCESSES).await.unwrap();
        let mut load = agent.subscribe("surface://cells/load").await.unwrap();
        spawn(&ops, "vim", false).await;
        let heard = processes.next_within(Duration::from_secs(5)).await;
        assert_eq!(heard, Some(Notice::Updated(PROCESSES.into())), "{era:?}");
        let heard = load.next_within(Duration::from_secs(5)).await;
        assert_eq!(
            heard,
            Some(Notice::Updated("surface://cells/load".into())),
            "{era:?}"
        );
        let procs = ops.load.get().procs;
        assert_eq!(
            agent.read("surface://cells/load").await.unwrap()["procs"],
            procs,
            "{era:?}"
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_passthrough_procedure_reaches_ops() {
    let (ops, served) = serve().await;
    let agent = TestClient::connect(&served, Era::Legacy).await;
    assert_eq!(
        agent.call("load_sample", json!({})).await.value(),
        json!({"cpu": 0.0, "procs": 2})
    );
    // Set on ops alone: the answer can only have come from there.
    ops.load.set(Load { cpu: 0.75, procs: 9 });
    assert_eq!(
        agent.call("load_sample", json!({})).await.value(),
        json!({"cpu": 0.75, "procs": 9})
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_log_is_bounded_to_its_last_100_lines() {
    let ops = Arc::new(Ops::new());
    (0..150).for_each(|n| ops.log.push(format!("early {n}")));
    let observer = Observer::project(Source::new(OpsClient::direct(ops.clone())))
        .await
        .unwrap();
    let served = mcp_server(Arc::new(observer)).start().unwrap();
    let agent = TestClient::connect(&served, Era::Modern).await;
    let log = agent.read(LOG).await.unwrap();
    let lines: Vec<&str> = log
        .as_array()
        .unwrap()
        .iter()
        .map(|l| l.as_str().unwrap())
        .collect();
    assert_eq!(lines.len(), observer::LOG_LINES);
    assert_eq!(
        (lines[0], lines[99]),
        ("early 50", "early 149"),
        "the snapshot's tail"
    );
    (0..30).for_each(|n| ops.log.push(format!("late {n}")));
    let mut lines = Vec::new();
    for _ in 0..500 {
        let log = agent.read(LOG).await.unwrap();
        lines = log
            .as_array()
            .unwrap()
            .iter()
            .map(|l| l.as_str().unwrap().to_owned())
            .collect();
        if lines.last().map(String::as_str) == Some("late 29") {
            break;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    assert_eq!(lines.len(), 100);
    assert_eq!((lines[0].as_str(), lines[99].as_str()), ("early 80", "late 29"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn dropping_the_served_observer_ends_its_watches_on_ops_in_both_eras() {
    let ops = Arc::new(Ops::new());
    let count = |ops: &Ops| [ops.load.watchers(), ops.processes.watchers(), ops.log.watchers()];
    let before = count(&ops);
    for era in Era::ALL {
        let observer = Observer::project(Source::new(OpsClient::direct(ops.clone())))
            .await
            .unwrap();
        let served = mcp_server(Arc::new(observer)).start().unwrap();
        let agent = TestClient::connect(&served, era).await;
        let mut processes = agent.subscribe(PROCESSES).await.unwrap();
        spawn(&ops, "vim", false).await;
        assert!(
            processes.next_within(Duration::from_secs(5)).await.is_some(),
            "{era:?}"
        );
        // One watch on ops per derived member, however many agents watch the observer.
        assert_eq!(
            count(&ops),
            [before[0] + 1, before[1] + 1, before[2] + 1],
            "{era:?}"
        );
        drop((processes, agent, served));
        // The observer goes with the last session that holds it. rmcp gives a closed
        // session's handlers up to 5 s to answer, and a 2026-07-28 listen is one of them.
        let deadline = tokio::time::Instant::now() + Duration::from_secs(10);
        while count(&ops) != before && tokio::time::Instant::now() < deadline {
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
        assert_eq!(count(&ops), before, "{era:?}: every watch on ops ended");
    }
}

/// The real `observer` binary with `args`, on its stdio.
fn observer_binary(args: &[&str]) -> Wire {
    let mut child = tokio::process::Command::new(common::example_binary("observer"))
        .args(args)
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::null())
        .kill_on_drop(true)
        .spawn()
        .expect("observer starts");
    let stdin = child.stdin.take();
    let stdout = tokio::io::BufReader::new(child.stdout.take().unwrap());
    Wire { child, stdin, stdout }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_observer_binary_projects_an_ops_daemon_over_the_wire_and_follows_it_through_a_restart() {
    let path = socket_dir("observer").join("ops.sock");
    let _daemon = Daemon::start(&path).await;

    let mut wire = observer_binary(&["--socket", path.to_str().unwrap()]);
    let init = wire
        .request(
            0,
            "initialize",
            json!({"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "t", "version": "0"}}),
        )
        .await;
    assert_eq!(init["result"]["serverInfo"]["name"], "observer", "{init}");
    wire.send(json!({"jsonrpc": "2.0", "method": "notifications/initialized"}))
        .await;
    let tools = wire.request(1, "tools/list", json!({})).await;
    let names: Vec<&str> = tools["result"]["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["load_sample"]);
    let subscribed = wire
        .request(2, "resources/subscribe", json!({"uri": PROCESSES}))
        .await;
    assert!(subscribed.get("result").is_some(), "{subscribed}");

    // ops changes through a connection of its own: the observer hears it from ops' feed.
    let ops = surface::wire::dial_unix_socket::<Ops>(&path).await.unwrap();
    let spawned = ops
        .client
        .proc()
        .spawn(Spawn {
            name: "cron".into(),
            paused: true,
        })
        .await
        .unwrap();
    let updated = loop {
        let message = wire.receive().await;
        if message["method"] == "notifications/resources/updated" {
            break message;
        }
    };
    assert_eq!(updated["params"]["uri"], PROCESSES);
    let read = wire.request(3, "resources/read", json!({"uri": PROCESSES})).await;
    let table: Value = serde_json::from_str(read["result"]["contents"][0]["text"].as_str().unwrap()).unwrap();
    assert_eq!(
        table[2],
        json!({"pid": spawned.pid, "name": "cron", "state": "sleeping", "red": true})
    );

    let sample = wire
        .request(4, "tools/call", json!({"name": "load_sample", "arguments": {}}))
        .await;
    assert_eq!(
        sample["result"]["structuredContent"],
        json!({"cpu": 0.0, "procs": 3}),
        "{sample}"
    );
    let kill = wire
        .request(
            5,
            "tools/call",
            json!({"name": "proc_kill", "arguments": {"pid": 1}}),
        )
        .await;
    assert!(
        kill.get("error").is_some(),
        "no kill through the observer: {kill}"
    );
    assert!(ops.client.processes().get(&1).await.unwrap().is_some());

    // ops restarts (a fresh table): the observer dials it again and follows the new one.
    drop(_daemon);
    let _daemon = Daemon::start(&path).await;
    let mut table = Value::Null;
    for id in 6..506 {
        let read = wire
            .request(id, "resources/read", json!({"uri": PROCESSES}))
            .await;
        table = serde_json::from_str(read["result"]["contents"][0]["text"].as_str().unwrap()).unwrap();
        if table.as_array().is_some_and(|t| t.len() == 2) {
            break;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    assert_eq!(
        table[1],
        json!({"pid": 2, "name": "shell", "state": "running", "red": false})
    );
    let sample = wire
        .request(600, "tools/call", json!({"name": "load_sample", "arguments": {}}))
        .await;
    assert_eq!(
        sample["result"]["structuredContent"],
        json!({"cpu": 0.0, "procs": 2}),
        "{sample}"
    );
    drop(wire);
    let _ = ops::EXPOSE;
}
