//! Gathers one `bench/run`'s results into one report: every table, then each target of the
//! benchmarks issue with the ratio measured in this run and whether it is met.
//!
//! `report --results bench/.cache/results/<run> --criterion bench/target/criterion --cg-calls 5000`

use serde_json::Value;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};

fn load(path: &Path) -> Option<Value> {
    serde_json::from_str(&std::fs::read_to_string(path).ok()?).ok()
}

/// Criterion's median estimate for one benchmark, in ns.
fn crit(dir: &Path, id: &str) -> Option<f64> {
    load(&dir.join(id).join("new/estimates.json"))?["median"]["point_estimate"].as_f64()
}

/// Total instructions of a callgrind output file.
fn callgrind_total(path: &Path) -> Option<f64> {
    let text = std::fs::read_to_string(path).ok()?;
    text.lines()
        .find_map(|l| l.strip_prefix("summary:").or_else(|| l.strip_prefix("totals:")))
        .and_then(|v| v.split_whitespace().next()?.parse().ok())
}

struct Verdicts(String);

impl Verdicts {
    fn add(&mut self, target: &str, measured: String, met: Option<bool>) {
        let verdict = match met {
            Some(true) => "met",
            Some(false) => "**missed**",
            None => "not measured",
        };
        let _ = writeln!(self.0, "| {target} | {measured} | {verdict} |");
    }
}

fn num(v: &Value) -> Option<f64> {
    v.as_f64().filter(|x| x.is_finite())
}

