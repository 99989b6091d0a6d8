//! Fan-out over Streamable HTTP: many legacy sessions subscribed to the same item URIs, a writer
//! upserting those items, and what every session receives.
//!
//! `fanout-http --sessions 1000 --uris 100 --writes 10000 --bursts 10 --pause-ms 50 --rounds 3 --out fanout-http.json`
//!
//! The server is this binary again (`--serve`), a child process serving the ops example over
//! `serve_http` with `--uris` processes in its table; its writer is a plain thread that upserts
//! those processes round robin when told to on stdin, and reports how long the upserts took.
//! The driver:
//! 1. runs the writes `--rounds` times with no session open (the writer alone);
//! 2. opens `--sessions` legacy sessions, subscribes each to all `--uris` item URIs
//!    (`resources/subscribe`) and opens each one's standalone `GET` SSE stream;
//! 3. runs the same writes again `--rounds` times (each `--bursts` bursts, `--pause-ms` apart),
//!    each round once the last one's notifications arrived, and records the arrival of every
//!    `notifications/resources/updated` on every stream.
//!
//! With two CPUs or more, the server is pinned to the first and the driver to the second, as
//! `httpload` pins its server and generator: the driver parses every `updated` of a thousand
//! streams (~0.4 s of CPU a round), and unpinned its bursts of parsing, whenever a window's
//! notifications arrived at once, landed on the writer's core.
//!
//! Reported: the writer's time with and without the watchers (the slowdown: round `r` watched
//! ÷ round `r` alone, each round's and their median, since one round's ~1 ms of writes moves
//! with a single preemption), notifications received, whether every session got an `updated`
//! for every URI after each round's last write (none lost), the most any (session, URI) got in
//! one round against what the debounce allows (none duplicated beyond it), the time from the
//! last write to the last notification, and server memory per subscription.

use http_body_util::BodyExt;
use serde_json::json;
use std::collections::HashMap;
use std::io::{BufRead, Write as _};
use std::net::SocketAddr;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};
use surface_bench::http::{Client, connect, sse_messages};
use surface_bench::ops::{self, Ops, Process};

const DEBOUNCE_MS: f64 = 200.0;
const FIRST_ID: u32 = 1000;

fn now_ns() -> u128 {
    SystemTime::now().duration_since(UNIX_EPOCH).unwrap().as_nanos()
}

fn rss_kib() -> u64 {
    surface_bench::http::memory("self").0
}

fn uri(k: u32) -> String {
    format!("surface://collections/processes/{}", FIRST_ID + k)
}

/// The server side: ops over HTTP, and a writer thread driven by stdin lines
/// `write BURSTS PER_BURST PAUSE_MS URIS` (answers `wrote BUSY_NS FIRST_NS LAST_NS`) and `rss`.
fn serve(uris: u32) {
    let ops = Arc::new(Ops::new());
    for k in 0..uris {
        let pid = FIRST_ID + k;
        ops.processes.upsert(pid, process(pid, 0));
    }
    let rt = tokio::runtime::Runtime::new().unwrap();
    let served = ops::mcp_server(ops.clone()).start().expect("ops composes");
    let server = rt
        .block_on(
            served.serve_http(
                surface::mcp::HttpOptions::loopback(0)
                    .session_idle_timeout(None)
                    // Two connections per session (its calls, its `GET` stream): past the
                    // default bound of 1,024 at 1,000 sessions.
                    .max_connections(1 << 16),
            ),
        )
        .expect("binds");
    println!("{}", server.local_addr());
    std::io::stdout().flush().unwrap();
    for line in std::io::stdin().lock().lines() {
        let line = line.unwrap();
        let words: Vec<&str> = line.split_whitespace().collect();
        match words.as_slice() {
            ["write", bursts, per, pause, uris] => {
                let (bursts, per, pause, uris): (u32, u32, u64, u32) = (
                    bursts.parse().unwrap(),
                    per.parse().unwrap(),
                    pause.parse().unwrap(),
                    uris.parse().unwrap(),
                );
                let mut busy = Duration::ZERO;
                let mut cpu = 0u128;
                let mut each = Vec::new();
                let first = now_ns();
                let mut last = first;
                let mut n = 0u32;
                for b in 0..bursts {
                    if b > 0 {
                        std::thread::sleep(Duration::from_millis(pause));
                    }
                    let (t, c) = (Instant::now(), thread_cpu_ns());
                    for _ in 0..per {
                        let pid = FIRST_ID + n % uris;
                        ops.processes.upsert(pid, process(pid, n));
                        n += 1;
                    }
                    let took = t.elapsed();
                    cpu += thread_cpu_ns() - c;
                    busy += took;
                    each.push(took.as_nanos());
                    last = now_ns();
                }
                each.sort_unstable();
                println!(
                    "wrote {} {first} {last} {cpu} {}",
                    busy.as_nanos(),
                    each[each.len() / 2]
                );
            }
            ["rss"] => println!("{}", rss_kib()),
            _ => println!("?"),
        }
        std::io::stdout().flush().unwrap();
    }
}

