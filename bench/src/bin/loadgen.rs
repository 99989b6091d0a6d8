//! The stdio load generator: drives MCP servers as child processes over their stdin/stdout
//! with pipelined `tools/call` requests, matched by id, in interleaved rounds, and reports
//! calls/s, p50/p99 latency and peak RSS per server — every figure also as a ratio to the
//! baseline server measured in the same round.
//!
//! ```text
//! loadgen --rounds 5 --calls 20000 --window 1000 --latency-calls 2000 --warmup 1000 \
//!         --baseline rmcp-tuned --subject surface --out results.json \
//!         --server 'surface=target/release/ops-surface' \
//!         --server 'rmcp-tuned=target/release/rmcp-tuned' \
//!         --scale 'fastmcp=0.1'
//! ```
//!
//! Workloads (each on a fresh server process, after `initialize` + `notifications/initialized`
//! — or, with `--era 2026`, with no handshake and every request carrying the 2026-07-28 `_meta`
//! — and a warm-up of the same workload):
//! - `sample`: `load_sample` (no input), `--calls` of them with `--window` in flight;
//! - `pairs`: `proc_spawn {name}` then, as soon as its answer names the pid, `proc_kill {pid}`;
//!   `--window` pairs in flight, `--calls` requests in all;
//! - `latency`: `load_sample` one at a time, `--latency-calls` of them.
//!
//! Every answer must be a JSON-RPC result without `isError: true`; anything else is counted as
//! a failure. Stdin is closed only after every id was answered, and peak RSS (`VmHWM`) is read
//! while the child is still alive.

use serde::Deserialize;
use serde_json::value::RawValue;
use std::borrow::Cow;
use std::collections::BTreeMap;
use std::io::{BufRead, BufReader, BufWriter, Write};
use std::process::{Child, ChildStdin, ChildStdout, Command, Stdio};
use std::sync::mpsc::{self, Receiver, RecvTimeoutError, Sender};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

const STALL: Duration = Duration::from_secs(60);

#[derive(Clone, Debug)]
struct ServerSpec {
    name: String,
    argv: Vec<String>,
    scale: f64,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
enum Workload {
    Sample,
    Pairs,
    Latency,
}

impl Workload {
    fn word(self) -> &'static str {
        match self {
            Workload::Sample => "sample",
            Workload::Pairs => "pairs",
            Workload::Latency => "latency",
        }
    }
    fn parse(s: &str) -> Workload {
        match s {
            "sample" => Workload::Sample,
            "pairs" => Workload::Pairs,
            "latency" => Workload::Latency,
            other => panic!("unknown workload {other:?} (sample, pairs, latency)"),
        }
    }
}

/// Whether the sessions are 2026-07-28 ones (`--era 2026`): no `initialize`, and every
/// request carries the `_meta` that era requires.
static MODERN: std::sync::OnceLock<bool> = std::sync::OnceLock::new();

/// What goes after a request's `arguments` in its params, for the era measured.
fn era_meta() -> &'static str {
    if MODERN.get() == Some(&true) {
        r#","_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{},"io.modelcontextprotocol/clientInfo":{"name":"surface-loadgen","version":"0.0.0"}}"#
    } else {
        ""
    }
}

struct Config {
    rounds: usize,
    calls: usize,
    window: usize,
    latency_calls: usize,
    warmup: usize,
    baseline: String,
    subject: String,
    out: Option<String>,
    servers: Vec<ServerSpec>,
    workloads: Vec<Workload>,
}

