//! The soak: minutes of mixed load on real processes, with their memory sampled. Not part of
//! the default test run:
//!
//! ```sh
//! SOAK_SECS=600 cargo test --test soak -- --ignored --nocapture
//! ```
//!
//! Load, all at once until `SOAK_SECS` (default 600) have passed:
//! - an MCP client on `ops --bridge A` (stdio): calls, resource reads, spawn and kill, one
//!   `resources/subscribe` kept open — while the daemon `ops --socket A` behind the bridge is
//!   killed and restarted every `SOAK_RESTART_SECS` (default 20);
//! - an MCP client on `bundle` (stdio): `roster_set` reroster cycling through four rosters,
//!   calls to the tenants served, subscribe and unsubscribe;
//! - wire clients on a long-lived `ops --socket B`: dial, calls, a watch opened and dropped,
//!   spawn and kill, dispose — over and over.
//!
//! `VmRSS` of the bridge, the bundle server and daemon B is sampled every 2 s. The first fifth
//! of the run is warm-up. The test fails if, for any of them, the median of the last tenth of
//! the samples exceeds the median of the first tenth after warm-up by more than
//! `SOAK_TOLERANCE_PCT` percent (default 10) plus 1 MiB.

// The clients speak the legacy era, whose `resources/subscribe` rmcp marks deprecated.
#![allow(deprecated)]

mod common;

use rmcp::model::{CallToolRequestParams, ReadResourceRequestParams, SubscribeRequestParams};
use rmcp::service::RunningService;
use rmcp::{RoleClient, ServiceExt};
use serde_json::{Value, json};
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};
use tokio::process::{Child, Command};

