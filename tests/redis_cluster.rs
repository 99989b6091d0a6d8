//! The store on a Redis Cluster (feature `redis`; `.ci/run` runs it with the other Redis
//! tests): a local cluster of three masters and three replicas started from Debian's
//! `redis-server`, two `ops --http ADDR --redis-cluster URL,…` instances writing through it, and
//! the master that serves the surface killed mid-load. Its replica takes over, and no
//! acknowledged write is lost: each write is answered only once a replica has it (`WAIT 1`).
//! Without `redis-server` on the PATH the test prints why it skips.

mod common;

use common::redis::{Cluster, eventually};
use serde_json::{Value, json};
use std::net::SocketAddr;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

/// `ops --http 127.0.0.1:0 --redis-cluster URL,…` as a child, and the address it serves.
async fn ops_instance(cluster: &Cluster) -> (tokio::process::Child, SocketAddr) {
    let nodes = cluster.urls().join(",");
    let bin = common::example_binary_with("ops", &["redis"]);
    common::raw_http::spawn_serving(&bin, &["--http", "127.0.0.1:0", "--redis-cluster", &nodes]).await
}

/// `tools/call name arguments` in `session`: the structured answer, or `None` for an `isError`
/// answer (a call that failed is not acknowledged).
async fn call(addr: SocketAddr, session: &str, name: &str, arguments: Value) -> Option<Value> {
    let request = json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call",
        "params": {"name": name, "arguments": arguments}});
    let answer = common::raw_http::legacy_post(addr, session, &request)
        .await
        .message();
    let result = &answer["result"];
    (result["isError"] == false).then(|| result["structuredContent"].clone())
}

async fn read(addr: SocketAddr, session: &str, uri: &str) -> Value {
    let request = json!({"jsonrpc": "2.0", "id": 1, "method": "resources/read", "params": {"uri": uri}});
    let answer = common::raw_http::legacy_post(addr, session, &request)
        .await
        .message();
    let text = answer["result"]["contents"][0]["text"]
        .as_str()
        .unwrap_or_else(|| panic!("{uri} reads: {answer}"));
    serde_json::from_str(text).unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_failover_of_the_surfaces_master_loses_no_acknowledged_write() {
    let Some(mut cluster) = tokio::task::block_in_place(|| {
        Cluster::start("a_failover_of_the_surfaces_master_loses_no_acknowledged_write")
    }) else {
        return;
    };
    let (_a, a_addr) = ops_instance(&cluster).await;
    let (_b, b_addr) = ops_instance(&cluster).await;

    // Spawns through both instances until told to stop: the pids of those acknowledged.
    let acknowledged = Arc::new(Mutex::new(Vec::<u64>::new()));
    let failed = Arc::new(Mutex::new(0usize));
    let stop = Arc::new(AtomicBool::new(false));
    let workers: Vec<_> = (0..4)
        .map(|n| {
            let addr = if n % 2 == 0 { a_addr } else { b_addr };
            let (acknowledged, failed, stop) = (acknowledged.clone(), failed.clone(), stop.clone());
            tokio::spawn(async move {
                let session = common::raw_http::legacy_session(addr).await;
                let mut i = 0;
                while !stop.load(Ordering::Relaxed) {
                    i += 1;
                    let name = format!("w{n}-{i}");
                    match call(addr, &session, "proc_spawn", json!({ "name": name })).await {
                        Some(process) => acknowledged
                            .lock()
                            .unwrap()
                            .push(process["pid"].as_u64().unwrap()),
                        None => *failed.lock().unwrap() += 1,
                    }
                }
            })
        })
        .collect();
    let count = || acknowledged.lock().unwrap().len();
    let settle = |want: usize, secs: u64| {
        let count = &count;
        async move {
            let deadline = tokio::time::Instant::now() + Duration::from_secs(secs);
            while count() < want && tokio::time::Instant::now() < deadline {
                tokio::time::sleep(Duration::from_millis(50)).await;
            }
            count() >= want
        }
    };
    assert!(
        settle(40, 60).await,
        "spawns are acknowledged through the cluster: {}",
        count()
    );

    // Kill the master that owns the surface's slot, mid-load.
    let slot = cluster.slot("ops");
    let master = tokio::task::block_in_place(|| {
        let mut master = None;
        eventually(Duration::from_secs(30), || {
            master = cluster.master_of(slot);
            master.is_some()
        });
        master.expect("the nodes agree on the slot's master")
    });
    let before_kill = count();
    cluster.nodes[master].kill();
    let promoted = tokio::task::block_in_place(|| {
        let mut promoted = None;
        let ok = eventually(Duration::from_secs(60), || {
            promoted = cluster.master_of(slot).filter(|&m| m != master);
            promoted.is_some() && cluster.ok()
        });
        assert!(ok, "a replica takes the slot over within 60 s");
        promoted.unwrap()
    });
    // The killed master comes back as the new master's replica, so writes are confirmed again.
    tokio::task::block_in_place(|| {
        cluster.nodes[master].launch();
        assert!(
            eventually(Duration::from_secs(60), || cluster.replicas_of(promoted) >= 1),
            "the old master rejoins as a replica within 60 s"
        );
    });
    let after_failover = count();
    assert!(
        settle(after_failover + 40, 90).await,
        "spawns are acknowledged again after the failover: {} then {}",
        after_failover,
        count()
    );
    stop.store(true, Ordering::Relaxed);
    for w in workers {
        w.await.unwrap();
    }

    let acknowledged = acknowledged.lock().unwrap().clone();
    let session = common::raw_http::legacy_session(b_addr).await;
    let stored: Vec<u64> = read(b_addr, &session, "surface://collections/processes")
        .await
        .as_array()
        .unwrap()
        .iter()
        .filter_map(Value::as_u64)
        .collect();
    let lost: Vec<&u64> = acknowledged.iter().filter(|pid| !stored.contains(pid)).collect();
    assert!(
        lost.is_empty(),
        "{} acknowledged spawns ({before_kill} before the kill), none lost; lost: {lost:?}",
        acknowledged.len()
    );
    let mut distinct = acknowledged.clone();
    distinct.sort();
    distinct.dedup();
    assert_eq!(distinct.len(), acknowledged.len(), "no pid handed out twice");
    println!(
        "{} spawns acknowledged ({before_kill} before the kill), {} failed during the failover",
        acknowledged.len(),
        failed.lock().unwrap()
    );
}