/// CPU time of the calling thread: the writer's own work, without the time the scheduler gave
/// its CPU to other threads (the runtime's workers delivering notifications, the client).
fn thread_cpu_ns() -> u128 {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: `ts` is a valid timespec for the call to fill.
    unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut ts) };
    ts.tv_sec as u128 * 1_000_000_000 + ts.tv_nsec as u128
}

fn process(pid: u32, n: u32) -> Process {
    Process {
        pid,
        name: format!("p{n}"),
        state: "running".into(),
    }
}

struct Child {
    child: std::process::Child,
    input: std::process::ChildStdin,
    output: std::io::BufReader<std::process::ChildStdout>,
}

/// What one `write` took: busy ns, first and last write (Unix ns), the writer thread's CPU ns,
/// the median burst's busy ns.
type Wrote = (f64, u128, u128, f64, f64);

impl Child {
    fn ask(&mut self, line: &str) -> String {
        writeln!(self.input, "{line}").unwrap();
        self.input.flush().unwrap();
        let mut answer = String::new();
        self.output.read_line(&mut answer).unwrap();
        answer.trim().to_owned()
    }

    /// Busy ns, first write, last write (Unix ns), the writer thread's CPU ns, the median burst's ns.
    fn write(&mut self, bursts: u32, per: u32, pause: u64, uris: u32) -> Wrote {
        let a = self.ask(&format!("write {bursts} {per} {pause} {uris}"));
        let f: Vec<&str> = a.split_whitespace().collect();
        assert_eq!(f[0], "wrote", "{a}");
        (
            f[1].parse().unwrap(),
            f[2].parse().unwrap(),
            f[3].parse().unwrap(),
            f[4].parse().unwrap(),
            f[5].parse().unwrap(),
        )
    }
}

