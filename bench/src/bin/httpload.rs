//! The Streamable HTTP load generator: many concurrent clients, each on its own HTTP/1.1
//! connection, calling `load_sample` back to back against servers under test, in interleaved
//! rounds; calls/s, p50/p99 latency and server RSS at each concurrency, every figure also as a
//! ratio to the baseline measured in the same round. Then, on a fresh process of each server,
//! the memory of idle sessions and of open SSE streams.
//!
//! ```text
//! httpload --rounds 3 --seconds 2 --warmup 0.5 --levels 1,16,256 --idle 1000 \
//!          --baseline rmcp-http --subject surface --out http.json \
//!          --server 'surface=target/release/ops-surface --http {addr}' \
//!          --server 'rmcp-http=target/release/rmcp-http {addr}' \
//!          --stateless surface,rmcp-http
//! ```
//!
//! `--bearer NAME=TOKEN`: the clients of server NAME send `Authorization: Bearer TOKEN` (a server
//! that requires authentication, measured against the same server without it).
//! `--unchecked NAME`: server NAME is sent a bearer token (`--bearer`) it does not check (the
//! same server without authentication): what the token's bytes alone cost, beside what
//! checking it costs.
//!
//! Modes: `legacy` (every client opens a session with `initialize`, then sends
//! `Mcp-Session-Id`; the answer comes in the `POST`'s response, as SSE or as JSON, as the server
//! chooses) for every server, `stateless` (2026-07-28 requests, no session) for the servers
//! named by `--stateless`, and `askable` (legacy sessions whose client declares `elicitation`,
//! `sampling` and `roots`, as most desktop hosts do, so a call could ask it something) for the
//! servers named by `--askable`. `--modes stateless` (a comma list) runs only those modes, e.g.
//! to count one mode's instructions alone under callgrind.
//! The server runs pinned to CPU 0 and this generator to CPU 1 (`--no-pin` to not), so the
//! figures are the server's work on one core, not the two fighting over both.
//!
//! Every answer must be a JSON-RPC result without `isError: true`; a failure fails the run.

use serde_json::{Value, json};
use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::sync::Arc;
use std::sync::atomic::{AtomicU8, AtomicU64, Ordering};
use std::time::{Duration, Instant};
use surface_bench::http::{Client, Server, connect, median, pin, quantile};

struct Config {
    rounds: usize,
    seconds: f64,
    warmup: f64,
    levels: Vec<usize>,
    idle: usize,
    baseline: String,
    subject: String,
    out: Option<String>,
    servers: Vec<(String, Vec<String>)>,
    stateless: Vec<String>,
    askable: Vec<String>,
    /// The bearer token each named server's clients send.
    bearers: BTreeMap<String, String>,
    /// A server sent a bearer token it does not check.
    unchecked: Option<String>,
    /// `--modes`: run only these modes (all a server has when empty), e.g. to count one mode's
    /// instructions alone under callgrind.
    only_modes: Vec<String>,
    pin: bool,
}

fn config() -> Config {
    let mut c = Config {
        rounds: 3,
        seconds: 2.0,
        warmup: 0.5,
        levels: vec![1, 16, 256],
        idle: 1000,
        baseline: "rmcp-http".into(),
        subject: "surface".into(),
        out: None,
        servers: Vec::new(),
        stateless: Vec::new(),
        askable: Vec::new(),
        bearers: BTreeMap::new(),
        unchecked: None,
        only_modes: Vec::new(),
        pin: true,
    };
    let mut args = std::env::args().skip(1);
    while let Some(a) = args.next() {
        if a == "--no-pin" {
            c.pin = false;
            continue;
        }
        let v = args.next().unwrap_or_else(|| panic!("{a} needs a value"));
        match a.as_str() {
            "--rounds" => c.rounds = v.parse().unwrap(),
            "--seconds" => c.seconds = v.parse().unwrap(),
            "--warmup" => c.warmup = v.parse().unwrap(),
            "--levels" => c.levels = v.split(',').map(|x| x.parse().unwrap()).collect(),
            "--idle" => c.idle = v.parse().unwrap(),
            "--baseline" => c.baseline = v,
            "--subject" => c.subject = v,
            "--out" => c.out = Some(v),
            "--stateless" => c.stateless = v.split(',').map(str::to_owned).collect(),
            "--askable" => c.askable = v.split(',').map(str::to_owned).collect(),
            "--unchecked" => c.unchecked = Some(v),
            "--modes" => {
                c.only_modes = v.split(',').map(str::to_owned).collect();
                for k in &c.only_modes {
                    assert!(
                        Mode::ALL.iter().any(|m| m.key() == k),
                        "--modes: unknown mode {k:?} (legacy, stateless or askable)"
                    );
                }
            }
            "--bearer" => {
                let (name, token) = v.split_once('=').expect("--bearer NAME=TOKEN");
                c.bearers.insert(name.to_owned(), token.to_owned());
            }
            "--server" => {
                let (name, cmd) = v.split_once('=').expect("--server NAME=COMMAND");
                c.servers.push((
                    name.to_owned(),
                    cmd.split_whitespace().map(str::to_owned).collect(),
                ));
            }
            other => panic!("unknown argument {other:?}"),
        }
    }
    c
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
enum Mode {
    Legacy,
    Stateless,
    Askable,
}

impl Mode {
    const ALL: [Mode; 3] = [Mode::Legacy, Mode::Stateless, Mode::Askable];

    fn word(self) -> &'static str {
        match self {
            Mode::Legacy => "legacy sessions",
            Mode::Stateless => "stateless 2026-07-28",
            Mode::Askable => "legacy, askable host",
        }
    }

    fn key(self) -> &'static str {
        match self {
            Mode::Legacy => "legacy",
            Mode::Stateless => "stateless",
            Mode::Askable => "askable",
        }
    }
}

