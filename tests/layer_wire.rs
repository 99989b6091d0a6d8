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