impl Drop for Child {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Arrival times (Unix ns) of `updated` per URI, for one session.
type Heard = Arc<Mutex<HashMap<String, Vec<u128>>>>;

/// Waits for a round's trailing notifications: until every (session, URI) heard one after the
/// round's last write (`last_ns`), or nothing arrived for 2 s, or 120 s passed.
async fn settle(heard: &[Heard], uris: u32, last_ns: u128) {
    let everyone = || {
        heard.iter().all(|h| {
            let h = h.lock().unwrap();
            (0..uris).all(|k| {
                h.get(&uri(k))
                    .is_some_and(|v| v.last().is_some_and(|&t| t >= last_ns))
            })
        })
    };
    let count = || -> usize {
        heard
            .iter()
            .map(|h| h.lock().unwrap().values().map(Vec::len).sum::<usize>())
            .sum()
    };
    let start = Instant::now();
    let mut seen = 0;
    let mut quiet = Instant::now();
    loop {
        tokio::time::sleep(Duration::from_millis(100)).await;
        if everyone() {
            // Anything still in flight would be a duplicate: give it a window to show.
            tokio::time::sleep(Duration::from_millis(2 * DEBOUNCE_MS as u64)).await;
            return;
        }
        let n = count();
        if n != seen {
            seen = n;
            quiet = Instant::now();
        }
        if quiet.elapsed() > Duration::from_secs(2) || start.elapsed() > Duration::from_secs(120) {
            return;
        }
    }
}

/// What one round delivered: the `updated` that arrived from its first write (`first_ns`) up
/// to `until_ns`, judged against its last write (`last_ns`).
struct Delivery {
    lost: usize,
    most: usize,
    total: usize,
    to_last_ms: f64,
    median_ms: f64,
}

fn delivery(heard: &[Heard], uris: u32, first_ns: u128, last_ns: u128, until_ns: u128) -> Delivery {
    let (mut lost, mut most, mut total, mut last_arrival) = (0, 0, 0, 0u128);
    let mut per_session_last = Vec::new();
    for h in heard {
        let h = h.lock().unwrap();
        let mut session_last = 0u128;
        for k in 0..uris {
            let arrivals = h.get(&uri(k)).map(Vec::as_slice).unwrap_or_default();
            let round: Vec<u128> = arrivals
                .iter()
                .copied()
                .filter(|&t| t >= first_ns && t < until_ns)
                .collect();
            most = most.max(round.len());
            total += round.len();
            if round.last().is_none_or(|&t| t < last_ns) {
                lost += 1;
            }
            if let Some(&t) = round.last() {
                session_last = session_last.max(t);
            }
        }
        last_arrival = last_arrival.max(session_last);
        if session_last >= last_ns {
            per_session_last.push((session_last - last_ns) as f64 / 1e6);
        }
    }
    per_session_last.sort_by(|a, b| a.partial_cmp(b).unwrap());
    Delivery {
        lost,
        most,
        total,
        to_last_ms: last_arrival.saturating_sub(last_ns) as f64 / 1e6,
        median_ms: surface_bench::http::quantile(&per_session_last, 0.5),
    }
}

/// The median of `values` (the upper one of an even count).
fn middle(mut values: Vec<f64>) -> f64 {
    values.sort_by(|a, b| a.partial_cmp(b).unwrap());
    values[values.len() / 2]
}

async fn open_session(addr: SocketAddr, uris: u32) -> Result<(Client, Heard), String> {
    let err = |e: Box<dyn std::error::Error + Send + Sync>| e.to_string();
    let mut c = connect(addr, "/mcp").await.map_err(err)?;
    c.initialize().await.map_err(err)?;
    let mut stream = connect(addr, "/mcp").await.map_err(err)?;
    stream.session = c.session.clone();
    stream.version = c.version.clone();
    let mut body = stream.listen().await.map_err(err)?;
    let heard: Heard = Arc::default();
    let h = heard.clone();
    tokio::spawn(async move {
        let _keep = stream;
        let mut pending = Vec::new();
        while let Some(Ok(frame)) = body.frame().await {
            let Ok(data) = frame.into_data() else { continue };
            pending.extend_from_slice(&data);
            // Only whole events: up to the last blank line.
            let Some(end) = pending.windows(2).rposition(|w| w == b"\n\n") else {
                continue;
            };
            let whole: Vec<u8> = pending.drain(..end + 2).collect();
            let at = now_ns();
            for m in sse_messages(&whole) {
                if m["method"] == "notifications/resources/updated"
                    && let Some(u) = m["params"]["uri"].as_str()
                {
                    h.lock().unwrap().entry(u.to_owned()).or_default().push(at);
                }
            }
        }
    });
    for k in 0..uris {
        c.call("resources/subscribe", json!({"uri": uri(k)}), None)
            .await
            .map_err(err)?;
    }
    Ok((c, heard))
}

fn main() {
    let mut sessions = 1000usize;
    let mut uris = 100u32;
    let mut writes = 10_000u32;
    let mut bursts = 10u32;
    let mut pause = 50u64;
    let mut rounds = 3usize;
    let mut out = None;
    let mut args = std::env::args().skip(1);
    while let Some(a) = args.next() {
        if a == "--serve" {
            serve(args.next().and_then(|v| v.parse().ok()).unwrap_or(uris));
            return;
        }
        let v = args.next().unwrap_or_else(|| panic!("{a} needs a value"));
        match a.as_str() {
            "--sessions" => sessions = v.parse().unwrap(),
            "--uris" => uris = v.parse().unwrap(),
            "--writes" => writes = v.parse().unwrap(),
            "--bursts" => bursts = v.parse().unwrap(),
            "--pause-ms" => pause = v.parse().unwrap(),
            "--rounds" => rounds = v.parse().unwrap(),
            "--out" => out = Some(v),
            other => panic!("unknown argument {other:?}"),
        }
    }
    let per = writes / bursts;
    let pinned = std::thread::available_parallelism().is_ok_and(|n| n.get() >= 2);
    let mut child = {
        let mut command = std::process::Command::new(std::env::current_exe().unwrap());
        command
            .args(["--serve", &uris.to_string()])
            .stdin(std::process::Stdio::piped())
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::null());
        if pinned {
            use std::os::unix::process::CommandExt;
            // SAFETY: only sched_setaffinity, async-signal-safe, between fork and exec.
            unsafe {
                command.pre_exec(|| {
                    surface_bench::http::pin(0);
                    Ok(())
                });
            }
            surface_bench::http::pin(1);
        }
        let mut c = command.spawn().expect("the server starts");
        let input = c.stdin.take().unwrap();
        let output = std::io::BufReader::new(c.stdout.take().unwrap());
        Child {
            child: c,
            input,
            output,
        }
    };
    let mut line = String::new();
    child.output.read_line(&mut line).unwrap();
    let addr: SocketAddr = line.trim().parse().expect("the server's address");