fn parse_args() -> Config {
    let mut c = Config {
        rounds: 5,
        calls: 20_000,
        window: 1_000,
        latency_calls: 2_000,
        warmup: 1_000,
        baseline: "rmcp-tuned".into(),
        subject: "surface".into(),
        out: None,
        servers: Vec::new(),
        workloads: vec![Workload::Sample, Workload::Pairs, Workload::Latency],
    };
    let mut scales: BTreeMap<String, f64> = BTreeMap::new();
    let mut args = std::env::args().skip(1);
    while let Some(a) = args.next() {
        let mut val = || args.next().unwrap_or_else(|| panic!("{a} needs a value"));
        match a.as_str() {
            "--rounds" => c.rounds = val().parse().expect("--rounds N"),
            "--calls" => c.calls = val().parse().expect("--calls N"),
            "--window" => c.window = val().parse().expect("--window N"),
            "--latency-calls" => c.latency_calls = val().parse().expect("--latency-calls N"),
            "--warmup" => c.warmup = val().parse().expect("--warmup N"),
            "--baseline" => c.baseline = val(),
            "--subject" => c.subject = val(),
            "--out" => c.out = Some(val()),
            "--era" => {
                let modern = match val().as_str() {
                    "legacy" => false,
                    "2026" => true,
                    other => panic!("--era legacy|2026, not {other:?}"),
                };
                let _ = MODERN.set(modern);
            }
            "--workloads" => c.workloads = val().split(',').map(Workload::parse).collect(),
            "--server" => {
                let v = val();
                let (name, cmd) = v.split_once('=').expect("--server NAME=COMMAND ARGS");
                c.servers.push(ServerSpec {
                    name: name.into(),
                    argv: cmd.split_whitespace().map(str::to_owned).collect(),
                    scale: 1.0,
                });
            }
            "--scale" => {
                let v = val();
                let (name, f) = v.split_once('=').expect("--scale NAME=FRACTION");
                scales.insert(name.into(), f.parse().expect("--scale NAME=FRACTION"));
            }
            other => panic!("unknown argument {other:?}"),
        }
    }
    for s in &mut c.servers {
        if let Some(f) = scales.get(&s.name) {
            s.scale = *f;
        }
    }
    assert!(!c.servers.is_empty(), "no --server given");
    c
}

/// One answer, as the reader thread saw it.
struct Reply {
    id: u64,
    at: Instant,
    ok: bool,
    pid: Option<u32>,
    bytes: usize,
}

#[derive(Deserialize)]
struct Msg<'a> {
    #[serde(default)]
    id: Option<u64>,
    #[serde(borrow, default)]
    result: Option<&'a RawValue>,
}

#[derive(Deserialize)]
struct ToolResult<'a> {
    #[serde(rename = "isError", default)]
    is_error: Option<bool>,
    #[serde(rename = "structuredContent", borrow, default)]
    structured: Option<&'a RawValue>,
    #[serde(borrow, default)]
    content: Option<&'a RawValue>,
}

#[derive(Deserialize)]
struct Pid {
    pid: u32,
}

#[derive(Deserialize)]
struct Text<'a> {
    #[serde(borrow, default)]
    text: Option<Cow<'a, str>>,
}

/// The pid a `proc_spawn` answer names: in `structuredContent`, else in the text content.
fn find_pid(r: &ToolResult) -> Option<u32> {
    if let Some(s) = r.structured {
        if let Ok(p) = serde_json::from_str::<Pid>(s.get()) {
            return Some(p.pid);
        }
        // A wrapper such as `{"result": {...}}`.
        if let Ok(m) = serde_json::from_str::<BTreeMap<String, Pid>>(s.get())
            && let Some(p) = m.values().next()
        {
            return Some(p.pid);
        }
    }
    let content = serde_json::from_str::<Vec<Text>>(r.content?.get()).ok()?;
    content
        .iter()
        .filter_map(|t| t.text.as_deref())
        .find_map(|t| serde_json::from_str::<Pid>(t).ok().map(|p| p.pid))
}

