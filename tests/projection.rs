//! Projected surfaces: a surface whose members are derived from a live client of ops — in this
//! process and dialled over the wire face, through the same client shape — kept current from
//! ops' change feeds, keeping their last value when ops fails, letting go of ops when dropped.

mod common;

#[allow(dead_code)]
#[path = "../examples/ops.rs"]
mod ops;

use common::daemon::{Daemon, settle, socket_dir};
use ops::{Kill, Load, Ops, OpsClient, Process, Saved, Spawn};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::json;
use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Duration;
use surface::project::{Relayed, Source};
use surface::{DirectDispatch, Dispatch, FailureKind, SurfaceMembers, Write, surface};

/// A process as the watch surface shows it.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Row {
    /// Its name.
    pub name: String,
    /// Whether it is not running.
    pub red: bool,
}

/// Every kind of derived member over ops, and one passthrough procedure.
#[surface]
pub struct Watch {
    /// ops' load, as is.
    #[cell(derived)]
    pub load: Load,
    /// How many processes run: a cell derived from a collection.
    #[cell(derived)]
    pub running: u32,
    /// Every process as a row, by pid: a collection derived item by item.
    #[collection(key = u32, derived)]
    pub processes: Row,
    /// The last three log lines, shouted.
    #[stream(derived)]
    pub log: String,
    /// ops' autosaves, counted.
    #[event(derived)]
    pub autosave: u32,
    source: Source<OpsClient>,
}

#[surface]
impl Watch {
    /// Kill, passed through to ops.
    #[procedure("proc.kill")]
    pub async fn kill(&self, input: Kill) -> Result<ops::Killed, Relayed> {
        Ok(self.source.client().proc().kill(input).await?)
    }
}

impl Watch {
    async fn project(source: Source<OpsClient>) -> Watch {
        let running =
            |table: &BTreeMap<u32, Process>| table.values().filter(|p| p.state == "running").count() as u32;
        Watch {
            load: source.cell(|a| a.load(), |l: Load| l).await.unwrap(),
            running: source.cell_of(OpsClient::processes, running).await.unwrap(),
            processes: source
                .collection(OpsClient::processes, |_, p: Process| Row {
                    red: p.state != "running",
                    name: p.name,
                })
                .await
                .unwrap(),
            log: source
                .stream(OpsClient::log, 3, |l: String| l.to_uppercase())
                .await
                .unwrap(),
            autosave: source
                .event(OpsClient::autosave, |s: Saved| s.procs)
                .await
                .unwrap(),
            source,
        }
    }
}

/// ops' watchers: one per derived member that follows it (processes has two).
fn watchers(ops: &Ops) -> [usize; 4] {
    [
        ops.load.watchers(),
        ops.processes.watchers(),
        ops.log.watchers(),
        ops.autosave.watchers(),
    ]
}

/// The checks every source passes: the first read, then each kind following a change made
/// on ops (through `ops_client`, which may be another connection).
async fn follows(watch: &Watch, ops: &Ops, ops_client: &OpsClient) {
    assert_eq!(watch.load.value(), Load { cpu: 0.0, procs: 2 });
    assert_eq!(watch.running.value(), 2);
    assert_eq!(watch.processes.keys(), vec![1, 2]);
    assert_eq!(watch.log.snapshot(), vec!["LINE 2", "LINE 3", "LINE 4"]);

    let mut running = watch.running.subscribe();
    let mut saved = watch.autosave.subscribe();
    let spawned = ops_client
        .proc()
        .spawn(Spawn {
            name: "vim".into(),
            paused: true,
        })
        .await
        .unwrap();
    assert!(settle(|| watch.processes.get(&spawned.pid).is_some()).await);
    assert_eq!(
        watch.processes.get(&spawned.pid),
        Some(Row {
            name: "vim".into(),
            red: true
        })
    );
    assert!(
        settle(|| watch.load.value().procs == 3).await,
        "{:?}",
        watch.load.value()
    );
    assert!(settle(|| watch.log.snapshot().last().map(String::as_str) == Some("SPAWNED VIM AS 3")).await);
    assert_eq!(watch.log.snapshot().len(), 3, "bounded to its history");
    // A paused process is not running: the derived count is recomputed to the same value.
    assert_eq!(running.recv().await.unwrap(), 2);

    ops.autosave.publish(Saved { procs: 3 });
    assert_eq!(
        tokio::time::timeout(Duration::from_secs(5), saved.recv())
            .await
            .unwrap()
            .unwrap(),
        3
    );

    ops_client.proc().kill(Kill { pid: 1 }).await.unwrap();
    assert!(
        settle(|| watch.processes.keys() == vec![2, 3]).await,
        "{:?}",
        watch.processes.keys()
    );
    assert_eq!(
        tokio::time::timeout(Duration::from_secs(5), running.recv())
            .await
            .unwrap()
            .unwrap(),
        1
    );
}

