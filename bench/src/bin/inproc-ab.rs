//! The per-call overhead of the surface layer, side by side: the ops surface served by
//! `surface` and a hand-written rmcp `ServerHandler` calling the same `Ops` methods, both on one
//! current-thread runtime and driven by the same raw JSON-RPC client over an in-process duplex,
//! measured in alternating batches (the order flips every round); the figure is the median of
//! the per-round ratios.
//!
//! `inproc-ab --rounds 30 --batch 2000 --out results.json`
//!
//! `inproc-ab --only surface --calls 5000 --workload sequential,pipelined,spawn_kill` runs just
//! that many calls of those workloads on one side and exits: run it under
//! `valgrind --tool=callgrind` (and once with `--calls 0`) to get instructions per call, which do
//! not depend on what else the machine is doing (`--workload tools_list --calls 20` for lists).

use std::sync::Arc;
use std::time::Instant;
use surface_bench::bundles::{thousand_tools, tools_of};
use surface_bench::hand::Hand;
use surface_bench::ops::{self, Ops};
use surface_bench::wire::{Wire, open_handler, open_surface};

const SAMPLE: &str = r#"{"name":"load_sample","arguments":{}}"#;

#[derive(Clone, Copy, PartialEq)]
enum Load {
    Sequential,
    Pipelined,
    SpawnKill,
    /// `tools/list` of 1,000 tools: surface's generation vs a hand-written list built once.
    ToolsList,
}

impl Load {
    const ALL: [Load; 4] = [
        Load::Sequential,
        Load::Pipelined,
        Load::SpawnKill,
        Load::ToolsList,
    ];
    /// Calls per batch relative to `--batch` (a 1,000-tool list is ~80× a call).
    fn per_batch(self, batch: usize) -> usize {
        if self == Load::ToolsList {
            (batch / 100).max(1)
        } else {
            batch
        }
    }
    fn word(self) -> &'static str {
        match self {
            Load::Sequential => "load_sample, one at a time",
            Load::Pipelined => "load_sample, 1,000 in flight",
            Load::SpawnKill => "proc_spawn + proc_kill, one at a time",
            Load::ToolsList => "tools/list of 1,000 tools (µs per list)",
        }
    }
    fn key(self) -> &'static str {
        match self {
            Load::Sequential => "sequential",
            Load::Pipelined => "pipelined",
            Load::SpawnKill => "spawn_kill",
            Load::ToolsList => "tools_list",
        }
    }
}

fn pid_of(line: &str) -> u32 {
    let v: serde_json::Value = serde_json::from_str(line).expect("JSON");
    v["result"]["structuredContent"]["pid"].as_u64().expect("a pid") as u32
}