    assert!(rounds > 0, "--rounds must be at least 1");
    // 1. The writer alone (a first run warms the table).
    child.write(bursts, per, pause, uris);
    let alone: Vec<Wrote> = (0..rounds)
        .map(|_| child.write(bursts, per, pause, uris))
        .collect();
    let rss0: f64 = child.ask("rss").parse().unwrap();

    // 2. Sessions, subscriptions, streams.
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let t = Instant::now();
    let opened: Vec<(Client, Heard)> = rt.block_on(async {
        let mut all = Vec::with_capacity(sessions);
        let ids: Vec<usize> = (0..sessions).collect();
        for chunk in ids.chunks(64) {
            let batch = futures::future::join_all(chunk.iter().map(|_| open_session(addr, uris))).await;
            for s in batch {
                all.push(s.expect("a session opens and subscribes"));
            }
        }
        all
    });
    let setup_s = t.elapsed().as_secs_f64();
    eprintln!("fanout-http: {sessions} sessions × {uris} URIs subscribed in {setup_s:.1} s");
    let rss1: f64 = child.ask("rss").parse().unwrap();

    // 3. The writes, watched, round after round. The runtime keeps reading the streams while
    // the writer runs.
    let heard: Vec<Heard> = opened.iter().map(|(_, h)| h.clone()).collect();
    let mut watched = Vec::new();
    for _ in 0..rounds {
        let (c, wrote) = rt.block_on(async {
            tokio::task::spawn_blocking(move || {
                let r = child.write(bursts, per, pause, uris);
                (child, r)
            })
            .await
            .unwrap()
        });
        child = c;
        rt.block_on(settle(&heard, uris, wrote.2));
        watched.push(wrote);
    }
    let rss2: f64 = child.ask("rss").parse().unwrap();