fn ops_with_log() -> Arc<Ops> {
    let ops = Arc::new(Ops::new());
    (0..5).for_each(|n| ops.log.push(format!("line {n}")));
    ops
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn derived_members_follow_a_source_in_this_process() {
    let ops = ops_with_log();
    let client = OpsClient::direct(ops.clone());
    let watch = Watch::project(Source::new(client.clone())).await;
    assert_eq!(watchers(&ops), [1, 2, 1, 1]);
    assert!(watch.load.is_following());
    follows(&watch, &ops, &client).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn dropping_the_projection_ends_its_watches_on_the_source() {
    let ops = ops_with_log();
    let before = watchers(&ops);
    let watch = Watch::project(Source::new(OpsClient::direct(ops.clone()))).await;
    assert_ne!(watchers(&ops), before);
    drop(watch);
    assert!(settle(|| watchers(&ops) == before).await, "{:?}", watchers(&ops));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_passthrough_relays_the_sources_answer_and_refusal_unchanged() {
    let ops = ops_with_log();
    let watch = Arc::new(Watch::project(Source::new(OpsClient::direct(ops.clone()))).await);
    let client = WatchClient::direct(watch.clone());
    assert_eq!(
        client.proc().kill(Kill { pid: 2 }).await.unwrap(),
        ops::Killed { ok: true }
    );
    assert!(!ops.processes.contains(&2), "the call reached ops");
    let refused = client.proc().kill(Kill { pid: 2 }).await.unwrap_err();
    assert_eq!(refused.kind, FailureKind::Refused);
    assert_eq!(refused.message, "there is no process 2");
    assert_eq!(refused.detail, Some(json!({"kind": "no-such-process", "pid": 2})));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_erased_write_to_a_derived_member_is_refused() {
    let ops = ops_with_log();
    let watch = Arc::new(Watch::project(Source::new(OpsClient::direct(ops.clone()))).await);
    let member = watch.member("load").unwrap();
    let refused = member
        .write(Write::Set(json!({"cpu": 1.0, "procs": 9})))
        .unwrap_err();
    assert!(refused.message.contains("read-only"), "{}", refused.message);
    let dispatch = DirectDispatch::new(watch.clone());
    assert!(
        dispatch
            .write("processes", Write::Remove { key: json!(1) })
            .await
            .is_err()
    );
    assert_eq!(watch.load.value().procs, 2, "unchanged");
    // Reads go through: the spec and the faces see an ordinary cell.
    assert_eq!(member.read(), json!({"cpu": 0.0, "procs": 2}));
    assert_eq!(
        Watch::SPEC.member("running").unwrap().kind,
        surface::MemberKind::Cell
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn derived_members_follow_a_source_dialled_over_the_wire_and_let_go_when_dropped() {
    let ops = ops_with_log();
    let path = socket_dir("projection-wire").join("ops.sock");
    let _server = surface::wire::serve_unix_socket(&path, ops.clone(), ops::EXPOSE).unwrap();
    let before = watchers(&ops);
    let source = Source::dialled(surface::wire::dial_unix_socket::<Ops>(&path).await.unwrap());
    let watch = Watch::project(source).await;
    assert!(
        settle(|| watchers(&ops) == [1, 2, 1, 1]).await,
        "{:?}",
        watchers(&ops)
    );
    // ops is changed through a connection of its own, as another client would.
    let other = surface::wire::dial_unix_socket::<Ops>(&path).await.unwrap();
    follows(&watch, &ops, &other.client).await;
    drop(watch);
    assert!(settle(|| watchers(&ops) == before).await, "{:?}", watchers(&ops));
}

/// Spawns `name` on the ops served at `path`, through a connection of its own (as another
/// client would); answers its pid.
async fn spawn_on(path: &std::path::Path, name: &str, paused: bool) -> u32 {
    let ops = surface::wire::dial_unix_socket::<Ops>(path).await.unwrap();
    let spawn = Spawn {
        name: name.into(),
        paused,
    };
    ops.client.proc().spawn(spawn).await.unwrap().pid
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_derived_member_keeps_its_last_value_when_the_source_fails() {
    let path = socket_dir("projection-fails").join("ops.sock");
    let daemon = Daemon::start(&path).await;
    let connection = surface::wire::dial_unix_socket::<Ops>(&path).await.unwrap();
    let on_close = connection.on_close();
    let watch = Watch::project(Source::dialled(connection)).await;
    spawn_on(&path, "vim", false).await;
    assert!(settle(|| watch.running.value() == 3).await);
    // The derived count can settle before the collection's own change arrives: wait for the
    // whole state before the source goes away, so what stays is the last value of each member.
    assert!(settle(|| watch.processes.keys() == vec![1, 2, 3]).await);

    drop(daemon);
    tokio::time::timeout(Duration::from_secs(5), on_close.closed())
        .await
        .unwrap();
    assert!(
        settle(|| !watch.running.is_following()).await,
        "the feed ended with the connection"
    );
    assert_eq!(watch.running.value(), 3, "the last value stays");
    assert_eq!(watch.load.value().procs, 3);
    assert_eq!(watch.processes.keys(), vec![1, 2, 3]);
    let refused = WatchClient::direct(Arc::new(watch))
        .proc()
        .kill(Kill { pid: 1 })
        .await
        .unwrap_err();
    assert!(
        matches!(refused.kind, FailureKind::Transport { .. }),
        "{refused:?}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_redialling_source_follows_a_source_that_restarts() {
    let path = socket_dir("projection-redial").join("ops.sock");
    let first = Daemon::start(&path).await;
    let dial_path = path.clone();
    let source = Source::redialling(move || surface::wire::dial_unix_socket::<Ops>(dial_path.clone()))
        .await
        .unwrap();
    let watch = Arc::new(Watch::project(source).await);
    let client = WatchClient::direct(watch.clone());
    spawn_on(&path, "vim", false).await;
    // The count and the collection are two feeds: wait for both before the source goes away.
    assert!(settle(|| watch.running.value() == 3 && watch.processes.keys() == vec![1, 2, 3]).await);

    drop(first);
    // Down: the last values stay, and a passthrough says why it cannot answer.
    assert!(client.proc().kill(Kill { pid: 1 }).await.is_err());
    assert_eq!(watch.running.value(), 3);
    assert_eq!(watch.processes.keys(), vec![1, 2, 3]);

    // A new ops (fresh: init and shell) at the same path: the projection moves to it.
    let _second = Daemon::start(&path).await;
    assert!(
        settle(|| watch.processes.keys() == vec![1, 2]).await,
        "{:?}",
        watch.processes.keys()
    );
    assert!(settle(|| watch.running.value() == 2).await);
    assert!(watch.running.is_following());
    spawn_on(&path, "cron", true).await;
    assert!(
        settle(|| watch.processes.get(&3)
            == Some(Row {
                name: "cron".into(),
                red: true
            }))
        .await
    );
    assert_eq!(
        client.proc().kill(Kill { pid: 3 }).await.unwrap(),
        ops::Killed { ok: true }
    );
    assert!(settle(|| watch.processes.keys() == vec![1, 2]).await);
}
