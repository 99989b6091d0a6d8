//! What a member operation costs in Redis round trips (feature `redis`; `.ci/run` runs it with
//! the other Redis tests): an update is one round trip when nobody else wrote, one more when
//! another instance did (the failed swap answers what is stored, so the retry reads nothing),
//! and no lease is held between round trips.
//!
//! Its own binary: the round-trip count is a process-wide metric, and no other test here writes.

mod common;

#[allow(dead_code)]
#[path = "../examples/ops.rs"]
mod ops;

use common::redis::Redis;

fn instance(redis: &Redis) -> (std::sync::Arc<ops::Ops>, surface::store::RedisStore) {
    common::redis::in_store(&redis.url(), ops::Ops::new(), |ops| ("next_pid", &ops.next_pid))
}

#[test]
fn an_update_is_one_round_trip_and_a_conflict_one_more() {
    let Some(redis) = Redis::start("an_update_is_one_round_trip_and_a_conflict_one_more") else {
        return;
    };
    let metrics = metrics_exporter_prometheus::PrometheusBuilder::new()
        .install_recorder()
        .expect("the only recorder of this test binary");
    let round_trips = || common::redis::round_trips(&metrics);
    let (a, _sa) = instance(&redis);
    let (b, _sb) = instance(&redis);
    a.load.update(|l| l.procs += 1); // A learns the value and its version
    for n in 1..=5 {
        let before = round_trips();
        a.load.update(|l| l.procs += 1);
        assert_eq!(
            round_trips() - before,
            1,
            "update {n}: one script, read and write in one"
        );
    }
    b.load.update(|l| l.procs += 10);
    let before = round_trips();
    let mut runs = Vec::new();
    a.load.update(|l| {
        runs.push(l.procs);
        l.procs += 1;
    });
    assert_eq!(
        round_trips() - before,
        2,
        "a's stale swap fails answering b's value, and the retry writes"
    );
    assert_eq!(
        runs,
        vec![8, 18],
        "the update ran on what a knew, then on what b wrote"
    );
    assert_eq!(b.load.get().procs, 19, "every update counts");

    // A spawn: pid, upsert, the load's swap (counted up: no read while it holds the turn), the
    // log line.
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let spawn = || {
        runtime
            .block_on(a.spawn(ops::Spawn {
                name: "rt".into(),
                paused: false,
            }))
            .unwrap()
    };
    spawn();
    let procs = b.load.get().procs;
    let before = round_trips();
    let process = spawn();
    assert_eq!(round_trips() - before, 4, "a spawn is four round trips");
    assert_eq!(
        b.processes.get(&process.pid).map(|p| p.name),
        Some("rt".to_owned())
    );
    assert_eq!(
        b.load.get().procs,
        procs + 1,
        "the spawn counted one more process"
    );
}
