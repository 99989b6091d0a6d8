//! In-process benchmarks (criterion): the surface layer against a hand-written rmcp
//! `ServerHandler` over the same `Ops`, both driven by the same raw JSON-RPC client over an
//! in-process duplex; tools/list of 1,000 tools; resources/read of a 10,000-item collection;
//! reroster of siblings × 20 members at several sizes; fan-out of 10,000 updates to
//! subscribed URIs. `bench/run` reads the medians back and prints the ratios.

use criterion::{BenchmarkId, Criterion, Throughput, criterion_group, criterion_main};
use serde::Deserialize;
use std::sync::{Arc, RwLock};
use std::time::{Duration, Instant};
use surface::mcp::{BundleClient, McpServer, Member, ServedMcp, Siblings};
use surface_bench::bundles::{thousand_tools, tools_of};
use surface_bench::hand::{self, Hand};
use surface_bench::ops::{self, Ops, Process};
use surface_bench::wide::{WIDE, Wide, WideClient};
use surface_bench::wire::{Wire, open_handler, open_surface};
use tokio::runtime::Runtime;

/// The runtime of the request/answer benchmarks: one thread runs the client and the server's
/// tasks, so a figure is the CPU cost of a call, not the luck of cross-thread wake-ups.
fn runtime() -> Runtime {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap()
}

/// The runtime of the fan-out benchmark: what `#[tokio::main]` gives a user (a worker per
/// core), so watch tasks run beside the thread that writes.
fn multi_thread() -> Runtime {
    tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .unwrap()
}

const SAMPLE: &str = r#"{"name":"load_sample","arguments":{}}"#;

#[derive(Deserialize)]
struct Spawned {
    result: SpawnedResult,
}
#[derive(Deserialize)]
struct SpawnedResult {
    #[serde(rename = "structuredContent")]
    structured: Pid,
}
#[derive(Deserialize)]
struct Pid {
    pid: u32,
}