fn main() {
    let mut results = PathBuf::from(".");
    let mut criterion = PathBuf::from("target/criterion");
    let mut cg_calls = 0f64;
    let mut args = std::env::args().skip(1);
    while let Some(a) = args.next() {
        let v = args.next().unwrap_or_else(|| panic!("{a} needs a value"));
        match a.as_str() {
            "--results" => results = v.into(),
            "--criterion" => criterion = v.into(),
            "--cg-calls" => cg_calls = v.parse().unwrap(),
            other => panic!("unknown argument {other:?}"),
        }
    }
    let mut out = String::new();
    let mut v = Verdicts(String::from(
        "| target | measured in this run | |\n|---|---|---|\n",
    ));
    let fmt = |x: Option<f64>, d: usize| x.map_or("n/a".to_owned(), |x| format!("{x:.d$}"));

    // 1. stdio.
    let stdio = load(&results.join("stdio.json"));
    if let Some(s) = &stdio {
        let _ = writeln!(
            out,
            "## stdio load ({} rounds)\n\n{}",
            s["rounds"],
            s["table"].as_str().unwrap_or("")
        );
        let sp = &s["subject_speedup"];
        let pair = |server: &str| (num(&sp[server]["sample"]), num(&sp[server]["pairs"]));
        let both = |server: &str, at_least: f64| {
            let (a, b) = pair(server);
            let met = a.zip(b).map(|(a, b)| a >= at_least && b >= at_least);
            (
                format!("{} (load_sample) / {} (spawn/kill pairs)", fmt(a, 2), fmt(b, 2)),
                met,
            )
        };
        let (m, ok) = both("rmcp-tuned", 2.0);
        v.add(
            "stdio throughput ≥ 2.0× tuned rmcp (`stdio_pipes()`, router built once)",
            m,
            ok,
        );
        // The same binary with mimalloc as its global allocator: no target, what it buys.
        let sm = |wl: &str| num(&s["summary"]["surface-mimalloc"][wl]["vs_baseline"]);
        if sm("sample").is_some() {
            v.add(
                "… with mimalloc as the binary's allocator (for reference; the library sets none)",
                format!(
                    "{} (load_sample) / {} (spawn/kill pairs) × tuned rmcp",
                    fmt(sm("sample"), 2),
                    fmt(sm("pairs"), 2)
                ),
                None,
            );
        }
        let (m, ok) = both("rmcp-macro", 3.0);
        v.add(
            "stdio throughput ≥ 3× rmcp's macros as shipped (`stdio()`)",
            m,
            ok,
        );
        let (m, ok) = both("ts-sdk", 5.0);
        v.add("stdio throughput ≥ 5× the TypeScript SDK (`McpServer`)", m, ok);
        let (m, ok) = both("fastmcp", 10.0);
        v.add("stdio throughput ≥ 10× FastMCP", m, ok);
        let p = &s["p99_vs_baseline"];
        let (a, b, c) = (num(&p["sample"]), num(&p["pairs"]), num(&p["latency"]));
        v.add(
            "p99 latency ≤ 0.5× tuned rmcp's (surface p99 ÷ tuned p99)",
            format!(
                "{} pipelined load_sample / {} pipelined pairs / {} one at a time",
                fmt(a, 2),
                fmt(b, 2),
                fmt(c, 2)
            ),
            a.zip(b)
                .zip(c)
                .map(|((a, b), c)| a <= 0.5 && b <= 0.5 && c <= 0.5),
        );
        let rss = |server: &str, wl: &str| num(&s["summary"][server][wl]["peak_rss_mib"]);
        // Peak RSS less the binary's mapped code: what the server allocated (heap, stacks).
        let heap = |server: &str, wl: &str| {
            rss(server, wl)
                .zip(num(&s["summary"][server][wl]["file_rss_mib"]))
                .map(|(r, c)| r - c)
        };
        let (ra, rb) = (
            rss("surface", "sample").zip(rss("rmcp-tuned", "sample")),
            rss("surface", "pairs").zip(rss("rmcp-tuned", "pairs")),
        );
        v.add(
            "stdio peak RSS ≤ tuned rmcp's",
            format!(
                "{} / {} MiB (load_sample), {} / {} MiB (spawn/kill pairs); less the binary's code: {} / {}, {} / {} MiB",
                fmt(ra.map(|r| r.0), 1),
                fmt(ra.map(|r| r.1), 1),
                fmt(rb.map(|r| r.0), 1),
                fmt(rb.map(|r| r.1), 1),
                fmt(heap("surface", "sample"), 1),
                fmt(heap("rmcp-tuned", "sample"), 1),
                fmt(heap("surface", "pairs"), 1),
                fmt(heap("rmcp-tuned", "pairs"), 1)
            ),
            ra.zip(rb).map(|(a, b)| a.0 <= a.1 && b.0 <= b.1),
        );
    }

    let cgt = std::fs::read_to_string(results.join("stdio-callgrind.tsv")).unwrap_or_default();
    let ir = |server: &str, wl: &str| {
        cgt.lines().find_map(|l| {
            let f: Vec<&str> = l.split('\t').collect();
            (f.len() == 3 && f[0] == server && f[1] == wl)
                .then(|| f[2].parse::<f64>().ok())
                .flatten()
        })
    };
    if !cgt.is_empty() {
        let _ = writeln!(
            out,
            "stdio instructions per call (callgrind, whole server process, startup subtracted; deterministic, unlike the times above):\n\n| server | load_sample | × rmcp-tuned (same era) | spawn/kill | × rmcp-tuned (same era) |\n|---|---:|---:|---:|---:|"
        );
        // Each server against tuned rmcp in its own era (`@2026`: the 2026-07-28 era).
        for server in [
            "surface",
            "surface-mimalloc",
            "rmcp-tuned",
            "rmcp-macro",
            "proto-fast",
            "floor",
            "floor-typed",
            "surface@2026",
            "rmcp-tuned@2026",
        ] {
            let baseline = if server.ends_with("@2026") {
                "rmcp-tuned@2026"
            } else {
                "rmcp-tuned"
            };
            let (a, b) = (ir(server, "sample"), ir(server, "pairs"));
            let (ta, tb) = (ir(baseline, "sample"), ir(baseline, "pairs"));
            let _ = writeln!(
                out,
                "| {server} | {} | {} | {} | {} |",
                fmt(a, 0),
                fmt(a.zip(ta).map(|(a, t)| a / t), 3),
                fmt(b, 0),
                fmt(b.zip(tb).map(|(b, t)| b / t), 3)
            );
        }
        let _ = writeln!(out);
        let (a, b) = (
            ir("surface", "sample")
                .zip(ir("rmcp-tuned", "sample"))
                .map(|(s, t)| t / s),
            ir("surface", "pairs")
                .zip(ir("rmcp-tuned", "pairs"))
                .map(|(s, t)| t / s),
        );
        v.add(
            "… the same, as work: tuned rmcp's instructions per call ÷ surface's (≥ 1.0 is no more work)",
            format!("{} (load_sample) / {} (spawn/kill pairs)", fmt(a, 3), fmt(b, 3)),
            a.zip(b).map(|(a, b)| a >= 1.0 && b >= 1.0),
        );
    }

    // 2. In-process.
    let ab = load(&results.join("inproc-ab.json"));
    if let Some(ab) = &ab {
        let _ = writeln!(
            out,
            "## in-process tools/call\n\n{}",
            ab["table"].as_str().unwrap_or("")
        );
    }
    let cg = |side: &str| {
        let n = callgrind_total(&results.join(format!("callgrind-{side}-n.out")))?;
        let z = callgrind_total(&results.join(format!("callgrind-{side}-0.out")))?;
        (cg_calls > 0.0).then(|| (n - z) / (3.0 * cg_calls))
    };
    let (cgs, cgh) = (cg("surface"), cg("hand"));
    let cg_list = |side: &str| {
        let n = callgrind_total(&results.join(format!("callgrind-{side}-list-n.out")))?;
        let z = callgrind_total(&results.join(format!("callgrind-{side}-list-0.out")))?;
        Some((n - z) / 20.0)
    };
    let (cls, clh) = (cg_list("surface"), cg_list("hand"));
    if let (Some(s), Some(h)) = (cls, clh) {
        let _ = writeln!(
            out,
            "instructions per tools/list of 1,000 tools (callgrind): surface {s:.0}, hand-written list built once {h:.0}, ratio {:.3}\n",
            s / h
        );
    }
    if let (Some(s), Some(h)) = (cgs, cgh) {
        let _ = writeln!(
            out,
            "instructions per tools/call (callgrind, the same three workloads, client and rmcp included): surface {s:.0}, hand-written {h:.0}, ratio {:.3}\n",
            s / h
        );
    }
    let c = |id: &str| crit(&criterion, id);
    let ratio = |a: &str, b: &str| c(a).zip(c(b)).map(|(a, b)| a / b);
    let mut crit_table = String::from(
        "| benchmark (criterion medians) | surface | baseline | surface ÷ baseline |\n|---|---:|---:|---:|\n",
    );
    let us = |x: Option<f64>| x.map_or("n/a".to_owned(), |x| format!("{:.1} µs", x / 1000.0));
    for (name, a, b) in [
        (
            "tools/call load_sample, one at a time vs hand-written",
            "call/load_sample/surface",
            "call/load_sample/hand",
        ),
        (
            "tools/call spawn + kill, one at a time vs hand-written",
            "call/spawn_kill/surface",
            "call/spawn_kill/hand",
        ),
        (
            "1,000 pipelined load_sample vs hand-written",
            "call/pipelined_1000/surface",
            "call/pipelined_1000/hand",
        ),
        (
            "tools/list of 1,000 tools vs a list built once",
            "tools_list_1000/surface",
            "tools_list_1000/hand_precomputed",
        ),
        (
            "tools/list of 1,000 tools vs rebuilding tools + schemas per request",
            "tools_list_1000/surface",
            "tools_list_1000/hand_recomputed",
        ),
        (
            "resources/read of the 10,000-item collection vs hand-written",
            "resources_read_10000/collection/surface",
            "resources_read_10000/collection/hand",
        ),
        (
            "resources/read of one item of it vs hand-written",
            "resources_read_10000/item/surface",
            "resources_read_10000/item/hand",
        ),
        (
            "10,000 upserts with 100 URIs subscribed vs none",
            "fanout_10000/subscribed/100",
            "fanout_10000/subscribed/0",
        ),
    ] {
        let _ = writeln!(
            crit_table,
            "| {name} | {} | {} | {} |",
            us(c(a)),
            us(c(b)),
            fmt(ratio(a, b), 2)
        );
    }
    let _ = writeln!(
        crit_table,
        "\n| reroster, siblings × 20 members | median | per sibling |\n|---:|---:|---:|"
    );
    let sizes = [25u32, 50, 100, 200];
    let per: Vec<Option<f64>> = sizes
        .iter()
        .map(|n| c(&format!("reroster_x20/{n}")).map(|t| t / *n as f64))
        .collect();
    for (n, p) in sizes.iter().zip(&per) {
        let _ = writeln!(
            crit_table,
            "| {n} | {} | {} |",
            us(c(&format!("reroster_x20/{n}"))),
            us(*p)
        );
    }
    let _ = writeln!(out, "## in-process (criterion)\n\n{crit_table}");

    let overhead = ab
        .as_ref()
        .map(|ab| ["sequential", "pipelined", "spawn_kill"].map(|k| num(&ab[k]["ratio"])));
    match overhead {
        Some([Some(a), Some(b), Some(c2)]) => v.add(
            "in-process per-call overhead over a hand-written ServerHandler ≤ 10%",
            format!(
                "{:+.1}% one at a time / {:+.1}% pipelined / {:+.1}% spawn+kill (alternating rounds){}",
                (a - 1.0) * 100.0,
                (b - 1.0) * 100.0,
                (c2 - 1.0) * 100.0,
                match (cgs, cgh) {
                    (Some(s), Some(h)) =>
                        format!("; {:+.1}% instructions (callgrind)", (s / h - 1.0) * 100.0),
                    _ => String::new(),
                }
            ),
            Some(a <= 1.10 && b <= 1.10 && c2 <= 1.10),
        ),
        _ => v.add(
            "in-process per-call overhead over a hand-written ServerHandler ≤ 10%",
            "n/a".into(),
            None,
        ),
    }
    let tl = ratio("tools_list_1000/surface", "tools_list_1000/hand_precomputed");
    let tr = ratio("tools_list_1000/hand_recomputed", "tools_list_1000/surface");
    let tab = ab.as_ref().and_then(|ab| num(&ab["tools_list"]["ratio"]));
    let tcg = cls.zip(clh).map(|(s, h)| s / h);
    v.add(
        "tools/list of 1,000 tools served from the precomputed generation (no per-request schema work)",
        format!(
            "{}× a hand-written list built once (alternating rounds; {} in instructions; criterion, sequential: {}); rebuilding tools + schemas per request would be {}× slower",
            fmt(tab, 2),
            fmt(tcg, 3),
            fmt(tl, 2),
            fmt(tr, 2)
        ),
        tab.or(tl).map(|r| r <= 1.10),
    );
    let lin = per[0].zip(per[3]).map(|(a, b)| b / a);
    v.add(
        "reroster scales linearly (per-sibling time at 200 ÷ at 25 siblings, × 20 members)",
        format!("{} (1.00 = perfectly linear)", fmt(lin, 2)),
        lin.map(|r| r <= 1.5),
    );

    // 3. Fan-out.
    if let Some(f) = load(&results.join("fanout.json")) {
        let _ = writeln!(out, "## fan-out\n\n{}", f["table"].as_str().unwrap_or(""));
        let rss = &f["rss_kib"]["watched"];
        let growth = num(&rss[1]).zip(num(&rss[0])).map(|(b, a)| (b - a) / 1024.0);
        let bounded = num(&f["most_per_uri"])
            .zip(num(&f["windows_allowed"]))
            .map(|(m, w)| m <= w);
        v.add(
            "fan-out of 10,000 updates to subscribed URIs: debounced, bounded memory",
            format!(
                "{} notifications for {} updates (≤ {} per URI allowed, most {}); RSS grew {} MiB from the first to the last burst; writer {}× slower with 100 watchers",
                f["notifications"],
                num(&f["updates"]).zip(num(&f["bursts"])).map_or(0.0, |(u, b)| u * b),
                f["windows_allowed"],
                f["most_per_uri"],
                fmt(growth, 2),
                fmt(num(&f["slowdown"]), 2)
            ),
            bounded.zip(growth).map(|(b, g)| b && g < 4.0),
        );
    }

    // 4. Compile time.
    if let Some(ct) = load(&results.join("compile.json")) {
        let _ = writeln!(out, "## compile time\n\n{}", ct["table"].as_str().unwrap_or(""));
        let slopes = ct["slopes"].as_object().cloned().unwrap_or_default();
        let last_two: Vec<(String, Value)> = slopes.into_iter().collect();
        // Linear: the marginal cost per procedure does not grow between the two largest steps.
        let sorted_sizes: Vec<u64> = ct["sizes"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(Value::as_u64)
            .collect();
        let key = |a: u64, b: u64| format!("{a}-{b}");
        let growth = if sorted_sizes.len() >= 3 {
            let n = sorted_sizes.len();
            let lo = key(sorted_sizes[n - 3], sorted_sizes[n - 2]);
            let hi = key(sorted_sizes[n - 2], sorted_sizes[n - 1]);
            let get = |k: &str, f: &str| {
                last_two
                    .iter()
                    .find(|(x, _)| x == k)
                    .and_then(|(_, v)| num(&v[f]))
            };
            Some((
                get(&hi, "surface_ms_per_proc")
                    .zip(get(&lo, "surface_ms_per_proc"))
                    .map(|(h, l)| h / l),
                get(&hi, "rmcp_ms_per_proc")
                    .zip(get(&lo, "rmcp_ms_per_proc"))
                    .map(|(h, l)| h / l),
                format!("{lo} → {hi}"),
            ))
        } else {
            None
        };
        let seconds = &ct["seconds"];
        let biggest = sorted_sizes.last().copied().unwrap_or(0);
        let r = seconds[format!("gen-surface-{biggest}")]
            .as_array()
            .zip(seconds[format!("gen-rmcp-{biggest}")].as_array())
            .map(|(s, r)| {
                let mut v: Vec<f64> = s
                    .iter()
                    .zip(r)
                    .filter_map(|(a, b)| Some(a.as_f64()? / b.as_f64()?))
                    .collect();
                v.sort_by(|a, b| a.partial_cmp(b).unwrap());
                v[v.len() / 2]
            });
        match growth {
            Some((s, rm, span)) => v.add(
                "compile time scales linearly with procedures",
                format!(
                    "marginal ms per procedure grows {}× for `#[surface]` ({}× for `#[tool_router]`) from step {span}; at {biggest} procedures surface ÷ rmcp = {}",
                    fmt(s, 2),
                    fmt(rm, 2),
                    fmt(r, 2)
                ),
                s.map(|g| g <= 1.5),
            ),
            None => v.add(
                "compile time scales linearly with procedures",
                format!("too few sizes in this run; at {biggest} procedures surface ÷ rmcp = {}", fmt(r, 2)),
                None,
            ),
        }
    }

    // 5. Streamable HTTP and fan-out over it: their harnesses state their own verdicts.
    for file in ["http.json", "fanout-http.json"] {
        let Some(doc) = load(&results.join(file)) else {
            continue;
        };
        let _ = writeln!(
            out,
            "## {}\n\n{}",
            doc["title"].as_str().unwrap_or(file),
            doc["table"].as_str().unwrap_or("")
        );
        for verdict in doc["verdicts"].as_array().into_iter().flatten() {
            v.add(
                verdict["target"].as_str().unwrap_or("?"),
                verdict["measured"].as_str().unwrap_or("").to_owned(),
                verdict["met"].as_bool(),
            );
        }
    }

    // 6. The bridge: in-process serving ÷ the bridge, both on stdio, in the same rounds.
    if let Some(b) = load(&results.join("bridge.json")) {
        let _ = writeln!(
            out,
            "## bridge (`--bridge` over the unix socket vs in-process, stdio, {} rounds)\n\n{}",
            b["rounds"],
            b["table"].as_str().unwrap_or("")
        );
        let sp = &b["subject_speedup"]["bridge"];
        let (a, c) = (num(&sp["sample"]), num(&sp["pairs"]));
        let p = &b["p99_vs_baseline"];
        // p99_vs_baseline is in-process ÷ bridge; the bridge's cost is its inverse.
        let inv = |x: Option<f64>| x.filter(|x| *x > 0.0).map(|x| 1.0 / x);
        // The floor beside it: the bare loop bridged through the same daemon (`floor-bridge`),
        // against the bare loop in process and against surface in process.
        let cps = |server: &str, workload: &str| num(&b["summary"][server][workload]["calls_per_s"]);
        let floor = |workload: &str| {
            cps("floor", workload)
                .zip(cps("floor-bridge", workload))
                .map(|(f, fb)| f / fb)
        };
        let bare = &b["subject_speedup"]["floor-bridge"];
        v.add(
            "bridge: the wire face costs ≤ 1.5× in throughput (in-process calls/s ÷ bridged)",
            format!(
                "{} (load_sample) / {} (spawn/kill pairs); p99 bridged ÷ in-process: {} pipelined / {} one at a time; the bare floor bridged: {} / {} × the floor in process, {} / {} × surface in process",
                fmt(a, 2),
                fmt(c, 2),
                fmt(inv(num(&p["sample"])), 2),
                fmt(inv(num(&p["latency"])), 2),
                fmt(floor("sample"), 2),
                fmt(floor("pairs"), 2),
                fmt(num(&bare["sample"]), 2),
                fmt(num(&bare["pairs"]), 2),
            ),
            a.zip(c).map(|(a, c)| a <= 1.5 && c <= 1.5),
        );
    }

    let report = format!("# surface benchmarks\n\n## targets\n\n{}\n{out}", v.0);
    print!("{report}");
    let _ = std::fs::write(results.join("summary.md"), &report);
}