#[derive(Clone, Debug)]
struct Level {
    calls_per_s: f64,
    p50_ms: f64,
    p99_ms: f64,
    rss_mib: f64,
}

const WARM: u8 = 0;
const MEASURE: u8 = 1;
const STOP: u8 = 2;

async fn open(server: &Server, mode: Mode) -> Result<Client, String> {
    let mut c = connect(server.addr, "/mcp").await.map_err(|e| e.to_string())?;
    c.set_bearer(server.bearer.as_deref());
    match mode {
        Mode::Legacy => c.initialize().await.map_err(|e| e.to_string())?,
        Mode::Askable => c
            .initialize_declaring(json!({"elicitation": {}, "sampling": {}, "roots": {}}))
            .await
            .map_err(|e| e.to_string())?,
        Mode::Stateless => {}
    }
    Ok(c)
}

/// `clients` clients calling `load_sample` back to back: warm-up, then the measured window.
async fn level(
    server: &Server,
    mode: Mode,
    clients: usize,
    warmup: f64,
    seconds: f64,
) -> Result<Level, String> {
    let mut opened = Vec::with_capacity(clients);
    // Open sessions a few at a time: a server's `initialize` path is not what is measured.
    for chunk in (0..clients).collect::<Vec<_>>().chunks(16) {
        let batch = futures::future::join_all(chunk.iter().map(|_| open(server, mode))).await;
        for c in batch {
            opened.push(c?);
        }
    }
    let phase = Arc::new(AtomicU8::new(WARM));
    let failures = Arc::new(AtomicU64::new(0));
    let mut tasks = Vec::new();
    for mut c in opened {
        let (phase, failures) = (phase.clone(), failures.clone());
        tasks.push(tokio::spawn(async move {
            let mut lat = Vec::new();
            loop {
                let p = phase.load(Ordering::Relaxed);
                if p == STOP {
                    break;
                }
                let t = Instant::now();
                match c.call_tool("load_sample", json!({})).await {
                    Ok(_) => {
                        if p == MEASURE && phase.load(Ordering::Relaxed) == MEASURE {
                            lat.push(t.elapsed().as_secs_f64() * 1e3);
                        }
                    }
                    Err(e) => {
                        if failures.fetch_add(1, Ordering::Relaxed) == 0 {
                            eprintln!("httpload: {e}");
                        }
                        break;
                    }
                }
            }
            let _ = c.delete().await;
            lat
        }));
    }
    tokio::time::sleep(Duration::from_secs_f64(warmup)).await;
    phase.store(MEASURE, Ordering::Relaxed);
    let t0 = Instant::now();
    tokio::time::sleep(Duration::from_secs_f64(seconds)).await;
    let elapsed = t0.elapsed().as_secs_f64();
    phase.store(STOP, Ordering::Relaxed);
    let (rss, _) = server.rss_kib();
    let mut lat = Vec::new();
    for t in tasks {
        lat.extend(t.await.map_err(|e| e.to_string())?);
    }
    let failed = failures.load(Ordering::Relaxed);
    if failed > 0 {
        return Err(format!(
            "{failed} failed calls at {clients} clients ({})",
            mode.word()
        ));
    }
    lat.sort_by(|a, b| a.partial_cmp(b).unwrap());
    Ok(Level {
        calls_per_s: lat.len() as f64 / elapsed,
        p50_ms: quantile(&lat, 0.5),
        p99_ms: quantile(&lat, 0.99),
        rss_mib: rss as f64 / 1024.0,
    })
}