fn env_u64(name: &str, default: u64) -> u64 {
    std::env::var(name)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

fn daemon(path: &Path) -> Child {
    let _ = std::fs::remove_file(path);
    Command::new(common::ops_binary())
        .arg("--socket")
        .arg(path)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .kill_on_drop(true)
        .spawn()
        .expect("the daemon starts")
}

async fn until_greets(path: &Path) {
    for _ in 0..400 {
        if let Ok(c) = surface::wire::dial_unix_socket::<ops::Ops>(path).await {
            c.dispose();
            return;
        }
        tokio::time::sleep(Duration::from_millis(25)).await;
    }
    panic!("the daemon on {} never greeted", path.display());
}

/// An MCP client over a child's stdio, and the child's pid.
async fn mcp_child(mut command: Command) -> (RunningService<RoleClient, ()>, Child, u32) {
    let mut child = command
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .kill_on_drop(true)
        .spawn()
        .expect("the MCP server starts");
    let pid = child.id().unwrap();
    let io = (child.stdout.take().unwrap(), child.stdin.take().unwrap());
    let client = ().serve(io).await.expect("the MCP client connects");
    (client, child, pid)
}

async fn call(client: &RunningService<RoleClient, ()>, name: &str, args: Value) -> Option<Value> {
    let mut params = CallToolRequestParams::new(name.to_owned());
    if let Value::Object(o) = args {
        params = params.with_arguments(o);
    }
    let r = client.call_tool(params).await.ok()?;
    (r.is_error != Some(true)).then_some(r.structured_content.unwrap_or(Value::Null))
}

#[allow(dead_code)]
#[path = "../examples/ops.rs"]
mod ops;

#[derive(Default)]
struct Counts {
    ok: AtomicU64,
    failed: AtomicU64,
    rerosters: AtomicU64,
    restarts: AtomicU64,
    dials: AtomicU64,
}

impl Counts {
    fn count(&self, ok: bool) {
        if ok { &self.ok } else { &self.failed }.fetch_add(1, Ordering::Relaxed);
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "minutes long: SOAK_SECS=600 cargo test --test soak -- --ignored --nocapture"]
async fn soak() {
    let secs = env_u64("SOAK_SECS", 600).max(20);
    let restart_every = Duration::from_secs(env_u64("SOAK_RESTART_SECS", 20));
    let tolerance_pct = env_u64("SOAK_TOLERANCE_PCT", 10);
    let dir = std::env::temp_dir().join(format!("surface-soak-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let (a, b): (PathBuf, PathBuf) = (dir.join("a.sock"), dir.join("b.sock"));
    let bundle_bin = common::example_binary("bundle");

    let mut daemon_a = daemon(&a);
    let daemon_b = daemon(&b);
    until_greets(&a).await;
    until_greets(&b).await;
    let daemon_b_pid = daemon_b.id().unwrap();
    let mut bridge_command = Command::new(common::ops_binary());
    bridge_command.arg("--bridge").arg(&a);
    let (bridge, _bridge_child, bridge_pid) = mcp_child(bridge_command).await;
    let (bundle, _bundle_child, bundle_pid) = mcp_child(Command::new(bundle_bin)).await;
    let (bridge, bundle) = (Arc::new(bridge), Arc::new(bundle));

    let started = Instant::now();
    let deadline = started + Duration::from_secs(secs);
    let counts = Arc::new(Counts::default());
    let mut load = Vec::new();

    // The bridge: calls, reads, spawn and kill, one subscription kept open.
    {
        let (bridge, counts) = (bridge.clone(), counts.clone());
        load.push(tokio::spawn(async move {
            let _ = bridge
                .subscribe(SubscribeRequestParams::new("surface://collections/processes"))
                .await;
            let mut i = 0u64;
            while Instant::now() < deadline {
                i += 1;
                counts.count(call(&bridge, "load_sample", json!({})).await.is_some());
                let read = bridge
                    .read_resource(ReadResourceRequestParams::new("surface://cells/load"))
                    .await;
                counts.count(read.is_ok());
                if i.is_multiple_of(5)
                    && let Some(p) = call(&bridge, "proc_spawn", json!({"name": "soak"})).await
                {
                    counts.count(
                        call(&bridge, "proc_kill", json!({"pid": p["pid"]}))
                            .await
                            .is_some(),
                    );
                }
                tokio::time::sleep(Duration::from_millis(5)).await;
            }
        }));
    }
    // Daemon A restarts behind the bridge.
    {
        let counts = counts.clone();
        let a = a.clone();
        load.push(tokio::spawn(async move {
            while Instant::now() + restart_every < deadline {
                tokio::time::sleep(restart_every).await;
                let _ = daemon_a.kill().await;
                daemon_a = daemon(&a);
                until_greets(&a).await;
                counts.restarts.fetch_add(1, Ordering::Relaxed);
            }
            // The last daemon serves to the end.
            tokio::time::sleep_until(deadline.into()).await;
            let _ = daemon_a.kill().await;
        }));
    }
    // The bundle: rerosters, tenant calls, subscribe and unsubscribe.
    {
        let (bundle, counts) = (bundle.clone(), counts.clone());
        load.push(tokio::spawn(async move {
            let rosters = [vec!["a", "b"], vec!["b", "c"], vec!["c"], vec!["a", "b", "c"]];
            let mut i = 0usize;
            while Instant::now() < deadline {
                let roster = &rosters[i % rosters.len()];
                i += 1;
                let set = call(&bundle, "roster_set", json!({"keys": roster})).await;
                counts.count(set.is_some());
                counts.rerosters.fetch_add(1, Ordering::Relaxed);
                for key in roster {
                    for _ in 0..10 {
                        counts.count(
                            call(&bundle, &format!("{key}_ops_run"), json!({}))
                                .await
                                .is_some(),
                        );
                    }
                    let uri = format!("surface://cells/{key}/entries");
                    let subscribed = bundle.subscribe(SubscribeRequestParams::new(uri.clone())).await;
                    counts.count(subscribed.is_ok());
                    let _ = bundle
                        .unsubscribe(rmcp::model::UnsubscribeRequestParams::new(uri))
                        .await;
                }
                tokio::time::sleep(Duration::from_millis(20)).await;
            }
        }));
    }
    // Wire clients on daemon B, dialled and disposed over and over.
    for _ in 0..2 {
        let (b, counts) = (b.clone(), counts.clone());
        load.push(tokio::spawn(async move {
            while Instant::now() < deadline {
                let Ok(connection) = surface::wire::dial_unix_socket::<ops::Ops>(&b).await else {
                    counts.count(false);
                    continue;
                };
                counts.dials.fetch_add(1, Ordering::Relaxed);
                let client = &connection.client;
                let watch = client.processes().watch().await;
                counts.count(watch.is_ok());
                for _ in 0..20 {
                    counts.count(client.load().get().await.is_ok());
                }
                // Every spawn and kill adds a line to the `log` stream: its bounded history
                // (`surface::STREAM_HISTORY`) keeps that flat too.
                if let Ok(p) = client
                    .proc()
                    .spawn(ops::Spawn {
                        name: "soak".into(),
                        paused: false,
                    })
                    .await
                {
                    counts.count(client.proc().kill(ops::Kill { pid: p.pid }).await.is_ok());
                }
                drop(watch);
                connection.dispose();
                tokio::time::sleep(Duration::from_millis(10)).await;
            }
        }));
    }

    // Sample every 2 s.
    let names = ["bridge", "bundle", "daemon B"];
    let pids = [bridge_pid, bundle_pid, daemon_b_pid];
    let mut samples: Vec<(f64, [u64; 3])> = Vec::new();
    while Instant::now() < deadline {
        tokio::time::sleep(Duration::from_secs(2)).await;
        let rss = pids.map(|pid| common::rss_kb(pid).expect("a measured process died"));
        let t = started.elapsed().as_secs_f64();
        eprintln!(
            "soak t={t:>5.0}s rss kB: bridge {} bundle {} daemon-B {}  (ok {} failed {} rerosters {} restarts {} dials {})",
            rss[0],
            rss[1],
            rss[2],
            counts.ok.load(Ordering::Relaxed),
            counts.failed.load(Ordering::Relaxed),
            counts.rerosters.load(Ordering::Relaxed),
            counts.restarts.load(Ordering::Relaxed),
            counts.dials.load(Ordering::Relaxed),
        );
        samples.push((t, rss));
    }
    // Every load loop ends at the deadline; a request stuck past it would show here.
    for (i, task) in load.into_iter().enumerate() {
        task.await.unwrap();
        eprintln!(
            "soak: load task {i} ended {:.1} s after the deadline",
            Instant::now().duration_since(deadline).as_secs_f64()
        );
    }

    let warm = samples
        .iter()
        .filter(|(t, _)| *t >= secs as f64 / 5.0)
        .map(|(_, rss)| *rss)
        .collect::<Vec<_>>();
    assert!(warm.len() >= 10, "too few samples after warm-up: run longer");
    let tenth = (warm.len() / 10).max(1);
    let ok = counts.ok.load(Ordering::Relaxed);
    let failed = counts.failed.load(Ordering::Relaxed);
    eprintln!(
        "soak: {secs} s, {ok} requests answered, {failed} failed (during restarts), {} rerosters, {} daemon restarts, {} wire dials",
        counts.rerosters.load(Ordering::Relaxed),
        counts.restarts.load(Ordering::Relaxed),
        counts.dials.load(Ordering::Relaxed)
    );
    assert!(
        ok > 1000 && ok > failed * 10,
        "the load mostly failed: {ok} ok, {failed} failed"
    );
    let mut grew = Vec::new();
    for (i, name) in names.iter().enumerate() {
        let first = common::median(&warm[..tenth].iter().map(|s| s[i]).collect::<Vec<_>>());
        let last = common::median(
            &warm[warm.len() - tenth..]
                .iter()
                .map(|s| s[i])
                .collect::<Vec<_>>(),
        );
        let allowed = first + first * tolerance_pct / 100 + 1024;
        eprintln!("soak: {name}: RSS {first} kB after warm-up, {last} kB at the end (allowed {allowed} kB)");
        if last > allowed {
            grew.push(format!("{name} grew from {first} kB to {last} kB"));
        }
    }
    assert!(grew.is_empty(), "RSS grew after warm-up: {}", grew.join("; "));
}
