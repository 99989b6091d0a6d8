//! Fan-out of updates to subscribed URIs: what a host pays to publish while agents watch, what
//! the agents receive (debounced), and that memory stays bounded however many updates flow.
//!
//! `fanout --updates 10000 --uris 100 --bursts 10 --pause-ms 50 --out results.json`
//!
//! The same bursts of collection upserts run twice on fresh `Ops` servers over an in-process
//! connection: once with nothing subscribed, once with `--uris` item URIs subscribed (legacy
//! `resources/subscribe`, each watched by one debounced task). Reported: updates/s in both and
//! their ratio, `notifications/resources/updated` received per URI against what the debounce
//! window allows, and resident memory after the first and after the last burst.

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::{Duration, Instant};
use surface_bench::ops::{self, Ops, Process};
use surface_bench::wire::open_surface;

fn rss_kib() -> u64 {
    surface_bench::http::memory("self").0
}

struct Outcome {
    updates_per_s: f64,
    elapsed: Duration,
    notified: BTreeMap<String, usize>,
    rss_first: u64,
    rss_last: u64,
}

fn run(rt: &tokio::runtime::Runtime, uris: usize, updates: usize, bursts: usize, pause: Duration) -> Outcome {
    let ops = Arc::new(Ops::new());
    let served = ops::mcp_server(ops.clone()).start().expect("ops composes");
    let (mut wire, _conn) = rt.block_on(open_surface(&served));
    rt.block_on(async {
        for k in 0..uris {
            let uri = format!("surface://collections/processes/{}", 1000 + k);
            wire.call("resources/subscribe", &format!(r#"{{"uri":"{uri}"}}"#))
                .await;
        }
    });
    let counter = rt.spawn(async move {
        let mut notified: BTreeMap<String, usize> = BTreeMap::new();
        while wire.next_line().await {
            if wire.line.contains("notifications/resources/updated")
                && let Some(start) = wire.line.find("surface://")
            {
                let uri = &wire.line[start..];
                let uri = &uri[..uri.find('"').unwrap_or(uri.len())];
                *notified.entry(uri.to_owned()).or_default() += 1;
            }
        }
        notified
    });
    let mut busy = Duration::ZERO;
    let mut rss_first = 0;
    let started = Instant::now();
    for burst in 0..bursts {
        let t = Instant::now();
        for i in 0..updates {
            let pid = 1000 + (i % 100) as u32;
            ops.processes.upsert(
                pid,
                Process {
                    pid,
                    name: "worker".into(),
                    state: if (i + burst) % 2 == 0 {
                        "running"
                    } else {
                        "sleeping"
                    }
                    .into(),
                },
            );
        }
        busy += t.elapsed();
        if burst == 0 {
            std::thread::sleep(pause);
            rss_first = rss_kib();
        } else {
            std::thread::sleep(pause);
        }
    }
    let elapsed = started.elapsed();
    // Let the last debounce windows close, then end the connection and collect the counts.
    std::thread::sleep(Duration::from_millis(600));
    let rss_last = rss_kib();
    served.close();
    let notified = rt
        .block_on(async { tokio::time::timeout(Duration::from_secs(10), counter).await })
        .expect("the connection closes")
        .expect("the counter does not panic");
    Outcome {
        updates_per_s: (updates * bursts) as f64 / busy.as_secs_f64(),
        elapsed,
        notified,
        rss_first,
        rss_last,
    }
}

fn main() {
    let mut updates = 10_000usize;
    let mut uris = 100usize;
    let mut bursts = 10usize;
    let mut pause_ms = 50u64;
    let mut out: Option<String> = None;
    let mut args = std::env::args().skip(1);
    while let Some(a) = args.next() {
        let v = args.next().unwrap_or_else(|| panic!("{a} needs a value"));
        match a.as_str() {
            "--updates" => updates = v.parse().unwrap(),
            "--uris" => uris = v.parse().unwrap(),
            "--bursts" => bursts = v.parse().unwrap(),
            "--pause-ms" => pause_ms = v.parse().unwrap(),
            "--out" => out = Some(v),
            other => panic!("unknown argument {other:?}"),
        }
    }
    let rt = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .unwrap();
    let pause = Duration::from_millis(pause_ms);
    let quiet = run(&rt, 0, updates, bursts, pause);
    let watched = run(&rt, uris, updates, bursts, pause);
    let total: usize = watched.notified.values().sum();
    let most = watched.notified.values().copied().max().unwrap_or(0);
    // One notification per URI per debounce window (200 ms) at most, plus the one in flight.
    let windows = (watched.elapsed.as_millis() as f64 / 200.0).ceil() as usize + 1;
    let mut table = String::new();
    use std::fmt::Write as _;
    let _ = writeln!(
        table,
        "fan-out: {bursts} bursts × {updates} upserts ({pause_ms} ms apart) to a collection, {uris} item URIs subscribed\n"
    );
    let _ = writeln!(table, "| | nobody subscribed | {uris} URIs subscribed |");
    let _ = writeln!(table, "|---|---:|---:|");
    let _ = writeln!(
        table,
        "| updates/s (writer) | {:.0} | {:.0} |",
        quiet.updates_per_s, watched.updates_per_s
    );
    let _ = writeln!(
        table,
        "| RSS after burst 1 / after burst {bursts}, MiB | {:.1} / {:.1} | {:.1} / {:.1} |",
        quiet.rss_first as f64 / 1024.0,
        quiet.rss_last as f64 / 1024.0,
        watched.rss_first as f64 / 1024.0,
        watched.rss_last as f64 / 1024.0
    );
    let _ = writeln!(
        table,
        "\nwriter slowdown with {uris} watchers: {:.2}×; notifications: {total} for {} updates ({} URIs notified, at most {most} each; the debounce allows {windows} per URI over {:.2} s)",
        quiet.updates_per_s / watched.updates_per_s,
        updates * bursts,
        watched.notified.len(),
        watched.elapsed.as_secs_f64()
    );
    print!("{table}");
    if let Some(path) = out {
        let json = serde_json::json!({
            "updates": updates, "bursts": bursts, "uris": uris, "pause_ms": pause_ms,
            "quiet_updates_per_s": quiet.updates_per_s, "watched_updates_per_s": watched.updates_per_s,
            "slowdown": quiet.updates_per_s / watched.updates_per_s,
            "notifications": total, "uris_notified": watched.notified.len(), "most_per_uri": most,
            "windows_allowed": windows,
            "rss_kib": {"quiet": [quiet.rss_first, quiet.rss_last], "watched": [watched.rss_first, watched.rss_last]},
            "table": table,
        });
        std::fs::write(path, serde_json::to_string_pretty(&json).unwrap()).unwrap();
    }
    let ok = watched.notified.len() == uris && most <= windows;
    if !ok {
        eprintln!("fanout: every subscribed URI must be notified, at most once per debounce window");
        std::process::exit(1);
    }
}