/// Reads answers and hands them to the driver a read at a time: every answer already in the
/// buffer goes in one batch, so the driver wakes once per read, not once per answer (waking it
/// per answer cost the harness more CPU than a fast server's calls and, on two cores, the
/// server its core).
fn reader(stdout: ChildStdout, tx: Sender<Vec<Reply>>) {
    let mut r = BufReader::with_capacity(256 * 1024, stdout);
    let mut line = Vec::with_capacity(4096);
    let mut batch = Vec::new();
    loop {
        line.clear();
        match r.read_until(b'\n', &mut line) {
            Ok(0) | Err(_) => return,
            Ok(_) => {}
        }
        let at = Instant::now();
        if let Some(reply) = parse_reply(&line, at) {
            batch.push(reply);
        }
        if !batch.is_empty() && !r.buffer().contains(&b'\n') && tx.send(std::mem::take(&mut batch)).is_err() {
            return;
        }
    }
}

/// The reply one line carries, or `None` for a notification or a line that is not JSON-RPC.
fn parse_reply(line: &[u8], at: Instant) -> Option<Reply> {
    let Ok(msg) = serde_json::from_slice::<Msg>(line) else {
        eprintln!(
            "loadgen: stdout carried a non-JSON-RPC line: {:?}",
            String::from_utf8_lossy(&line[..line.len().min(200)])
        );
        return None;
    };
    let id = msg.id?; // None: a notification
    let (ok, pid) = match msg
        .result
        .map(|raw| serde_json::from_str::<ToolResult>(raw.get()))
    {
        Some(Ok(tr)) => (tr.is_error != Some(true), find_pid(&tr)),
        Some(Err(_)) => (true, None), // a result that is not a tool result (initialize)
        None => (false, None),
    };
    Some(Reply {
        id,
        at,
        ok,
        pid,
        bytes: line.len(),
    })
}

struct Server {
    child: Child,
    stdin: Option<BufWriter<ChildStdin>>,
    rx: Receiver<Vec<Reply>>,
    reader: Option<JoinHandle<()>>,
}

impl Server {
    fn start(spec: &ServerSpec) -> Server {
        let mut child = Command::new(&spec.argv[0])
            .args(&spec.argv[1..])
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .unwrap_or_else(|e| panic!("{}: {:?} does not start: {e}", spec.name, spec.argv));
        let stdout = child.stdout.take().unwrap();
        let stdin = BufWriter::with_capacity(256 * 1024, child.stdin.take().unwrap());
        let (tx, rx) = mpsc::channel();
        let reader = std::thread::spawn(move || reader(stdout, tx));
        Server {
            child,
            stdin: Some(stdin),
            rx,
            reader: Some(reader),
        }
    }

    fn w(&mut self) -> &mut BufWriter<ChildStdin> {
        self.stdin.as_mut().unwrap()
    }