/// Memory of `n` idle legacy sessions, then of one open `GET` stream on each (KiB apiece).
async fn idle(server: &Server, n: usize) -> Result<(f64, f64), String> {
    // Warm the server's paths once so the first session's one-off allocations are not counted.
    let mut w = open(server, Mode::Legacy).await?;
    for _ in 0..20 {
        w.call_tool("load_sample", json!({}))
            .await
            .map_err(|e| e.to_string())?;
    }
    let _ = w.delete().await;
    tokio::time::sleep(Duration::from_millis(300)).await;
    let (rss0, _) = server.rss_kib();
    let mut sessions = Vec::with_capacity(n);
    for chunk in (0..n).collect::<Vec<_>>().chunks(16) {
        let batch = futures::future::join_all(chunk.iter().map(|_| open(server, Mode::Legacy))).await;
        for c in batch {
            sessions.push(c?);
        }
    }
    tokio::time::sleep(Duration::from_millis(500)).await;
    let (rss1, _) = server.rss_kib();
    let mut streams = Vec::with_capacity(n);
    for chunk in sessions.chunks_mut(16) {
        let batch = futures::future::join_all(chunk.iter_mut().map(|c| c.listen())).await;
        for s in batch {
            streams.push(s.map_err(|e| e.to_string())?);
        }
    }
    tokio::time::sleep(Duration::from_millis(500)).await;
    let (rss2, _) = server.rss_kib();
    drop(streams);
    drop(sessions);
    Ok((
        (rss1 as f64 - rss0 as f64) / n as f64,
        (rss2 as f64 - rss1 as f64) / n as f64,
    ))
}

type Key = (String, Mode, usize);

