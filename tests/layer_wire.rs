//! A `CallLayer` on the wire face (`WireOptions::layer`): every procedure call passes it before
//! it runs, named as the MCP face names its tool, with the caller's principal; a refusal
//! answers the layer's sentence and the procedure never runs. Over a real unix socket served in
//! this process, driven with raw wire frames.

mod common;

#[allow(dead_code)]
#[path = "../examples/ops.rs"]
mod ops;

use serde_json::{Value, json};
use std::io::{BufRead, BufReader, Write};
use std::os::unix::net::UnixStream;
use std::sync::{Arc, Mutex};
use std::time::Duration;
use surface::layer::{CallInfo, CallLayer};
use surface::wire::{WireOptions, serve_unix_socket_with};

/// Refuses `proc_kill`, and records every call it saw as `tool by subject`.
#[derive(Clone, Default)]
struct NoKills(Arc<Mutex<Vec<String>>>);

impl CallLayer for NoKills {
    fn admit(&self, call: &CallInfo<'_>) -> Result<(), String> {
        let who = call.principal().map_or("nobody", |p| p.subject());
        self.0.lock().unwrap().push(format!("{} by {who}", call.tool()));
        match call.tool() {
            "proc_kill" => Err("kills are paused during the freeze".into()),
            _ => Ok(()),
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_layer_sees_every_wire_call_and_its_refusal_stops_the_procedure() {
    let dir = common::daemon::socket_dir("layer-wire");
    let path = dir.join("ops.sock");
    let layer = NoKills::default();
    let ops = Arc::new(ops::Ops::new());
    let _server = serve_unix_socket_with(
        &path,
        ops.clone(),
        ops::EXPOSE,
        WireOptions::default().layer(layer.clone()),
    )
    .unwrap();
    let frames = [
        json!({"id": 1, "op": "call", "procedure": "proc.spawn", "input": {"name": "worker"}}),
        json!({"id": 2, "op": "call", "procedure": "proc.kill", "input": {"pid": 1}}),
        json!({"id": 3, "op": "read", "member": "processes"}),
    ];
    let answers = tokio::task::spawn_blocking(move || {
        let mut stream = UnixStream::connect(&path).unwrap();
        stream.set_read_timeout(Some(Duration::from_secs(20))).unwrap();
        let mut lines = BufReader::new(stream.try_clone().unwrap());
        let mut answers: Vec<Value> = Vec::new();
        let mut next = || {
            let mut line = String::new();
            lines.read_line(&mut line).unwrap();
            serde_json::from_str::<Value>(&line).unwrap()
        };
        let _greeting = next();
        // One at a time: each answer before the next call, so the read sees both calls done.
        for frame in frames {
            writeln!(stream, "{frame}").unwrap();
            answers.push(next());
        }
        answers
    })
    .await
    .unwrap();
    let spawned = &answers[0];
    assert!(spawned.get("ok").is_some(), "{spawned}");
    let pid = spawned["ok"]["pid"].as_u64().expect("a pid");
    let refused = &answers[1];
    assert_eq!(
        refused["err"]["message"], "kills are paused during the freeze",
        "{refused}"
    );
    // The kill never ran: process 1 is still there, beside the one spawned.
    let pids = &answers[2]["ok"];
    assert!(
        pids.as_array()
            .is_some_and(|p| p.contains(&json!(1)) && p.contains(&json!(pid))),
        "{pids}"
    );
    let uid = std::fs::metadata("/proc/self")
        .map(|m| std::os::unix::fs::MetadataExt::uid(&m))
        .unwrap();
    assert_eq!(
        *layer.0.lock().unwrap(),
        [
            format!("proc_spawn by uid:{uid}"),
            format!("proc_kill by uid:{uid}")
        ],
        "reads pass no layer; calls are named as MCP names their tools"
    );
    let _ = std::fs::remove_dir_all(&dir);
}

/// Records what it saw of each call (tool, caller, its scopes, the arguments' size) and
/// refuses `proc_kill`.
#[derive(Clone, Default)]
struct Seen(Arc<Mutex<Vec<Call>>>);

/// One call as a layer saw it: tool, subject, scopes, the arguments' size.
type Call = (String, String, Vec<String>, usize);

impl CallLayer for Seen {
    fn admit(&self, call: &CallInfo<'_>) -> Result<(), String> {
        let who = call.principal().expect("the argv face names its caller");
        self.0.lock().unwrap().push((
            call.tool().to_owned(),
            who.subject().to_owned(),
            who.scopes().to_vec(),
            call.arguments_size(),
        ));
        match call.tool() {
            "proc_kill" => Err("kills are paused during the freeze".into()),
            _ => Ok(()),
        }
    }
}

#[tokio::test]
async fn a_layer_sees_every_argv_call_and_its_refusal_exits_refused_before_the_tool_runs() {
    let ops = Arc::new(ops::Ops::new());
    let layer = Seen::default();
    let client = ops.clone();
    let cli = surface::cli::Cli::new("opsctl", "0")
        .core(ops::core())
        .client(move || surface::mcp::BundleClient::with_core(ops::OpsClient::direct(client.clone())))
        .layer(layer.clone())
        .build()
        .unwrap();
    assert_eq!(
        cli.run(["opsctl", "proc_spawn", "--name", "worker"]).await,
        surface::cli::exit::OK
    );
    assert_eq!(
        cli.run(["opsctl", "proc_kill", "--pid", "1"]).await,
        surface::cli::exit::REFUSED
    );
    // The refused kill never ran; the spawn did.
    assert!(ops.processes.contains(&1), "process 1 is still there");
    assert_eq!(ops.processes.len(), 3, "two at start, one spawned");
    // Reads pass no layer.
    assert_eq!(cli.run(["opsctl", "list"]).await, surface::cli::exit::OK);
    let uid = std::fs::metadata("/proc/self")
        .map(|m| std::os::unix::fs::MetadataExt::uid(&m))
        .unwrap();
    let seen = layer.0.lock().unwrap().clone();
    let subjects: Vec<_> = seen
        .iter()
        .map(|(t, s, _, n)| (t.as_str(), s.clone(), *n))
        .collect();
    assert_eq!(
        subjects,
        [
            ("proc_spawn", format!("uid:{uid}"), r#"{"name":"worker"}"#.len()),
            ("proc_kill", format!("uid:{uid}"), r#"{"pid":1}"#.len()),
        ]
    );
    // Holding every scope the surface declares (no `--scope`, no `Cli::scopes`).
    assert!(seen[0].2.iter().any(|s| s == "ops.admin"), "{seen:?}");
}

/// Panics on `proc_kill`: a call that panics while it runs.
#[derive(Clone, Default)]
struct PanicsOnKill;

impl CallLayer for PanicsOnKill {
    fn admit(&self, call: &CallInfo<'_>) -> Result<(), String> {
        if call.tool() == "proc_kill" {
            panic!("the kill switch is wired wrong");
        }
        Ok(())
    }
}

/// A call that panics is answered with a failure saying so, and the connection goes on
/// answering: the calls before and after it on the same connection are answered too.
async fn a_call_that_panics_is_answered_and_the_connection_goes_on(name: &str) {
    let dir = common::daemon::socket_dir(name);
    let path = dir.join("ops.sock");
    let _server = serve_unix_socket_with(
        &path,
        Arc::new(ops::Ops::new()),
        ops::EXPOSE,
        WireOptions::default().layer(PanicsOnKill),
    )
    .unwrap();
    let answers = tokio::task::spawn_blocking(move || {
        let mut stream = UnixStream::connect(&path).unwrap();
        stream.set_read_timeout(Some(Duration::from_secs(20))).unwrap();
        let mut lines = BufReader::new(stream.try_clone().unwrap());
        let mut greeting = String::new();
        lines.read_line(&mut greeting).unwrap();
        // Pipelined: all three are sent before any answer is read.
        for frame in [
            json!({"id": 1, "op": "call", "procedure": "load.sample", "input": {}}),
            json!({"id": 2, "op": "call", "procedure": "proc.kill", "input": {"pid": 1}}),
            json!({"id": 3, "op": "call", "procedure": "load.sample", "input": {}}),
        ] {
            writeln!(stream, "{frame}").unwrap();
        }
        let mut answers: Vec<Value> = (0..3)
            .map(|_| {
                let mut line = String::new();
                lines.read_line(&mut line).unwrap();
                serde_json::from_str(&line).unwrap()
            })
            .collect();
        answers.sort_by_key(|a| a["id"].as_u64());
        answers
    })
    .await
    .unwrap();
    assert!(answers[0].get("ok").is_some(), "{}", answers[0]);
    assert_eq!(
        answers[1]["err"]["message"], "the call panicked: the kill switch is wired wrong",
        "{}",
        answers[1]
    );
    assert!(answers[2].get("ok").is_some(), "{}", answers[2]);
    let _ = std::fs::remove_dir_all(&dir);
}

#[tokio::test]
async fn a_call_that_panics_is_answered_on_a_current_thread_runtime() {
    a_call_that_panics_is_answered_and_the_connection_goes_on("panic-current").await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_call_that_panics_is_answered_on_a_multi_thread_runtime() {
    a_call_that_panics_is_answered_and_the_connection_goes_on("panic-multi").await;
}