    // The verdicts' figures: each round's delivery is what arrived from its first write to the
    // next round's first.
    let delivered: Vec<Delivery> = (0..rounds)
        .map(|r| {
            let until = watched.get(r + 1).map_or(u128::MAX, |w| w.1);
            delivery(&heard, uris, watched[r].1, watched[r].2, until)
        })
        .collect();
    let span_ms = (watched[0].2 - watched[0].1) as f64 / 1e6;
    let allowed = (span_ms / DEBOUNCE_MS).ceil() as usize + 1;
    let lost: usize = delivered.iter().map(|d| d.lost).sum();
    let most = delivered.iter().map(|d| d.most).max().unwrap_or(0);
    let total = delivered.iter().map(|d| d.total).sum::<usize>() / rounds;
    let to_last_ms = middle(delivered.iter().map(|d| d.to_last_ms).collect());
    let median_ms = middle(delivered.iter().map(|d| d.median_ms).collect());
    let ratios = |field: fn(&Wrote) -> f64| -> Vec<f64> {
        watched
            .iter()
            .zip(&alone)
            .map(|(w, a)| field(w) / field(a))
            .collect()
    };
    let slowdowns = ratios(|w| w.0);
    let slowdown = middle(slowdowns.clone());
    let burst = middle(ratios(|w| w.4));
    let cpu = middle(ratios(|w| w.3));
    let alone_ns = middle(alone.iter().map(|a| a.0).collect());
    let watched_ns = middle(watched.iter().map(|w| w.0).collect());
    let each: Vec<String> = slowdowns.iter().map(|r| format!("{r:.2}")).collect();
    let each = each.join(" / ");
    let subs = sessions as f64 * uris as f64;
    let per_sub_kib = (rss1 - rss0) / subs;
    let wps = |ns: f64| (per * bursts) as f64 / (ns / 1e9);
    let placement = match pinned {
        true => "; the server pinned to one core, the driver to the other",
        false => "",
    };
    let table = format!(
        "fan-out over Streamable HTTP: {sessions} legacy sessions × {uris} item URIs subscribed ({subs:.0} subscriptions, each session's standalone GET stream open), {rounds} rounds of {bursts} bursts × {per} upserts {pause} ms apart (span {span_ms:.0} ms){placement}\n\n\
| | writer alone | {sessions} sessions watching |\n|---|---:|---:|\n\
| upserts/s (writer thread) | {:.0} | {:.0} |\n\
| server RSS MiB | {:.1} | {:.1} (after the writes: {:.1}) |\n\n\
writer slowdown with the watchers: {slowdown:.2}× (median of the rounds: {each}; the median burst: {burst:.2}×; the writer thread's own CPU time: {cpu:.2}×, the rest is time the scheduler gave its CPU to the runtime's workers and the client); notifications per round: {total} ({:.1} per (session, URI); at most {most} for one, the debounce allows {allowed}); (session, URI) pairs without an `updated` after their round's last write: {lost}; last write → last notification: {to_last_ms:.0} ms (median over sessions of their last: {median_ms:.0} ms); setting up the subscriptions took {setup_s:.1} s; server memory per subscription (session and stream included): {:.2} KiB\n",
        wps(alone_ns),
        wps(watched_ns),
        rss0 / 1024.0,
        rss1 / 1024.0,
        rss2 / 1024.0,
        total as f64 / subs,
        per_sub_kib,
    );
    print!("{table}");
    let verdicts = json!([
        {
            "target": format!("fan-out over HTTP: {sessions} sessions × {uris} URIs, {} writes: every session gets its debounced `updated`, none lost, none duplicated beyond the debounce", per * bursts),
            "measured": format!("{lost} (session, URI) pairs missed their round's last write; at most {most} `updated` per (session, URI), {allowed} allowed; last write → last notification {to_last_ms:.0} ms"),
            "met": lost == 0 && most <= allowed,
        },
        {
            "target": "fan-out: the writer is not slowed by watchers (upsert time with the watchers ÷ alone ≤ 1.25)",
            "measured": format!("{slowdown:.2}× (median of {rounds} rounds: {each}; {:.0} vs {:.0} upserts/s)", wps(watched_ns), wps(alone_ns)),
            "met": slowdown <= 1.25,
        },
    ]);
    if let Some(out) = out {
        let doc = json!({
            "title": "Fan-out over Streamable HTTP",
            "table": table,
            "verdicts": verdicts,
            "lost": lost,
            "most_per_pair": most,
            "allowed_per_pair": allowed,
            "notifications": total,
            "write_to_last_ms": to_last_ms,
            "slowdown": slowdown,
            "slowdown_per_round": slowdowns,
            "kib_per_subscription": per_sub_kib,
        });
        std::fs::write(out, serde_json::to_string_pretty(&doc).unwrap()).unwrap();
    }
    drop(opened);
}