fn main() {
    let c = config();
    assert!(!c.servers.is_empty(), "no --server given");
    let two = std::thread::available_parallelism().map_or(1, |n| n.get()) >= 2;
    let pinning = c.pin && two;
    if pinning {
        pin(1);
    }
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let modes = |name: &str| {
        let mut m = vec![Mode::Legacy];
        if c.stateless.iter().any(|s| s == name) {
            m.push(Mode::Stateless);
        }
        if c.askable.iter().any(|s| s == name) {
            m.push(Mode::Askable);
        }
        if !c.only_modes.is_empty() {
            m.retain(|mode| c.only_modes.iter().any(|k| k == mode.key()));
        }
        m
    };
    let mut runs: BTreeMap<Key, Vec<Level>> = BTreeMap::new();
    let mut ratios: BTreeMap<Key, Vec<f64>> = BTreeMap::new();
    let mut failed = Vec::new();
    for round in 0..c.rounds {
        eprintln!("httpload: round {}/{}", round + 1, c.rounds);
        let mut this: BTreeMap<Key, f64> = BTreeMap::new();
        // Rotate the order so no server always runs first (or last) in a round.
        let n = c.servers.len();
        for i in 0..n {
            let (name, argv) = &c.servers[(i + round) % n];
            let server = match Server::spawn(argv, pinning.then_some(0)) {
                Ok(mut s) => {
                    s.bearer = c.bearers.get(name).cloned();
                    s
                }
                Err(e) => {
                    failed.push(format!("{name}: {e}"));
                    continue;
                }
            };
            for mode in modes(name) {
                for &clients in &c.levels {
                    match rt.block_on(level(&server, mode, clients, c.warmup, c.seconds)) {
                        Ok(l) => {
                            eprintln!(
                                "  {name} {} {clients}: {:.0} calls/s p50 {:.2} ms p99 {:.2} ms rss {:.1} MiB",
                                mode.word(),
                                l.calls_per_s,
                                l.p50_ms,
                                l.p99_ms,
                                l.rss_mib
                            );
                            this.insert((name.clone(), mode, clients), l.calls_per_s);
                            runs.entry((name.clone(), mode, clients)).or_default().push(l);
                        }
                        Err(e) => failed.push(format!("{name}: {e}")),
                    }
                }
            }
        }
        for ((name, mode, clients), rate) in &this {
            if let Some(s) = this.get(&(c.subject.clone(), *mode, *clients)) {
                ratios
                    .entry((name.clone(), *mode, *clients))
                    .or_default()
                    .push(s / rate);
            }
        }
    }
    let mut idle_table = BTreeMap::new();
    if c.idle > 0 {
        for (name, argv) in &c.servers {
            let result = Server::spawn(argv, pinning.then_some(0))
                .map_err(|e| e.to_string())
                .and_then(|mut server| {
                    server.bearer = c.bearers.get(name).cloned();
                    rt.block_on(idle(&server, c.idle))
                });
            match result {
                Ok(r) => {
                    eprintln!(
                        "  {name}: {:.1} KiB per idle session, {:.1} KiB per SSE stream",
                        r.0, r.1
                    );
                    idle_table.insert(name.clone(), r);
                }
                Err(e) => failed.push(format!("{name} (idle sessions): {e}")),
            }
        }
    }

    // The report.
    let mut table = format!(
        "Streamable HTTP, {} interleaved rounds (medians), `load_sample` back to back per client, {} s measured after {} s warm-up per level; server pinned to one core{}; \"surface ×\" = surface's calls/s ÷ this server's in the same round\n\n",
        c.rounds,
        c.seconds,
        c.warmup,
        if pinning {
            ", the load generator to the other"
        } else {
            " (not pinned)"
        }
    );
    let _ = write!(table, "| server | mode |");
    for l in &c.levels {
        let _ = write!(
            table,
            " {l} clients: calls/s · p50/p99 ms · RSS MiB | surface × |"
        );
    }
    let _ = writeln!(table);
    let _ = write!(table, "|---|---|");
    for _ in &c.levels {
        let _ = write!(table, "---|---:|");
    }
    let _ = writeln!(table);
    let med = |v: &[Level], f: fn(&Level) -> f64| median(v.iter().map(f).collect());
    let mut json_levels = serde_json::Map::new();
    for (name, _) in &c.servers {
        for mode in modes(name) {
            let _ = write!(table, "| {name} | {} |", mode.word());
            for &clients in &c.levels {
                let key = (name.clone(), mode, clients);
                match runs.get(&key) {
                    Some(v) => {
                        let r = ratios.get(&key).map(|r| median(r.clone()));
                        let (rate, p50, p99, rss) = (
                            med(v, |l| l.calls_per_s),
                            med(v, |l| l.p50_ms),
                            med(v, |l| l.p99_ms),
                            med(v, |l| l.rss_mib),
                        );
                        let _ = write!(
                            table,
                            " {rate:.0} · {p50:.2}/{p99:.2} · {rss:.1} | {} |",
                            r.map_or("–".into(), |r| format!("{r:.2}"))
                        );
                        json_levels.insert(
                            format!("{name}/{}/{clients}", mode.key()),
                            json!({"calls_per_s": rate, "p50_ms": p50, "p99_ms": p99, "rss_mib": rss, "subject_ratio": r}),
                        );
                    }
                    None => {
                        let _ = write!(table, " n/a | – |");
                    }
                }
            }
            let _ = writeln!(table);
        }
    }
    if !idle_table.is_empty() {
        let _ = writeln!(
            table,
            "\nmemory, on a fresh server: {} idle legacy sessions opened (`initialize` + `initialized`), then one standalone `GET` SSE stream on each\n\n| server | KiB per idle session | KiB per open SSE stream |\n|---|---:|---:|",
            c.idle
        );
        for (name, (s, st)) in &idle_table {
            let _ = writeln!(table, "| {name} | {s:.1} | {st:.1} |");
        }
    }
    if !failed.is_empty() {
        let _ = writeln!(table, "\nfailures: {}", failed.join("; "));
    }

    // Verdicts: every level and mode the two share.
    // "1 / 16 / 256": the levels every "measured" line names.
    let at_levels = c
        .levels
        .iter()
        .map(|l| l.to_string())
        .collect::<Vec<_>>()
        .join(" / ");
    let verdict = |peer: &str, at_least: f64, label: &str| {
        let mut parts = Vec::new();
        let mut all = true;
        let mut any = false;
        for mode in modes(peer) {
            if !modes(&c.subject).contains(&mode) {
                continue;
            }
            let figures: Vec<String> = c
                .levels
                .iter()
                .map(|&l| match ratios.get(&(peer.to_owned(), mode, l)) {
                    Some(r) => {
                        let r = median(r.clone());
                        any = true;
                        all &= r >= at_least;
                        format!("{r:.2}")
                    }
                    None => {
                        all = false;
                        "n/a".into()
                    }
                })
                .collect();
            parts.push(format!("{}: {}", mode.word(), figures.join(" / ")));
        }
        json!({
            "target": label,
            "measured": format!("{} (at {} clients)", parts.join("; "), at_levels),
            "met": if any && failed.is_empty() { Value::Bool(all) } else { Value::Null },
        })
    };
    let mut verdicts = vec![verdict(
        &c.baseline,
        1.5,
        "HTTP throughput ≥ 1.5× rmcp's `StreamableHttpService`",
    )];
    let unchecked = c
        .unchecked
        .as_ref()
        .filter(|n| c.servers.iter().any(|(s, _)| s == *n));
    if let Some(auth) = c
        .bearers
        .keys()
        .find(|n| Some(*n) != unchecked && c.servers.iter().any(|(s, _)| s == *n))
    {
        // "surface ×" against the authenticated server is plain ÷ authenticated: at most 1/0.9.
        let mut v = verdict(
            auth,
            0.0,
            "HTTP with authentication ≥ 0.9× without it (figures: without ÷ with, met at ≤ 1.11)",
        );
        let within = modes(auth).iter().all(|&mode| {
            c.levels.iter().all(|&l| {
                ratios
                    .get(&(auth.clone(), mode, l))
                    .is_some_and(|r| median(r.clone()) <= 1.0 / 0.9)
            })
        });
        v["met"] = if failed.is_empty() {
            Value::Bool(within)
        } else {
            Value::Null
        };
        verdicts.push(v);
    }
    if let Some(unchecked) = unchecked {
        // The same server without authentication, sent the same token: what its bytes alone
        // cost (read, parsed as a header, carried), which no check can avoid.
        let mut v = verdict(
            unchecked,
            0.0,
            "HTTP, the bearer token sent but not checked (figures: without ÷ unchecked): what the token's bytes alone cost (for reference)",
        );
        v["met"] = Value::Null;
        verdicts.push(v);
    }
    if c.servers.iter().any(|(n, _)| n == "ts-sdk") {
        verdicts.push(verdict("ts-sdk", 5.0, "HTTP throughput ≥ 5× the TypeScript SDK"));
    }
    // A reference server's calls/s × the baseline's: (surface ÷ baseline) ÷ (surface ÷ it),
    // per round's medians, at `levels`.
    let against_baseline = |peer: &str, levels: &[usize]| -> String {
        let parts: Vec<String> = modes(peer)
            .into_iter()
            .filter(|m| modes(&c.baseline).contains(m))
            .map(|mode| {
                let figures: Vec<String> = levels
                    .iter()
                    .map(|&l| {
                        let base = ratios.get(&(c.baseline.clone(), mode, l));
                        let it = ratios.get(&(peer.to_owned(), mode, l));
                        match base.zip(it) {
                            Some((b, f)) => format!("{:.2}", median(b.clone()) / median(f.clone())),
                            None => "n/a".into(),
                        }
                    })
                    .collect();
                format!("{}: {}", mode.word(), figures.join(" / "))
            })
            .collect();
        parts.join("; ")
    };
    if c.servers.iter().any(|(n, _)| n == "floor") {
        verdicts.push(json!({
            "target": "HTTP floor (bare hyper and serde_json, no MCP) × rmcp's service: the ceiling of any server's ratio through this harness (for reference)",
            "measured": format!("{} (at {} clients)", against_baseline("floor", &c.levels), at_levels),
            "met": Value::Null,
        }));
    }
    if c.servers.iter().any(|(n, _)| n == "pong") && c.levels.contains(&1) {
        // At one client a call is one round trip at a time: a server that does nothing sets
        // the most any server's ratio can be (with more clients it is no ceiling: its naive
        // byte search is not built for throughput).
        verdicts.push(json!({
            "target": "HTTP round trip's floor (canned answers over bare TCP, nothing parsed) × rmcp's service at one client: what no server's ratio can pass through this harness on this machine (for reference)",
            "measured": format!("{} (at 1 client)", against_baseline("pong", &[1])),
            "met": Value::Null,
        }));
    }
    if c.servers.iter().any(|(n, _)| n == "fastmcp") {
        let mut v = verdict(
            "fastmcp",
            0.0,
            "HTTP throughput against FastMCP (no target; for reference)",
        );
        v["met"] = Value::Null;
        verdicts.push(v);
    }
    print!("{table}");
    if let Some(out) = &c.out {
        let idle_json: serde_json::Map<String, Value> = idle_table
            .iter()
            .map(|(k, (s, st))| {
                (
                    k.clone(),
                    json!({"kib_per_idle_session": s, "kib_per_sse_stream": st}),
                )
            })
            .collect();
        let doc = json!({
            "title": "Streamable HTTP",
            "table": table,
            "verdicts": verdicts,
            "levels": json_levels,
            "idle": idle_json,
            "failures": failed,
        });
        std::fs::write(out, serde_json::to_string_pretty(&doc).unwrap()).unwrap();
    }
    if !failed.is_empty() {
        std::process::exit(1);
    }
}