async fn spawn_kill(wire: &mut Wire, i: u64) {
    let line = wire
        .call(
            "tools/call",
            &format!(r#"{{"name":"proc_spawn","arguments":{{"name":"w{i}"}}}}"#),
        )
        .await;
    let pid = serde_json::from_str::<Spawned>(line)
        .expect("a spawn answer")
        .result
        .structured
        .pid;
    wire.call(
        "tools/call",
        &format!(r#"{{"name":"proc_kill","arguments":{{"pid":{pid}}}}}"#),
    )
    .await;
}

async fn pipelined(wire: &mut Wire, n: usize) {
    for _ in 0..n {
        wire.send("tools/call", SAMPLE).await;
    }
    for _ in 0..n {
        wire.answer().await;
        debug_assert!(!wire.line.contains("\"isError\":true"));
    }
}

fn ops_server(ops: Arc<Ops>) -> ServedMcp {
    ops::mcp_server(ops).start().expect("ops composes")
}

/// One tools/call: the `#[surface]` layer vs a hand-written handler calling the same methods.
fn calls(c: &mut Criterion) {
    let rt = runtime();
    let (mut s, _sc) = rt.block_on(open_surface(&ops_server(Arc::new(Ops::new()))));
    let (mut h, _hc) = rt.block_on(open_handler(Hand::new(Arc::new(Ops::new()))));
    let mut g = c.benchmark_group("call");
    for (name, wire) in [("surface", &mut s), ("hand", &mut h)] {
        g.throughput(Throughput::Elements(1));
        g.bench_function(BenchmarkId::new("load_sample", name), |b| {
            b.iter_custom(|iters| {
                rt.block_on(async {
                    let t = Instant::now();
                    for _ in 0..iters {
                        wire.call("tools/call", SAMPLE).await;
                    }
                    t.elapsed()
                })
            })
        });
        g.throughput(Throughput::Elements(2));
        g.bench_function(BenchmarkId::new("spawn_kill", name), |b| {
            b.iter_custom(|iters| {
                rt.block_on(async {
                    let t = Instant::now();
                    for i in 0..iters {
                        spawn_kill(wire, i).await;
                    }
                    t.elapsed()
                })
            })
        });
        g.throughput(Throughput::Elements(1000));
        g.bench_function(BenchmarkId::new("pipelined_1000", name), |b| {
            b.iter_custom(|iters| {
                rt.block_on(async {
                    let t = Instant::now();
                    for _ in 0..iters {
                        pipelined(wire, 1000).await;
                    }
                    t.elapsed()
                })
            })
        });
    }
    g.finish();
}

/// tools/list of 1,000 tools: surface's precomputed generation vs a hand-written handler
/// answering a list built once, vs one rebuilding every tool and schema per request.
fn tools_list(c: &mut Criterion) {
    let rt = runtime();
    let ops = Arc::new(Ops::new());
    let (mut s, _sc) = rt.block_on(open_surface(&thousand_tools(ops.clone())));
    let listed = rt.block_on(s.call("tools/list", "{}")).to_owned();
    let tools = tools_of(&listed);
    assert_eq!(tools.len(), 1000, "1,000 tools exposed");
    let precomputed = Hand {
        tools: Arc::new(tools),
        ..Hand::new(ops.clone())
    };
    let recomputed = Hand {
        recompute: Some(250),
        ..Hand::new(ops.clone())
    };
    assert_eq!(hand::build_tools(250).len(), 1000);
    let (mut p, _pc) = rt.block_on(open_handler(precomputed));
    let (mut r, _rc) = rt.block_on(open_handler(recomputed));
    let mut g = c.benchmark_group("tools_list_1000");
    for (name, wire) in [
        ("surface", &mut s),
        ("hand_precomputed", &mut p),
        ("hand_recomputed", &mut r),
    ] {
        g.bench_function(name, |b| {
            b.iter_custom(|iters| {
                rt.block_on(async {
                    let t = Instant::now();
                    for _ in 0..iters {
                        wire.call("tools/list", "{}").await;
                    }
                    t.elapsed()
                })
            })
        });
    }
    g.finish();
}

/// resources/read of a 10,000-item collection (its keys) and of one item.
fn resources_read(c: &mut Criterion) {
    let rt = runtime();
    let ops = Arc::new(Ops::new());
    for pid in 3..10_001u32 {
        ops.processes.upsert(
            pid,
            Process {
                pid,
                name: format!("p{pid}"),
                state: "running".into(),
            },
        );
    }
    assert_eq!(ops.processes.len(), 10_000);
    let (mut s, _sc) = rt.block_on(open_surface(&ops_server(ops.clone())));
    let (mut h, _hc) = rt.block_on(open_handler(Hand::new(ops.clone())));
    let mut g = c.benchmark_group("resources_read_10000");
    for (name, wire) in [("surface", &mut s), ("hand", &mut h)] {
        for (what, uri) in [
            ("collection", "surface://collections/processes"),
            ("item", "surface://collections/processes/5000"),
        ] {
            let params = format!(r#"{{"uri":"{uri}"}}"#);
            g.bench_function(BenchmarkId::new(what, name), |b| {
                b.iter_custom(|iters| {
                    rt.block_on(async {
                        let t = Instant::now();
                        for _ in 0..iters {
                            wire.call("resources/read", &params).await;
                        }
                        t.elapsed()
                    })
                })
            });
        }
    }
    g.finish();
}

fn wide_roster(n: usize) -> Siblings {
    (0..n).map(|i| (format!("t{i}"), Member::new(WIDE))).collect()
}

/// reroster of N siblings × 20 members, with one connected session that subscribed to ten
/// sibling resources (so survivors are re-watched and the host is told both lists changed).
fn reroster(c: &mut Criterion) {
    let rt = runtime();
    let mut g = c.benchmark_group("reroster_x20");
    for n in [25usize, 50, 100, 200] {
        let client = WideClient::direct(Arc::new(Wide::default()));
        let roster: Arc<RwLock<usize>> = Arc::new(RwLock::new(n));
        let factory_roster = roster.clone();
        let served = McpServer::new("wide", "0.1.0")
            .core(Member::new(WIDE))
            .siblings(wide_roster(n))
            .client(move || {
                let n = *factory_roster.read().unwrap();
                (0..n).fold(BundleClient::with_core(client.clone()), |b, i| {
                    b.sibling(format!("t{i}"), client.clone())
                })
            })
            .start()
            .expect("the wide bundle composes");
        let (mut wire, _conn) = rt.block_on(open_surface(&served));
        rt.block_on(async {
            for i in 0..10 {
                let uri = format!("surface://cells/t{i}/c0");
                wire.call("resources/subscribe", &format!(r#"{{"uri":"{uri}"}}"#))
                    .await;
            }
        });
        // Drain the list_changed notifications every reroster sends.
        let drain = rt.spawn(wire.drain());
        g.throughput(Throughput::Elements(n as u64));
        g.bench_function(BenchmarkId::from_parameter(n), |b| {
            b.iter_custom(|iters| {
                let rosters: Vec<Siblings> = (0..iters).map(|_| wide_roster(n)).collect();
                rt.block_on(async {
                    let t = Instant::now();
                    for r in rosters {
                        served.reroster(r).await.expect("the roster composes");
                    }
                    t.elapsed()
                })
            })
        });
        served.close();
        let _ = rt.block_on(async { tokio::time::timeout(Duration::from_secs(5), drain).await });
    }
    g.finish();
}

/// 10,000 updates to a collection while 100 of its item URIs are subscribed (each watched by a
/// debounced task), against the same updates with nobody subscribed.
fn fanout(c: &mut Criterion) {
    let mut g = c.benchmark_group("fanout_10000");
    g.throughput(Throughput::Elements(10_000));
    for subscribed in [0usize, 100] {
        let rt = multi_thread();
        let ops = Arc::new(Ops::new());
        let served = ops_server(ops.clone());
        let (mut wire, _conn) = rt.block_on(open_surface(&served));
        rt.block_on(async {
            for k in 0..subscribed {
                let uri = format!("surface://collections/processes/{}", 1000 + k);
                wire.call("resources/subscribe", &format!(r#"{{"uri":"{uri}"}}"#))
                    .await;
            }
        });
        let drain = rt.spawn(wire.drain());
        let process = |pid: u32, i: u64| Process {
            pid,
            name: "worker".into(),
            state: if i.is_multiple_of(2) {
                "running"
            } else {
                "sleeping"
            }
            .into(),
        };
        g.bench_function(BenchmarkId::new("subscribed", subscribed), |b| {
            b.iter_custom(|iters| {
                let t = Instant::now();
                for it in 0..iters {
                    for i in 0..10_000u64 {
                        let pid = 1000 + (i % 100) as u32;
                        ops.processes.upsert(pid, process(pid, i + it));
                    }
                }
                t.elapsed()
            })
        });
        served.close();
        let _ = rt.block_on(async { tokio::time::timeout(Duration::from_secs(5), drain).await });
    }
    g.finish();
}

fn config() -> Criterion {
    let secs = |var: &str, default: u64| {
        Duration::from_millis(
            std::env::var(var)
                .ok()
                .and_then(|v| v.parse::<f64>().ok())
                .map_or(default * 1000, |s| (s * 1000.0) as u64),
        )
    };
    Criterion::default()
        .measurement_time(secs("BENCH_MEASURE_SECS", 3))
        .warm_up_time(secs("BENCH_WARMUP_SECS", 1))
        .sample_size(20)
        .without_plots()
}

criterion_group! {
    name = benches;
    config = config();
    targets = calls, tools_list, resources_read, reroster, fanout
}
criterion_main!(benches);