/// Runs `calls` calls of `load` (a spawn/kill pair counts two).
async fn drive(wire: &mut Wire, load: Load, calls: usize) {
    match load {
        Load::Sequential => {
            for _ in 0..calls {
                wire.call("tools/call", SAMPLE).await;
            }
        }
        Load::Pipelined => {
            let mut left = calls;
            while left > 0 {
                let n = left.min(1000);
                for _ in 0..n {
                    wire.send("tools/call", SAMPLE).await;
                }
                for _ in 0..n {
                    wire.answer().await;
                }
                left -= n;
            }
        }
        Load::ToolsList => {
            for _ in 0..calls {
                wire.call("tools/list", "{}").await;
            }
        }
        Load::SpawnKill => {
            for i in 0..calls / 2 {
                let line = wire
                    .call(
                        "tools/call",
                        &format!(r#"{{"name":"proc_spawn","arguments":{{"name":"w{i}"}}}}"#),
                    )
                    .await;
                let pid = pid_of(line);
                wire.call(
                    "tools/call",
                    &format!(r#"{{"name":"proc_kill","arguments":{{"pid":{pid}}}}}"#),
                )
                .await;
            }
        }
    }
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(|a, b| a.partial_cmp(b).unwrap());
    let m = v.len() / 2;
    if v.len() % 2 == 1 {
        v[m]
    } else {
        (v[m - 1] + v[m]) / 2.0
    }
}

fn main() {
    let mut rounds = 30usize;
    let mut batch = 2000usize;
    let mut only: Option<String> = None;
    let mut calls = 5000usize;
    let mut out: Option<String> = None;
    let mut only_load: Option<String> = None;
    let mut args = std::env::args().skip(1);
    while let Some(a) = args.next() {
        let v = args.next().unwrap_or_else(|| panic!("{a} needs a value"));
        match a.as_str() {
            "--rounds" => rounds = v.parse().unwrap(),
            "--batch" => batch = v.parse().unwrap(),
            "--only" => only = Some(v),
            "--calls" => calls = v.parse().unwrap(),
            "--out" => out = Some(v),
            "--workload" => only_load = Some(v),
            other => panic!("unknown argument {other:?}"),
        }
    }
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let served = ops::mcp_server(Arc::new(Ops::new()))
        .start()
        .expect("ops composes");
    let (mut s, _sc) = rt.block_on(open_surface(&served));
    let (mut h, _hc) = rt.block_on(open_handler(Hand::new(Arc::new(Ops::new()))));
    // The 1,000-tool pair: the hand-written handler answers the very tools surface lists.
    let list_ops = Arc::new(Ops::new());
    let (mut sl, _slc) = rt.block_on(open_surface(&thousand_tools(list_ops.clone())));
    let tools = tools_of(rt.block_on(sl.call("tools/list", "{}")));
    assert_eq!(tools.len(), 1000, "1,000 tools exposed");
    let (mut hl, _hlc) = rt.block_on(open_handler(Hand {
        tools: Arc::new(tools),
        ..Hand::new(list_ops)
    }));
    let loads: Vec<Load> = Load::ALL
        .into_iter()
        .filter(|l| {
            only_load
                .as_deref()
                .is_none_or(|k| k.split(',').any(|k| k == l.key()))
        })
        .collect();

    if let Some(side) = only {
        rt.block_on(async {
            for &load in &loads {
                let wire = match (side.as_str(), load) {
                    ("surface", Load::ToolsList) => &mut sl,
                    ("surface", _) => &mut s,
                    ("hand", Load::ToolsList) => &mut hl,
                    ("hand", _) => &mut h,
                    (other, _) => panic!("--only surface|hand, not {other:?}"),
                };
                drive(wire, load, calls).await;
            }
        });
        return;
    }

    // Warm both up.
    rt.block_on(async {
        for &load in &loads {
            let n = load.per_batch(batch) / 4 + 1;
            if load == Load::ToolsList {
                drive(&mut sl, load, n).await;
                drive(&mut hl, load, n).await;
            } else {
                drive(&mut s, load, n).await;
                drive(&mut h, load, n).await;
            }
        }
    });
    let mut table = String::new();
    use std::fmt::Write as _;
    let _ = writeln!(
        table,
        "in-process tools/call, surface vs a hand-written ServerHandler: {rounds} alternating rounds of {batch} calls, median of per-round ratios\n"
    );
    let _ = writeln!(
        table,
        "| workload | surface µs/call | hand µs/call | surface ÷ hand | overhead |"
    );
    let _ = writeln!(table, "|---|---:|---:|---:|---:|");
    let mut json = serde_json::Map::new();
    for &load in &loads {
        let (mut ts, mut th, mut ratios) = (Vec::new(), Vec::new(), Vec::new());
        let batch = load.per_batch(batch);
        for round in 0..rounds {
            let time = |wire: &mut Wire| {
                rt.block_on(async {
                    let t = Instant::now();
                    drive(wire, load, batch).await;
                    t.elapsed().as_secs_f64() * 1e6 / batch as f64
                })
            };
            let (sw, hw) = if load == Load::ToolsList {
                (&mut sl, &mut hl)
            } else {
                (&mut s, &mut h)
            };
            let (a, b) = if round % 2 == 0 {
                let a = time(sw);
                (a, time(hw))
            } else {
                let b = time(hw);
                (time(sw), b)
            };
            ts.push(a);
            th.push(b);
            ratios.push(a / b);
        }
        let r = median(ratios.clone());
        let _ = writeln!(
            table,
            "| {} | {:.2} | {:.2} | {:.3} | {:+.1}% |",
            load.word(),
            median(ts.clone()),
            median(th.clone()),
            r,
            (r - 1.0) * 100.0
        );
        json.insert(
            load.key().into(),
            serde_json::json!({"surface_us": median(ts), "hand_us": median(th), "ratio": r, "ratios": ratios}),
        );
    }
    print!("{table}");
    if let Some(path) = out {
        json.insert("table".into(), table.into());
        json.insert("rounds".into(), rounds.into());
        json.insert("batch".into(), batch.into());
        std::fs::write(path, serde_json::to_string_pretty(&json).unwrap()).unwrap();
    }
}