    fn initialize(&mut self) -> Result<(), String> {
        if MODERN.get() == Some(&true) {
            // A 2026-07-28 session opens with its first request, which carries `_meta`.
            return Ok(());
        }
        let w = self.w();
        let _ = w.write_all(br#"{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"surface-loadgen","version":"0.0.0"}}}"#);
        let _ = w.write_all(b"\n");
        let _ = w.flush();
        loop {
            match self.rx.recv_timeout(STALL) {
                Ok(batch) if batch.iter().any(|r| r.id == 0) => break,
                Ok(_) => {}
                Err(e) => return Err(format!("no answer to initialize: {e}")),
            }
        }
        let w = self.w();
        let _ = w.write_all(b"{\"jsonrpc\":\"2.0\",\"method\":\"notifications/initialized\"}\n");
        let _ = w.flush();
        Ok(())
    }

    /// Peak RSS (`VmHWM`) and, of what is resident now, the pages mapped from files (`RssFile`:
    /// the binary's code and read-only data, which a larger binary maps more of whatever it
    /// serves), in KiB.
    fn rss_kib(&self) -> (u64, u64) {
        let status = std::fs::read_to_string(format!("/proc/{}/status", self.child.id())).unwrap_or_default();
        let field = |key: &str| {
            status
                .lines()
                .find_map(|l| l.strip_prefix(key))
                .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
                .unwrap_or(0)
        };
        (field("VmHWM:"), field("RssFile:"))
    }

    /// Closes stdin (every id has been answered by now) and waits for the child to exit.
    fn finish(mut self) {
        drop(self.stdin.take());
        let deadline = Instant::now() + Duration::from_secs(10);
        loop {
            match self.child.try_wait() {
                Ok(Some(_)) => break,
                Ok(None) if Instant::now() < deadline => std::thread::sleep(Duration::from_millis(5)),
                _ => {
                    let _ = self.child.kill();
                    let _ = self.child.wait();
                    break;
                }
            }
        }
        if let Some(r) = self.reader.take() {
            let _ = r.join();
        }
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        if self.reader.is_some() {
            let _ = self.child.kill();
            let _ = self.child.wait();
        }
    }
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Kind {
    Sample,
    Spawn,
    Kill,
}

/// The requests of one phase, by id.
struct Phase {
    base: u64,
    sent: Vec<(Instant, Kind)>,
    latencies: Vec<u64>,
    failures: usize,
    bytes: usize,
    last: Instant,
}

impl Phase {
    fn new(base: u64, total: usize) -> Phase {
        Phase {
            base,
            sent: Vec::with_capacity(total),
            latencies: Vec::with_capacity(total),
            failures: 0,
            bytes: 0,
            last: Instant::now(),
        }
    }

    fn send(&mut self, w: &mut BufWriter<ChildStdin>, kind: Kind, arg: u64) {
        let id = self.base + self.sent.len() as u64;
        let meta = era_meta();
        let _ = match kind {
            Kind::Sample => writeln!(
                w,
                r#"{{"jsonrpc":"2.0","id":{id},"method":"tools/call","params":{{"name":"load_sample","arguments":{{}}{meta}}}}}"#
            ),
            Kind::Spawn => writeln!(
                w,
                r#"{{"jsonrpc":"2.0","id":{id},"method":"tools/call","params":{{"name":"proc_spawn","arguments":{{"name":"worker-{arg}"}}{meta}}}}}"#
            ),
            Kind::Kill => writeln!(
                w,
                r#"{{"jsonrpc":"2.0","id":{id},"method":"tools/call","params":{{"name":"proc_kill","arguments":{{"pid":{arg}}}{meta}}}}}"#
            ),
        };
        self.sent.push((Instant::now(), kind));
    }

    /// Records an answer; returns what it answered, or None for an id of no request here.
    fn answer(&mut self, r: &Reply) -> Option<Kind> {
        let i = r.id.checked_sub(self.base)? as usize;
        let (at, kind) = *self.sent.get(i)?;
        self.latencies.push(r.at.duration_since(at).as_nanos() as u64);
        self.bytes += r.bytes;
        self.last = r.at;
        if !r.ok {
            self.failures += 1;
        }
        Some(kind)
    }
}

fn recv(rx: &Receiver<Vec<Reply>>, outstanding: usize) -> Result<Vec<Reply>, String> {
    rx.recv_timeout(STALL).map_err(|e| match e {
        RecvTimeoutError::Timeout => format!("stalled with {outstanding} requests unanswered for {STALL:?}"),
        RecvTimeoutError::Disconnected => {
            format!("the server closed stdout with {outstanding} requests unanswered")
        }
    })
}

/// `n` `load_sample` calls with at most `window` in flight.
fn drive_sample(s: &mut Server, base: u64, n: usize, window: usize) -> Result<Phase, String> {
    let mut p = Phase::new(base, n);
    let mut done = 0;
    while done < n {
        let w = s.stdin.as_mut().unwrap();
        while p.sent.len() - done < window && p.sent.len() < n {
            p.send(w, Kind::Sample, 0);
        }
        let _ = w.flush();
        let batch = recv(&s.rx, p.sent.len() - done)?;
        for r in batch.into_iter().chain(s.rx.try_iter().flatten()) {
            done += p.answer(&r).is_some() as usize;
        }
    }
    Ok(p)
}

/// `n` requests as `proc_spawn`/`proc_kill` pairs, `window` pairs in flight; each kill is sent
/// as soon as its spawn's answer names the pid.
fn drive_pairs(s: &mut Server, base: u64, n: usize, window: usize) -> Result<Phase, String> {
    struct Count {
        finished: usize,
        in_flight: usize,
    }
    fn handle(r: Reply, w: &mut BufWriter<ChildStdin>, p: &mut Phase, c: &mut Count) {
        match p.answer(&r) {
            Some(Kind::Spawn) if r.ok && r.pid.is_some() => p.send(w, Kind::Kill, r.pid.unwrap() as u64),
            Some(kind) => {
                if kind == Kind::Spawn && r.ok {
                    p.failures += 1; // a spawn answer that names no pid
                }
                c.finished += 1;
                c.in_flight -= 1;
            }
            None => {}
        }
    }
    let pairs = n / 2;
    let mut p = Phase::new(base, pairs * 2);
    let mut started = 0usize;
    let mut c = Count {
        finished: 0,
        in_flight: 0,
    };
    while c.finished < pairs {
        let w = s.stdin.as_mut().unwrap();
        while c.in_flight < window && started < pairs {
            p.send(w, Kind::Spawn, started as u64);
            started += 1;
            c.in_flight += 1;
        }
        let _ = w.flush();
        let batch = recv(&s.rx, c.in_flight)?;
        let w = s.stdin.as_mut().unwrap();
        for r in batch.into_iter().chain(s.rx.try_iter().flatten()) {
            handle(r, w, &mut p, &mut c);
        }
    }
    Ok(p)
}

#[derive(Clone, Debug, serde::Serialize)]
struct Run {
    round: usize,
    server: String,
    workload: &'static str,
    calls: usize,
    failures: usize,
    seconds: f64,
    calls_per_s: f64,
    p50_us: f64,
    p99_us: f64,
    peak_rss_mib: f64,
    /// Of it, the file-backed pages (the binary's code) mapped at the end of the run.
    file_rss_mib: f64,
    bytes_per_reply: f64,
}

fn percentile(sorted: &[u64], q: f64) -> f64 {
    if sorted.is_empty() {
        return f64::NAN;
    }
    let i = ((sorted.len() as f64 - 1.0) * q).round() as usize;
    sorted[i] as f64 / 1_000.0
}

fn run_one(spec: &ServerSpec, wl: Workload, cfg: &Config, round: usize) -> Result<Run, String> {
    let scaled = |n: usize| ((n as f64 * spec.scale).round() as usize).max(2);
    let mut s = Server::start(spec);
    s.initialize()?;
    let window = cfg.window.min(scaled(cfg.calls));
    let warmup = scaled(cfg.warmup);
    let (n, phase) = match wl {
        Workload::Sample => {
            drive_sample(&mut s, 1_000_000_000, warmup, window)?;
            let n = scaled(cfg.calls);
            (n, drive_sample(&mut s, 1, n, window)?)
        }
        Workload::Pairs => {
            drive_pairs(&mut s, 1_000_000_000, warmup, window.div_ceil(2))?;
            let n = scaled(cfg.calls) / 2 * 2;
            (n, drive_pairs(&mut s, 1, n, window.div_ceil(2))?)
        }
        Workload::Latency => {
            drive_sample(&mut s, 1_000_000_000, warmup.min(200), 1)?;
            let n = scaled(cfg.latency_calls);
            (n, drive_sample(&mut s, 1, n, 1)?)
        }
    };
    let (rss, file_rss) = s.rss_kib();
    s.finish();
    let first = phase.sent.first().map(|x| x.0).unwrap();
    let seconds = phase.last.duration_since(first).as_secs_f64();
    let mut lat = phase.latencies;
    lat.sort_unstable();
    Ok(Run {
        round,
        server: spec.name.clone(),
        workload: wl.word(),
        calls: n,
        failures: phase.failures + n.saturating_sub(lat.len()),
        seconds,
        calls_per_s: lat.len() as f64 / seconds,
        p50_us: percentile(&lat, 0.50),
        p99_us: percentile(&lat, 0.99),
        peak_rss_mib: rss as f64 / 1024.0,
        file_rss_mib: file_rss as f64 / 1024.0,
        bytes_per_reply: phase.bytes as f64 / lat.len().max(1) as f64,
    })
}

fn median(mut v: Vec<f64>) -> f64 {
    v.retain(|x| x.is_finite());
    if v.is_empty() {
        return f64::NAN;
    }
    v.sort_by(|a, b| a.partial_cmp(b).unwrap());
    let m = v.len() / 2;
    if v.len() % 2 == 1 {
        v[m]
    } else {
        (v[m - 1] + v[m]) / 2.0
    }
}

fn main() {
    let cfg = parse_args();
    let mut runs: Vec<Run> = Vec::new();
    let mut errors: Vec<String> = Vec::new();
    for round in 1..=cfg.rounds {
        // Rotate the order every round so no server always runs first or last.
        let k = cfg.servers.len();
        for i in 0..k {
            let spec = &cfg.servers[(i + round - 1) % k];
            for &wl in &cfg.workloads {
                match run_one(spec, wl, &cfg, round) {
                    Ok(run) => {
                        eprintln!(
                            "round {round} {:<12} {:<8} {:>9.0} calls/s  p50 {:>8.0} µs  p99 {:>8.0} µs  rss {:>6.1} MiB  {:>5.0} B/reply  failures {}",
                            run.server,
                            run.workload,
                            run.calls_per_s,
                            run.p50_us,
                            run.p99_us,
                            run.peak_rss_mib,
                            run.bytes_per_reply,
                            run.failures
                        );
                        runs.push(run);
                    }
                    Err(e) => {
                        let e = format!("round {round} {} {}: {e}", spec.name, wl.word());
                        eprintln!("{e}");
                        errors.push(e);
                    }
                }
            }
        }
    }

    let find = |round: usize, server: &str, wl: &str| {
        runs.iter()
            .find(|r| r.round == round && r.server == server && r.workload == wl)
    };
    // Per-round ratios, then the median over rounds.
    let ratio = |server: &str, wl: &str, f: &dyn Fn(&Run) -> f64, against: &str| {
        median(
            (1..=cfg.rounds)
                .filter_map(|round| Some(f(find(round, server, wl)?) / f(find(round, against, wl)?)))
                .collect(),
        )
    };
    let med = |server: &str, wl: &str, f: &dyn Fn(&Run) -> f64| {
        median(
            runs.iter()
                .filter(|r| r.server == server && r.workload == wl)
                .map(f)
                .collect(),
        )
    };
    let cps = |r: &Run| r.calls_per_s;
    let p50 = |r: &Run| r.p50_us;
    let p99 = |r: &Run| r.p99_us;
    let rss = |r: &Run| r.peak_rss_mib;
    let code = |r: &Run| r.file_rss_mib;
    let bpr = |r: &Run| r.bytes_per_reply;

    let mut out = String::new();
    use std::fmt::Write as _;
    let _ = writeln!(
        out,
        "stdio, {} rounds (medians), {} calls, {} in flight; throughput ratio = calls/s ÷ {}'s in the same round\n",
        cfg.rounds, cfg.calls, cfg.window, cfg.baseline
    );
    let _ = writeln!(
        out,
        "| server | load_sample calls/s | × {b} | spawn/kill calls/s | × {b} | {s} is N× faster (sample / pairs) | pipelined p50 / p99 µs | one-at-a-time p50 / p99 µs | peak RSS MiB (sample / pairs) | of it the binary's code (file-backed) MiB | bytes/reply |",
        b = cfg.baseline,
        s = cfg.subject
    );
    let _ = writeln!(out, "|---|---:|---:|---:|---:|---:|---|---|---|---:|---:|");
    for spec in &cfg.servers {
        let n = spec.name.as_str();
        let _ = writeln!(
            out,
            "| {n} | {:.0} | {:.2} | {:.0} | {:.2} | {:.2} / {:.2} | {:.0} / {:.0} | {:.0} / {:.0} | {:.1} / {:.1} | {:.1} | {:.0} |",
            med(n, "sample", &cps),
            ratio(n, "sample", &cps, &cfg.baseline),
            med(n, "pairs", &cps),
            ratio(n, "pairs", &cps, &cfg.baseline),
            ratio(&cfg.subject, "sample", &cps, n),
            ratio(&cfg.subject, "pairs", &cps, n),
            med(n, "sample", &p50),
            med(n, "sample", &p99),
            med(n, "latency", &p50),
            med(n, "latency", &p99),
            med(n, "sample", &rss),
            med(n, "pairs", &rss),
            med(n, "sample", &code),
            med(n, "sample", &bpr),
        );
    }
    let _ = writeln!(
        out,
        "\n{s}'s p99 ÷ {b}'s p99 (same round, median; ≤ 1.00 is no worse): pipelined sample {:.2}, pipelined pairs {:.2}, one-at-a-time {:.2}",
        ratio(&cfg.subject, "sample", &p99, &cfg.baseline),
        ratio(&cfg.subject, "pairs", &p99, &cfg.baseline),
        ratio(&cfg.subject, "latency", &p99, &cfg.baseline),
        s = cfg.subject,
        b = cfg.baseline,
    );
    let failures: usize = runs.iter().map(|r| r.failures).sum();
    let _ = writeln!(
        out,
        "failed calls: {failures}; runs that did not finish: {}",
        errors.len()
    );
    for e in &errors {
        let _ = writeln!(out, "- {e}");
    }
    print!("{out}");
    let mut speedup = serde_json::Map::new();
    let mut summary = serde_json::Map::new();
    for spec in &cfg.servers {
        let n = spec.name.as_str();
        speedup.insert(
            n.into(),
            serde_json::json!({
                "sample": ratio(&cfg.subject, "sample", &cps, n),
                "pairs": ratio(&cfg.subject, "pairs", &cps, n),
            }),
        );
        let mut per = serde_json::Map::new();
        for wl in ["sample", "pairs", "latency"] {
            per.insert(
                wl.into(),
                serde_json::json!({
                    "calls_per_s": med(n, wl, &cps), "p50_us": med(n, wl, &p50), "p99_us": med(n, wl, &p99),
                    "peak_rss_mib": med(n, wl, &rss), "file_rss_mib": med(n, wl, &code), "bytes_per_reply": med(n, wl, &bpr),
                    "vs_baseline": ratio(n, wl, &cps, &cfg.baseline),
                }),
            );
        }
        summary.insert(n.into(), per.into());
    }
    let p99_vs_baseline = serde_json::json!({
        "sample": ratio(&cfg.subject, "sample", &p99, &cfg.baseline),
        "pairs": ratio(&cfg.subject, "pairs", &p99, &cfg.baseline),
        "latency": ratio(&cfg.subject, "latency", &p99, &cfg.baseline),
    });
    if let Some(path) = &cfg.out {
        let json = serde_json::json!({
            "subject_speedup": speedup, "summary": summary, "p99_vs_baseline": p99_vs_baseline,
            "rounds": cfg.rounds, "calls": cfg.calls, "window": cfg.window,
            "latency_calls": cfg.latency_calls, "warmup": cfg.warmup,
            "baseline": cfg.baseline, "subject": cfg.subject,
            "runs": runs, "errors": errors, "table": out,
        });
        std::fs::write(path, serde_json::to_string_pretty(&json).unwrap())
            .expect("the results file is written");
    }
    if !errors.is_empty() || failures > 0 {
        std::process::exit(1);
    }
}
