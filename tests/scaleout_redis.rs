//! Scale-out: several instances serving one surface whose members live in Redis (feature
//! `redis`; `.ci/run` runs `cargo test --features redis --test scaleout_redis`).
//!
//! Every test starts its own `redis-server` on a free loopback port (a temp dir, append-only
//! file fsynced on every write, so a restart keeps what was acknowledged) and kills it after.
//! Without `redis-server` on the PATH each test prints why it skips and returns.
//!
//! Two kinds of instance: two `Ops` in this process, each with its own store connection and
//! change feed (for the member-level checks), and `ops --http ADDR --redis URL` child processes
//! driven over raw Streamable HTTP (the official SDK clients drive the same setup in
//! `interop/python/check_scaleout.py`).

mod common;

#[allow(dead_code)]
#[path = "../examples/ops.rs"]
mod ops;

use futures::StreamExt;
use serde_json::{Value, json};
use std::net::SocketAddr;
use std::path::PathBuf;
use std::process::{Command, Stdio};
use std::sync::Arc;
use std::time::{Duration, Instant};
use surface::store::RedisStore;
use surface::{Change, LiveMember};
use tokio::io::{AsyncBufReadExt, AsyncReadExt, AsyncWriteExt};

use common::redis::{Redis, ops_binary};

/// An `Ops` whose members live in `redis`, with its own connection and change feed: one
/// instance, as far as the store can tell.
fn instance(redis: &Redis) -> (Arc<ops::Ops>, RedisStore) {
    common::redis::in_store(&redis.url(), ops::Ops::new(), |ops| ("next_pid", &ops.next_pid))
}

/// `surface_redis_round_trips_total` counts every round trip to Redis: a read is at least one,
/// and each write adds at least one more (this test binary's only metrics recorder).
#[test]
fn every_round_trip_to_redis_is_counted() {
    let Some(redis) = Redis::start("every_round_trip_to_redis_is_counted") else {
        return;
    };
    let metrics = metrics_exporter_prometheus::PrometheusBuilder::new()
        .install_recorder()
        .expect("the only recorder of this test binary");
    let round_trips = || common::redis::round_trips(&metrics);
    let (ops, _store) = instance(&redis);
    let attached = round_trips();
    assert!(
        attached > 0,
        "attaching the members went to Redis: {}",
        metrics.render()
    );
    for n in 1..=5u64 {
        ops.load.update(|l| l.procs += 1);
        let now = round_trips();
        assert!(
            now >= attached + n,
            "write {n}: {now} round trips after {attached}"
        );
    }
    let before = round_trips();
    assert_eq!(ops.load.get().procs, 7);
    assert!(round_trips() > before, "a read from Redis is a round trip too");
}

#[test]
fn concurrent_updaters_on_two_instances_lose_no_increment() {
    let Some(redis) = Redis::start("concurrent_updaters_on_two_instances_lose_no_increment") else {
        return;
    };
    let (a, _sa) = instance(&redis);
    let (b, _sb) = instance(&redis);
    const THREADS: usize = 4;
    const EACH: u32 = 50;
    std::thread::scope(|s| {
        for i in 0..THREADS * 2 {
            let ops = if i % 2 == 0 { &a } else { &b };
            s.spawn(move || {
                for _ in 0..EACH {
                    ops.load.update(|l| l.procs += 1);
                    ops.processes.update(&1, |p| p.name.push('+'));
                }
            });
        }
    });
    let total = (THREADS * 2) as u32 * EACH;
    assert_eq!(
        a.load.get().procs,
        2 + total,
        "every cell increment through either instance counts"
    );
    assert_eq!(b.load.get().procs, 2 + total);
    let init = b.processes.get(&1).unwrap();
    assert_eq!(
        init.name.len(),
        "init".len() + total as usize,
        "and every item update"
    );
}

#[test]
fn two_instances_never_hand_out_the_same_pid() {
    let Some(redis) = Redis::start("two_instances_never_hand_out_the_same_pid") else {
        return;
    };
    let (a, _sa) = instance(&redis);
    let (b, _sb) = instance(&redis);
    let pids: Vec<u64> = std::thread::scope(|s| {
        let handles: Vec<_> = [&a, &b]
            .into_iter()
            .map(|ops| s.spawn(move || (0..100).map(|_| ops.next_pid.next()).collect::<Vec<_>>()))
            .collect();
        handles.into_iter().flat_map(|h| h.join().unwrap()).collect()
    });
    let mut sorted = pids.clone();
    sorted.sort();
    sorted.dedup();
    assert_eq!(sorted.len(), 200, "200 allocations, 200 distinct pids");
    assert_eq!(sorted.first(), Some(&3), "starting where Ops::new starts");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_change_through_one_instance_reaches_the_feeds_of_another() {
    let Some(redis) = Redis::start("a_change_through_one_instance_reaches_the_feeds_of_another") else {
        return;
    };
    let (a, _sa) = instance(&redis);
    let (b, _sb) = instance(&redis);
    let mut processes = LiveMember::changes(&b.processes);
    let mut load = b.load.subscribe();
    let mut autosave = b.autosave.subscribe();
    a.processes.upsert(
        7,
        ops::Process {
            pid: 7,
            name: "vim".into(),
            state: "running".into(),
        },
    );
    a.load.update(|l| l.procs = 3);
    a.autosave.publish(ops::Saved { procs: 3 });
    let change = tokio::time::timeout(Duration::from_secs(5), processes.next())
        .await
        .expect("the upsert reaches the other instance within 5 s");
    assert_eq!(change, Some(Change::Upserted { id: "7".into() }));
    let value = tokio::time::timeout(Duration::from_secs(5), load.recv())
        .await
        .expect("the cell write reaches the other instance within 5 s");
    assert_eq!(value.unwrap().procs, 3);
    let saved = tokio::time::timeout(Duration::from_secs(5), autosave.recv())
        .await
        .expect("the event reaches the other instance within 5 s");
    assert_eq!(saved.unwrap().procs, 3);
    assert_eq!(
        b.processes.get(&7).unwrap().name,
        "vim",
        "the value is there with its change"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_stream_opened_on_another_instance_is_its_snapshot_then_its_tail() {
    let Some(redis) = Redis::start("a_stream_opened_on_another_instance_is_its_snapshot_then_its_tail")
    else {
        return;
    };
    let (a, _sa) = instance(&redis);
    let (b, _sb) = instance(&redis);
    for n in 1..=5 {
        a.log.push(format!("line {n}"));
    }
    let (snapshot, mut tail) = b.log.open();
    for n in 6..=8 {
        a.log.push(format!("line {n}"));
    }
    let mut seen = snapshot;
    while seen.len() < 8 {
        let chunk = tokio::time::timeout(Duration::from_secs(5), tail.recv())
            .await
            .expect("the tail arrives within 5 s")
            .unwrap();
        seen.push(chunk);
    }
    let want: Vec<String> = (1..=8).map(|n| format!("line {n}")).collect();
    assert_eq!(seen, want, "every chunk once, in order, none missed or repeated");
    assert!(
        tokio::time::timeout(Duration::from_millis(300), tail.recv())
            .await
            .is_err(),
        "nothing after the last"
    );
    // Bounded: the stream keeps its history limit in Redis too.
    let bounded = ops::Ops::new();
    assert_eq!(bounded.log.history_limit(), surface::STREAM_HISTORY);
}

// ---- instances as processes, over Streamable HTTP ----

/// `ops --http 127.0.0.1:0 --redis URL` as a child, and the address it serves.
async fn ops_instance(bin: &std::path::Path, redis: &Redis) -> (tokio::process::Child, SocketAddr) {
    let url = redis.url();
    common::raw_http::spawn_serving(bin, &["--http", "127.0.0.1:0", "--redis", &url]).await
}

/// One legacy-era session over raw Streamable HTTP.
struct Session {
    addr: SocketAddr,
    id: String,
    next: std::sync::atomic::AtomicU64,
}

const JSON: (&str, &str) = ("Content-Type", "application/json");
const ACCEPT: (&str, &str) = ("Accept", "application/json, text/event-stream");

/// A POST on a fresh connection: the raw answer, within 20 s (a store fault never hangs a call).
async fn exchange(addr: SocketAddr, headers: &[(&str, &str)], body: &str) -> String {
    let mut all = vec![JSON, ACCEPT];
    all.extend_from_slice(headers);
    common::raw_http::exchange(addr, "POST", &all, body, Duration::from_secs(20)).await
}

/// The JSON-RPC messages of a raw answer: every SSE `data:` line, or a plain JSON body (the
/// server may answer a `POST` either way).
fn messages(raw: &str) -> impl Iterator<Item = Value> + '_ {
    raw.lines()
        .filter_map(|l| {
            l.strip_prefix("data: ")
                .or_else(|| l.starts_with('{').then_some(l))
        })
        .filter_map(|d| serde_json::from_str::<Value>(d).ok())
}

/// The JSON-RPC answer in an SSE or JSON body.
fn answer_of(raw: &str) -> Value {
    messages(raw)
        .find(|m| m.get("id").is_some())
        .unwrap_or_else(|| panic!("no JSON-RPC answer in {raw}"))
}

impl Session {
    async fn open(addr: SocketAddr) -> Session {
        let init = json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
            "protocolVersion": "2025-11-25", "capabilities": {},
            "clientInfo": {"name": "scaleout", "version": "0"}}});
        let raw = exchange(addr, &[], &init.to_string()).await;
        let id = raw
            .lines()
            .find_map(|l| {
                let (name, value) = l.split_once(':')?;
                name.eq_ignore_ascii_case("mcp-session-id")
                    .then(|| value.trim().to_owned())
            })
            .unwrap_or_else(|| panic!("a session id in {raw}"));
        let s = Session {
            addr,
            id,
            next: 1.into(),
        };
        s.notify(json!({"jsonrpc": "2.0", "method": "notifications/initialized"}))
            .await;
        s
    }

    fn headers(&self) -> [(&str, &str); 2] {
        [
            ("Mcp-Session-Id", &self.id),
            ("MCP-Protocol-Version", "2025-11-25"),
        ]
    }

    async fn notify(&self, message: Value) {
        exchange(self.addr, &self.headers(), &message.to_string()).await;
    }

    async fn request(&self, method: &str, params: Value) -> Value {
        let id = self.next.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let body = json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params});
        answer_of(&exchange(self.addr, &self.headers(), &body.to_string()).await)
    }

    async fn tool_names(&self) -> Vec<String> {
        let answer = self.request("tools/list", json!({})).await;
        let mut names: Vec<String> = answer["result"]["tools"]
            .as_array()
            .unwrap_or_else(|| panic!("tools/list answers: {answer}"))
            .iter()
            .filter_map(|t| t["name"].as_str().map(str::to_owned))
            .collect();
        names.sort();
        names
    }

    async fn call(&self, tool: &str, arguments: Value) -> Value {
        self.request("tools/call", json!({"name": tool, "arguments": arguments}))
            .await["result"]
            .clone()
    }

    async fn read(&self, uri: &str) -> Value {
        let answer = self.request("resources/read", json!({"uri": uri})).await;
        let text = answer["result"]["contents"][0]["text"]
            .as_str()
            .unwrap_or_else(|| panic!("{uri} reads: {answer}"))
            .to_owned();
        serde_json::from_str(&text).unwrap()
    }

    /// Opens the session's standalone SSE stream: the URIs of the `resources/updated` it
    /// carries.
    async fn updates(&self) -> tokio::sync::mpsc::UnboundedReceiver<String> {
        self.notifications("notifications/resources/updated", |params| {
            params["uri"].as_str().unwrap_or_default().to_owned()
        })
        .await
    }

    /// Opens the session's standalone SSE stream: the connection, its `GET` sent.
    async fn standalone(&self) -> tokio::net::TcpStream {
        self.standalone_after(None).await
    }

    /// [`standalone`](Self::standalone), resuming after `last` when given (`Last-Event-ID`).
    async fn standalone_after(&self, last: Option<&str>) -> tokio::net::TcpStream {
        let mut stream = tokio::net::TcpStream::connect(self.addr).await.unwrap();
        let resume = last.map_or(String::new(), |id| format!("Last-Event-ID: {id}\r\n"));
        let head = format!(
            "GET /mcp HTTP/1.1\r\nHost: {}\r\nAccept: text/event-stream\r\nMcp-Session-Id: {}\r\nMCP-Protocol-Version: 2025-11-25\r\n{resume}\r\n",
            self.addr, self.id
        );
        stream.write_all(head.as_bytes()).await.unwrap();
        stream
    }

    /// Opens the session's standalone SSE stream: what `pick` takes from the params of each
    /// notification `method` it carries.
    async fn notifications<T: Send + 'static>(
        &self,
        method: &'static str,
        pick: fn(&Value) -> T,
    ) -> tokio::sync::mpsc::UnboundedReceiver<T> {
        let (tx, rx) = tokio::sync::mpsc::unbounded_channel();
        let stream = self.standalone().await;
        tokio::spawn(async move {
            let mut lines = tokio::io::BufReader::new(stream).lines();
            while let Ok(Some(line)) = lines.next_line().await {
                if let Some(m) = line
                    .strip_prefix("data: ")
                    .and_then(|d| serde_json::from_str::<Value>(d).ok())
                    && m["method"] == method
                    && tx.send(pick(&m["params"])).is_err()
                {
                    return;
                }
            }
        });
        rx
    }

    async fn subscribe(&self, uri: &str) {
        let answer = self.request("resources/subscribe", json!({"uri": uri})).await;
        assert!(answer.get("result").is_some(), "subscribed to {uri}: {answer}");
    }
}

/// The next `updated` within `secs`, or `None`.
async fn updated_within(rx: &mut tokio::sync::mpsc::UnboundedReceiver<String>, secs: u64) -> Option<String> {
    tokio::time::timeout(Duration::from_secs(secs), rx.recv())
        .await
        .ok()
        .flatten()
}

fn text(result: &Value) -> String {
    result["content"][0]["text"]
        .as_str()
        .unwrap_or_default()
        .to_owned()
}

/// Two `ops` instances on one Redis, a session on each, and B's session subscribed to `uris`
/// with its standalone stream open (`heard`).
struct Pair {
    _a: tokio::process::Child,
    _b: tokio::process::Child,
    on_a: Session,
    on_b: Session,
    heard: tokio::sync::mpsc::UnboundedReceiver<String>,
}

async fn pair(redis: &Redis, uris: &[&str]) -> Pair {
    let bin = ops_binary();
    let (a, a_addr) = ops_instance(&bin, redis).await;
    let (b, b_addr) = ops_instance(&bin, redis).await;
    let (on_a, on_b) = (Session::open(a_addr).await, Session::open(b_addr).await);
    let heard = on_b.updates().await;
    for uri in uris {
        on_b.subscribe(uri).await;
    }
    // Let the standalone stream attach before any change.
    tokio::time::sleep(Duration::from_millis(300)).await;
    Pair {
        _a: a,
        _b: b,
        on_a,
        on_b,
        heard,
    }
}

/// The next `n` URIs `heard` names (each within `secs`), sorted.
async fn next_updates(
    heard: &mut tokio::sync::mpsc::UnboundedReceiver<String>,
    n: usize,
    secs: u64,
) -> Vec<String> {
    let mut uris = Vec::new();
    for _ in 0..n {
        match updated_within(heard, secs).await {
            Some(uri) => uris.push(uri),
            None => break,
        }
    }
    uris.sort();
    uris
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_subscriber_on_b_hears_a_spawn_made_through_a() {
    let Some(redis) = Redis::start("a_subscriber_on_b_hears_a_spawn_made_through_a") else {
        return;
    };
    let Pair {
        _a,
        _b,
        on_a,
        on_b,
        mut heard,
    } = pair(
        &redis,
        &["surface://collections/processes", "surface://cells/load"],
    )
    .await;
    let spawned = on_a.call("proc_spawn", json!({"name": "vim"})).await;
    assert_eq!(spawned["isError"], false, "{spawned}");
    let pid = spawned["structuredContent"]["pid"].as_u64().unwrap();
    // B's subscriber hears A's spawn: the item's collection and the load it changed.
    let uris = next_updates(&mut heard, 2, 5).await;
    assert_eq!(uris, ["surface://cells/load", "surface://collections/processes"]);
    assert_eq!(
        on_b.read(&format!("surface://collections/processes/{pid}")).await["name"],
        "vim"
    );
    // Debounced as today: one change per member, one notification each.
    assert_eq!(
        updated_within(&mut heard, 1).await,
        None,
        "one updated per member"
    );
    // A spawn through B gets the next pid, never A's.
    let again = on_b.call("proc_spawn", json!({"name": "emacs"})).await;
    assert_eq!(
        again["structuredContent"]["pid"].as_u64(),
        Some(pid + 1),
        "{again}"
    );
    assert_eq!(on_a.read("surface://cells/load").await["procs"], 4);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_redis_restart_fails_calls_with_a_sentence_then_heals_and_resubscribes() {
    let Some(mut redis) =
        Redis::start("a_redis_restart_fails_calls_with_a_sentence_then_heals_and_resubscribes")
    else {
        return;
    };
    let Pair {
        _a,
        _b,
        on_a,
        on_b,
        mut heard,
    } = pair(&redis, &["surface://cells/load", "surface://streams/log"]).await;
    let before = on_a.call("proc_spawn", json!({"name": "before"})).await;
    assert_eq!(before["isError"], false, "{before}");
    while updated_within(&mut heard, 1).await.is_some() {}

    redis.kill();
    let started = Instant::now();
    let down = on_a.call("proc_spawn", json!({"name": "during"})).await;
    assert_eq!(down["isError"], true, "{down}");
    assert!(text(&down).contains("the store is unreachable"), "{down}");
    assert!(
        started.elapsed() < Duration::from_secs(10),
        "bounded: {:?}",
        started.elapsed()
    );
    let read = on_b
        .request("resources/read", json!({"uri": "surface://cells/load"}))
        .await;
    assert!(
        read["error"]["message"]
            .as_str()
            .unwrap_or_default()
            .contains("the store is unreachable"),
        "a read fails with the same sentence: {read}"
    );

    redis.restart();
    // B's feed reconnects by itself, and its subscriber is told to re-read each member once.
    let uris = next_updates(&mut heard, 2, 10).await;
    assert_eq!(uris, ["surface://cells/load", "surface://streams/log"]);
    assert_eq!(updated_within(&mut heard, 1).await, None, "once each");
    // Calls succeed again.
    let deadline = Instant::now() + Duration::from_secs(15);
    let after = loop {
        let r = on_a.call("proc_spawn", json!({"name": "after"})).await;
        if r["isError"] == false {
            break r;
        }
        assert!(Instant::now() < deadline, "calls succeed again within 15 s: {r}");
        tokio::time::sleep(Duration::from_millis(200)).await;
    };
    let pid = after["structuredContent"]["pid"].as_u64().unwrap();
    assert_eq!(
        on_b.read(&format!("surface://collections/processes/{pid}")).await["name"],
        "after"
    );
    let before_pid = before["structuredContent"]["pid"].as_u64().unwrap();
    assert_eq!(
        on_b.read(&format!("surface://collections/processes/{before_pid}"))
            .await["name"],
        "before",
        "an acknowledged write survives the restart"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_instance_killed_mid_load_loses_no_acknowledged_write() {
    let Some(redis) = Redis::start("an_instance_killed_mid_load_loses_no_acknowledged_write") else {
        return;
    };
    let bin = ops_binary();
    let (mut a, a_addr) = ops_instance(&bin, &redis).await;
    let (_b, b_addr) = ops_instance(&bin, &redis).await;
    let acknowledged = Arc::new(std::sync::Mutex::new(Vec::new()));
    let mut load = Vec::new();
    for (n, addr) in [a_addr, a_addr, b_addr, b_addr].into_iter().enumerate() {
        let acknowledged = acknowledged.clone();
        load.push(tokio::spawn(async move {
            let session = Session::open(addr).await;
            for i in 0..40 {
                let body = json!({"jsonrpc": "2.0", "id": i + 1, "method": "tools/call",
                    "params": {"name": "proc_spawn", "arguments": {"name": format!("w{n}-{i}")}}});
                let mut stream = match tokio::net::TcpStream::connect(addr).await {
                    Ok(s) => s,
                    Err(_) => return, // the instance is gone
                };
                let head = format!(
                    "POST /mcp HTTP/1.1\r\nHost: {addr}\r\nConnection: close\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\nMcp-Session-Id: {}\r\nMCP-Protocol-Version: 2025-11-25\r\nContent-Length: {}\r\n\r\n{body}",
                    session.id,
                    body.to_string().len()
                );
                let mut raw = Vec::new();
                if stream.write_all(head.as_bytes()).await.is_err()
                    || stream.read_to_end(&mut raw).await.is_err()
                {
                    return;
                }
                let raw = String::from_utf8_lossy(&raw);
                // Only an answer that arrived is an acknowledgement.
                if let Some(pid) = messages(&raw).find_map(|m| m["result"]["structuredContent"]["pid"].as_u64())
                {
                    acknowledged.lock().unwrap().push(pid);
                }
            }
        }));
    }
    tokio::time::sleep(Duration::from_millis(150)).await;
    a.start_kill().unwrap();
    let _ = a.wait().await;
    for task in load {
        task.await.unwrap();
    }
    let acknowledged = acknowledged.lock().unwrap().clone();
    assert!(
        acknowledged.len() >= 80,
        "B's clients finished: {}",
        acknowledged.len()
    );
    let on_b = Session::open(b_addr).await;
    let keys = on_b.read("surface://collections/processes").await;
    let stored: Vec<u64> = keys
        .as_array()
        .unwrap()
        .iter()
        .filter_map(Value::as_u64)
        .collect();
    for pid in &acknowledged {
        assert!(stored.contains(pid), "acknowledged pid {pid} is stored");
    }
    let mut distinct = acknowledged.clone();
    distinct.sort();
    distinct.dedup();
    assert_eq!(distinct.len(), acknowledged.len(), "no pid handed out twice");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn concurrent_spawns_through_two_instances_lose_no_increment_and_never_fail() {
    let Some(redis) =
        Redis::start("concurrent_spawns_through_two_instances_lose_no_increment_and_never_fail")
    else {
        return;
    };
    let bin = ops_binary();
    let (_a, a_addr) = ops_instance(&bin, &redis).await;
    let (_b, b_addr) = ops_instance(&bin, &redis).await;
    // Every spawn updates the one `load` cell: the hottest key there is, from 48 connections
    // at once over both instances (with every caller polling for the lease, about one spawn
    // in a hundred used to wait out the store's budget and answer isError).
    const CONNECTIONS: usize = 48;
    const EACH: usize = 25;
    let workers: Vec<_> = (0..CONNECTIONS)
        .map(|n| {
            let addr = if n % 2 == 0 { a_addr } else { b_addr };
            tokio::spawn(
                async move { worker(addr, "proc_spawn", &json!({"name": format!("c{n}")}), EACH).await },
            )
        })
        .collect();
    let mut errors = 0;
    for w in workers {
        errors += w.await.unwrap().1;
    }
    assert_eq!(errors, 0, "no spawn answered isError under contention");
    let on_b = Session::open(b_addr).await;
    assert_eq!(
        on_b.read("surface://cells/load").await["procs"],
        (2 + CONNECTIONS * EACH) as u64,
        "the load counts every spawn through either instance"
    );
    let pids = on_b.read("surface://collections/processes").await;
    assert_eq!(
        pids.as_array().unwrap().len(),
        2 + CONNECTIONS * EACH,
        "every spawn kept its own pid"
    );
}

// ---- resumable SSE across instances ----

/// One SSE event with an id: the id and its JSON-RPC message.
type Event = (String, Value);

/// The events with an id and a message in raw SSE (`data:` and `id:` lines, an event ending at
/// a blank line; chunk-size lines and keep-alive comments are skipped).
fn sse_events(raw: &str) -> Vec<Event> {
    let mut events = Vec::new();
    let (mut id, mut data) = (None, None);
    for line in raw.lines() {
        let line = line.trim_end_matches('\r');
        if line.is_empty() {
            if let (Some(i), Some(d)) = (id.take(), data.take()) {
                events.push((i, d));
            }
            (id, data) = (None, None);
        } else if let Some(v) = line.strip_prefix("id:") {
            id = Some(v.trim_start().to_owned());
        } else if let Some(v) = line.strip_prefix("data:") {
            data = serde_json::from_str::<Value>(v.trim_start()).ok();
        }
    }
    events
}

/// The `resources/updated` events among `events`.
fn updated(events: &[Event]) -> Vec<Event> {
    events
        .iter()
        .filter(|(_, m)| m["method"] == "notifications/resources/updated")
        .cloned()
        .collect()
}

impl Session {
    /// This session on another instance: the same id, requests sent to `addr`.
    fn on(&self, addr: SocketAddr) -> Session {
        Session {
            addr,
            id: self.id.clone(),
            next: 100.into(),
        }
    }

    /// Opens the standalone stream (resuming after `last` when given): each event with an id
    /// and a message as it arrives; abort the task to drop the connection.
    async fn events(
        &self,
        last: Option<&str>,
    ) -> (
        tokio::sync::mpsc::UnboundedReceiver<Event>,
        tokio::task::JoinHandle<()>,
    ) {
        let (tx, rx) = tokio::sync::mpsc::unbounded_channel();
        let stream = self.standalone_after(last).await;
        let task = tokio::spawn(async move {
            let mut lines = tokio::io::BufReader::new(stream).lines();
            let mut raw = String::new();
            while let Ok(Some(line)) = lines.next_line().await {
                raw.push_str(&line);
                raw.push('\n');
                if line.trim_end_matches('\r').is_empty() {
                    for event in sse_events(&raw) {
                        if tx.send(event).is_err() {
                            return;
                        }
                    }
                    raw.clear();
                }
            }
        });
        (rx, task)
    }

    /// `GET` with `Last-Event-ID: last`: what arrives until `want` events have (within 10 s)
    /// and in the second after them — a resumed stream stays open for later events.
    async fn resume(&self, last: &str, want: usize) -> Vec<Event> {
        let (mut rx, task) = self.events(Some(last)).await;
        let got = next_events(&mut rx, want).await;
        task.abort();
        got
    }
}

/// The next `want` events (each within 10 s), then whatever else comes within a second.
async fn next_events(rx: &mut tokio::sync::mpsc::UnboundedReceiver<Event>, want: usize) -> Vec<Event> {
    let mut got = Vec::new();
    while got.len() < want {
        match tokio::time::timeout(Duration::from_secs(10), rx.recv()).await {
            Ok(Some(event)) => got.push(event),
            _ => break,
        }
    }
    while let Ok(Some(event)) = tokio::time::timeout(Duration::from_secs(1), rx.recv()).await {
        got.push(event);
    }
    got
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_legacy_session_resumes_on_another_instance_with_exactly_the_events_it_missed() {
    let Some(redis) =
        Redis::start("a_legacy_session_resumes_on_another_instance_with_exactly_the_events_it_missed")
    else {
        return;
    };
    let bin = ops_binary();
    let (_a, a_addr) = ops_instance(&bin, &redis).await;
    let (_b, b_addr) = ops_instance(&bin, &redis).await;
    let client = Session::open(a_addr).await;
    let (mut live, connection) = client.events(None).await;
    client.subscribe("surface://cells/load").await;
    tokio::time::sleep(Duration::from_millis(300)).await;
    // Changes come through B; A's session hears them through the change feed. Each spawn
    // changes the load once; spaced past the debounce, each is one `updated`.
    let changer = Session::open(b_addr).await;
    let spawn = |name: &'static str| {
        let changer = &changer;
        async move {
            let r = changer.call("proc_spawn", json!({ "name": name })).await;
            assert_eq!(r["isError"], false, "{r}");
            tokio::time::sleep(Duration::from_millis(500)).await;
        }
    };
    let mut seen = Vec::new();
    for name in ["one", "two"] {
        spawn(name).await;
        let event = tokio::time::timeout(Duration::from_secs(5), live.recv())
            .await
            .expect("the live stream on A carries the update")
            .unwrap();
        seen.push(event);
    }
    assert_eq!(updated(&seen).len(), 2, "{seen:?}");
    // The client's connection breaks; three more changes happen meanwhile.
    connection.abort();
    tokio::time::sleep(Duration::from_millis(200)).await;
    for name in ["three", "four", "five"] {
        spawn(name).await;
    }
    tokio::time::sleep(Duration::from_millis(500)).await;
    // It reconnects to B, which never saw the session, with the last id it got on A.
    let on_b = client.on(b_addr);
    let last = seen.last().unwrap().0.clone();
    let (mut resumed, connection) = on_b.events(Some(&last)).await;
    let missed = next_events(&mut resumed, 3).await;
    assert_eq!(
        updated(&missed).len(),
        3,
        "exactly the three updates it missed: {missed:?}"
    );
    for (id, message) in &missed {
        assert_eq!(message["params"]["uri"], "surface://cells/load");
        assert!(seen.iter().all(|(s, _)| s != id), "{id} was not delivered before");
    }
    let mut ids: Vec<&String> = missed.iter().map(|(id, _)| id).collect();
    ids.dedup();
    assert_eq!(ids.len(), 3, "each once");
    // The resumed stream stays open: what A's session hears later (it is still subscribed
    // there) reaches the client through B, once.
    spawn("six").await;
    let later = next_events(&mut resumed, 1).await;
    assert_eq!(updated(&later).len(), 1, "the next update, once: {later:?}");
    connection.abort();
    let missed: Vec<Event> = missed.into_iter().chain(later).collect();
    // Resuming after the last event: nothing more, on either instance.
    let after = &missed.last().unwrap().0;
    assert_eq!(on_b.resume(after, 0).await, Vec::<Event>::new());
    assert_eq!(client.resume(after, 0).await, Vec::<Event>::new());
    // From the stream's start (rmcp primes it with id 0): every update once, in order, with
    // the ids each was first sent under — none lost, none duplicated.
    let all = on_b.resume("0", 6).await;
    let expected: Vec<Event> = seen.iter().chain(&missed).cloned().collect();
    assert_eq!(all, expected);
    // B serves the restored session's requests too.
    assert_eq!(on_b.read("surface://cells/load").await["procs"], 8);
    // A call's response stream resumes on the instance that served it (it is kept there, not
    // written to Redis on every call); elsewhere the resume is an empty stream.
    let call = json!({"jsonrpc": "2.0", "id": 50, "method": "tools/call",
        "params": {"name": "load_sample", "arguments": {}}});
    let raw = exchange(b_addr, &on_b.headers(), &call.to_string()).await;
    let answer = sse_events(&raw);
    assert_eq!(answer.len(), 1, "one answer with an id: {raw}");
    let (answer_id, answer) = &answer[0];
    let priming = raw
        .lines()
        .find_map(|l| l.strip_prefix("id: "))
        .filter(|id| id != answer_id)
        .unwrap_or_else(|| panic!("a priming id before the answer: {raw}"));
    let resumed = on_b.resume(priming, 1).await;
    assert_eq!(resumed, vec![(answer_id.clone(), answer.clone())]);
    assert_eq!(client.resume(priming, 0).await, Vec::<Event>::new());
}

/// An in-process instance serving `options` over HTTP with its sessions in the store.
async fn http_instance(
    redis: &Redis,
    options: surface::mcp::HttpOptions,
) -> (surface::mcp::HttpServer, SocketAddr) {
    let (ops, store) = instance(redis);
    let served = ops::mcp_server(ops).start().expect("the ops server composes");
    let http = served
        .serve_http(options.store(&store))
        .await
        .expect("it serves HTTP");
    let addr = http.local_addr();
    (http, addr)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_session_restored_on_another_instance_counts_against_its_cap_and_deletes_there() {
    let Some(redis) =
        Redis::start("a_session_restored_on_another_instance_counts_against_its_cap_and_deletes_there")
    else {
        return;
    };
    let (_a, a_addr) = http_instance(&redis, surface::mcp::HttpOptions::loopback(0)).await;
    let (_b, b_addr) = http_instance(&redis, surface::mcp::HttpOptions::loopback(0).max_sessions(1)).await;
    let (one, two) = (Session::open(a_addr).await, Session::open(a_addr).await);
    let own = Session::open(b_addr).await;
    // B is full: restoring A's session there would pass its cap.
    let tools = json!({"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": {}}).to_string();
    let refused = exchange(b_addr, &one.on(b_addr).headers(), &tools).await;
    assert!(refused.starts_with("HTTP/1.1 503"), "{refused}");
    assert!(refused.contains("already holds 1 sessions"), "{refused}");
    // Once B's own session ends, A's is restored there and served.
    let ended =
        common::raw_http::exchange(b_addr, "DELETE", &own.headers(), "", Duration::from_secs(10)).await;
    assert!(ended.starts_with("HTTP/1.1 200"), "{ended}");
    assert!(
        one.on(b_addr)
            .tool_names()
            .await
            .contains(&"proc_spawn".to_owned())
    );
    // A DELETE through B of a session only A holds ends it in the store: 200, not 404, and no
    // instance can restore it afterwards.
    let deleted = common::raw_http::exchange(
        b_addr,
        "DELETE",
        &two.on(b_addr).headers(),
        "",
        Duration::from_secs(10),
    )
    .await;
    assert!(deleted.starts_with("HTTP/1.1 200"), "{deleted}");
    let (_c, c_addr) = http_instance(&redis, surface::mcp::HttpOptions::loopback(0)).await;
    let gone = exchange(c_addr, &two.on(c_addr).headers(), &tools).await;
    assert!(gone.starts_with("HTTP/1.1 404"), "{gone}");
    // ...nor can A, which still held it: a delete ends a session everywhere.
    let gone = exchange(a_addr, &two.headers(), &tools).await;
    assert!(gone.starts_with("HTTP/1.1 404"), "{gone}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_session_deleted_on_one_instance_is_gone_on_every_instance_that_served_it() {
    let Some(redis) =
        Redis::start("a_session_deleted_on_one_instance_is_gone_on_every_instance_that_served_it")
    else {
        return;
    };
    let (_a, a_addr) = http_instance(&redis, surface::mcp::HttpOptions::loopback(0)).await;
    let (_b, b_addr) = http_instance(&redis, surface::mcp::HttpOptions::loopback(0)).await;
    let tools = json!({"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": {}}).to_string();
    for (deleter, other) in [(a_addr, b_addr), (b_addr, a_addr)] {
        // Opened on A and served by B too (restored there): both hold it.
        let session = Session::open(a_addr).await;
        for addr in [a_addr, b_addr] {
            let served = exchange(addr, &session.on(addr).headers(), &tools).await;
            assert!(served.starts_with("HTTP/1.1 200"), "{served}");
        }
        let deleted = common::raw_http::exchange(
            deleter,
            "DELETE",
            &session.on(deleter).headers(),
            "",
            Duration::from_secs(10),
        )
        .await;
        assert!(deleted.starts_with("HTTP/1.1 200"), "{deleted}");
        // POST, GET and DELETE on the instance that did not delete it: 404, as on the deleter.
        for addr in [other, deleter] {
            let here = session.on(addr);
            let headers = here.headers();
            let post = exchange(addr, &headers, &tools).await;
            assert!(post.starts_with("HTTP/1.1 404"), "POST after DELETE: {post}");
            let listen = [headers[0], headers[1], ("Accept", "text/event-stream")];
            let get = common::raw_http::exchange(addr, "GET", &listen, "", Duration::from_secs(10)).await;
            assert!(get.starts_with("HTTP/1.1 404"), "GET after DELETE: {get}");
            let again =
                common::raw_http::exchange(addr, "DELETE", &headers, "", Duration::from_secs(10)).await;
            assert!(again.starts_with("HTTP/1.1 404"), "DELETE after DELETE: {again}");
        }
    }
}

// ---- the scale-out benchmark (bench/scaleout runs it in release; ignored by default) ----

/// One keep-alive connection's worth of calls: `tools/call name args` `calls` times, each
/// answered before the next; the latency of each, and how many answered `isError`.
async fn worker(addr: SocketAddr, tool: &str, args: &Value, calls: usize) -> (Vec<Duration>, usize) {
    let session = Session::open(addr).await;
    let mut stream = tokio::io::BufReader::new(tokio::net::TcpStream::connect(addr).await.unwrap());
    let mut latencies = Vec::with_capacity(calls);
    let mut errors = 0;
    for i in 0..calls {
        let body = json!({"jsonrpc": "2.0", "id": i + 1, "method": "tools/call",
            "params": {"name": tool, "arguments": args}})
        .to_string();
        let request = format!(
            "POST /mcp HTTP/1.1\r\nHost: {addr}\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\nMcp-Session-Id: {}\r\nMCP-Protocol-Version: 2025-11-25\r\nContent-Length: {}\r\n\r\n{body}",
            session.id,
            body.len()
        );
        let started = Instant::now();
        stream.get_mut().write_all(request.as_bytes()).await.unwrap();
        // The head, then a chunked SSE body that ends after the answer, or a JSON answer of
        // a stated length (plain calls answered without rmcp's streams).
        let mut line = String::new();
        let (mut chunked, mut length) = (false, None);
        loop {
            line.clear();
            stream.read_line(&mut line).await.unwrap();
            if line == "\r\n" {
                break;
            }
            let lower = line.to_ascii_lowercase();
            chunked |= lower.starts_with("transfer-encoding: chunked");
            if let Some(n) = lower.strip_prefix("content-length:") {
                length = n.trim().parse::<usize>().ok();
            }
        }
        let mut answer = Vec::new();
        if !chunked {
            answer.resize(length.expect("a chunked or a sized answer"), 0);
            stream.read_exact(&mut answer).await.unwrap();
        }
        while chunked {
            line.clear();
            stream.read_line(&mut line).await.unwrap();
            let size = usize::from_str_radix(line.trim(), 16).unwrap();
            let mut chunk = vec![0; size + 2];
            stream.read_exact(&mut chunk).await.unwrap();
            answer.extend_from_slice(&chunk[..size]);
            chunked = size != 0;
        }
        latencies.push(started.elapsed());
        let answer = String::from_utf8_lossy(&answer);
        assert!(answer.contains("\"isError\":"), "a tool answer: {answer}");
        errors += usize::from(!answer.contains("\"isError\":false"));
    }
    (latencies, errors)
}

/// `workers` connections spread round-robin over `addrs`, `calls` each: calls/s, p50, p99 and
/// how many answered `isError`.
async fn load(
    addrs: &[SocketAddr],
    tool: &str,
    args: Value,
    workers: usize,
    calls: usize,
) -> (f64, Duration, Duration, usize) {
    let started = Instant::now();
    let tasks: Vec<_> = (0..workers)
        .map(|w| {
            let (addr, tool, args) = (addrs[w % addrs.len()], tool.to_owned(), args.clone());
            tokio::spawn(async move { worker(addr, &tool, &args, calls).await })
        })
        .collect();
    let (mut all, mut errors) = (Vec::new(), 0);
    for t in tasks {
        let (latencies, failed) = t.await.unwrap();
        all.extend(latencies);
        errors += failed;
    }
    let elapsed = started.elapsed();
    all.sort();
    let at = |q: f64| all[((all.len() as f64 * q) as usize).min(all.len() - 1)];
    (
        all.len() as f64 / elapsed.as_secs_f64(),
        at(0.50),
        at(0.99),
        errors,
    )
}

/// calls/s and p99 of the same pipelined load (`SCALEOUT_WORKERS` connections, default 16,
/// each with one call in flight, `SCALEOUT_CALLS` calls each, default 500) on one instance in
/// memory, and on one, two and three instances sharing one Redis; for a read (`load_sample`:
/// one Redis round trip) and a write (`proc_spawn`: four when nothing conflicts), each call also
/// reading its session's liveness.
#[tokio::test(flavor = "multi_thread")]
#[ignore = "a benchmark: bench/scaleout runs it in release"]
async fn scaleout_benchmark() {
    let env = |name, default| {
        std::env::var(name)
            .ok()
            .and_then(|v| v.parse().ok())
            .unwrap_or(default)
    };
    // `always` (every write fsynced before Redis answers) unless SCALEOUT_FSYNC says otherwise.
    let fsync = std::env::var("SCALEOUT_FSYNC").unwrap_or_else(|_| "always".to_owned());
    let Some(redis) = Redis::start_with("scaleout_benchmark", &fsync) else {
        return;
    };
    let (workers, calls): (usize, usize) = (env("SCALEOUT_WORKERS", 16), env("SCALEOUT_CALLS", 500));
    let bin = std::env::var_os("SCALEOUT_OPS").map_or_else(ops_binary, PathBuf::from);
    println!(
        "scaleout: {workers} connections x {calls} calls, one call in flight on each; redis-server appendfsync {fsync}"
    );
    println!("| instances | store | tool | calls/s | p50 ms | p99 ms | isError |");
    println!("|---|---|---|---|---|---|---|");
    // SCALEOUT_STORES=redis1 (say) runs one row group only: for a profile of it.
    let only = std::env::var("SCALEOUT_STORES").ok().filter(|o| !o.is_empty());
    for (n, store) in [(1, "memory"), (1, "redis"), (2, "redis"), (3, "redis")] {
        if only
            .as_ref()
            .is_some_and(|o| !o.split(',').any(|w| w == format!("{store}{n}")))
        {
            continue;
        }
        let mut children = Vec::new();
        let mut addrs = Vec::new();
        for _ in 0..n {
            let (child, addr) = if store == "memory" {
                common::raw_http::spawn_serving(&bin, &["--http", "127.0.0.1:0"]).await
            } else {
                ops_instance(&bin, &redis).await
            };
            children.push(child);
            addrs.push(addr);
        }
        for (tool, args) in [
            ("load_sample", json!({})),
            ("proc_spawn", json!({"name": "bench"})),
        ] {
            load(&addrs, tool, args.clone(), workers, calls / 10).await; // warm-up
            let (rate, p50, p99, errors) = load(&addrs, tool, args, workers, calls).await;
            let ms = |d: Duration| d.as_secs_f64() * 1e3;
            println!(
                "| {n} | {store} | {tool} | {rate:.0} | {:.2} | {:.2} | {errors} |",
                ms(p50),
                ms(p99)
            );
        }
    }
}

/// `bundle --http 127.0.0.1:0 --redis URL` (built with the `redis` feature).
async fn bundle_instance(redis: &Redis) -> (tokio::process::Child, SocketAddr) {
    let status = Command::new(env!("CARGO"))
        .args(["build", "--quiet", "--features", "redis", "--example", "bundle"])
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .status()
        .expect("cargo runs");
    assert!(status.success(), "bundle builds with the redis feature");
    let bin = ops_binary().with_file_name("bundle");
    let url = redis.url();
    common::raw_http::spawn_serving(&bin, &["--http", "127.0.0.1:0", "--redis", &url]).await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_reroster_through_one_instance_recomposes_every_instance() {
    let Some(redis) = Redis::start("a_reroster_through_one_instance_recomposes_every_instance") else {
        return;
    };
    let (_a, a_addr) = bundle_instance(&redis).await;
    let (_b, b_addr) = bundle_instance(&redis).await;
    let (on_a, on_b) = (Session::open(a_addr).await, Session::open(b_addr).await);
    let mut a_lists = on_a
        .notifications("notifications/tools/list_changed", |_| ())
        .await;
    let mut b_lists = on_b
        .notifications("notifications/tools/list_changed", |_| ())
        .await;
    tokio::time::sleep(Duration::from_millis(300)).await;
    assert!(on_b.tool_names().await.contains(&"b_ops_run".to_owned()));

    let set = on_a.call("roster_set", json!({"keys": ["a", "c"]})).await;
    assert_eq!(set["isError"], false, "{set}");
    for (name, lists) in [("A", &mut a_lists), ("B", &mut b_lists)] {
        let heard = tokio::time::timeout(Duration::from_secs(10), lists.recv()).await;
        assert!(
            matches!(heard, Ok(Some(()))),
            "{name}'s session hears list_changed"
        );
    }
    let (a_tools, b_tools) = (on_a.tool_names().await, on_b.tool_names().await);
    assert_eq!(a_tools, b_tools, "both instances serve the same roster");
    assert!(b_tools.contains(&"c_ops_run".to_owned()), "{b_tools:?}");
    assert!(!b_tools.contains(&"b_ops_run".to_owned()), "{b_tools:?}");
    assert_eq!(
        on_b.call("c_ops_run", json!({})).await["structuredContent"]["value"],
        "c",
        "the new tenant answers on B"
    );

    // The retired name: refused with the same sentence on every instance.
    let retired = json!({"name": "b_ops_run", "arguments": {}});
    let on_a_refusal = on_a.request("tools/call", retired.clone()).await;
    let on_b_refusal = on_b.request("tools/call", retired.clone()).await;
    let sentence = |v: &Value| {
        v["error"]["message"]
            .as_str()
            .map(str::to_owned)
            .unwrap_or_else(|| text(&v["result"]))
    };
    assert!(sentence(&on_a_refusal).contains("b_ops_run"), "{on_a_refusal}");
    assert_eq!(sentence(&on_a_refusal), sentence(&on_b_refusal));

    // A third instance started now replays the roster history: same tools, same tombstones.
    let (_c, c_addr) = bundle_instance(&redis).await;
    let on_c = Session::open(c_addr).await;
    assert_eq!(on_c.tool_names().await, a_tools);
    let on_c_refusal = on_c.request("tools/call", retired).await;
    assert_eq!(sentence(&on_c_refusal), sentence(&on_a_refusal));
}

/// A store URL nothing answers at, or that is not a Redis URL, is one sentence naming the URL
/// and the cause, and exit 1: never a panic (dropping the store's runtime inside the caller's
/// panicked). Needs no redis-server.
#[test]
fn an_unreachable_or_malformed_store_url_is_a_sentence_and_exit_1() {
    let bin = ops_binary();
    for url in [
        "redis://127.0.0.1:1/",
        "unix:///nonexistent/redis.sock",
        "redis+unix:///nonexistent/redis.sock",
        "notaurl",
    ] {
        let out = Command::new(&bin)
            .args(["--http", "127.0.0.1:0", "--redis", url])
            .stdin(Stdio::null())
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(1), "{url}: {stderr}");
        assert!(!stderr.contains("panicked"), "{url}: {stderr}");
        let lines: Vec<&str> = stderr.lines().collect();
        assert_eq!(lines.len(), 1, "{url}: one sentence: {stderr}");
        assert!(
            lines[0].starts_with("ops: ") && lines[0].contains(url),
            "{url}: {stderr}"
        );
    }
}

/// The same in-process, from inside a runtime as a server's `main` is.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn connecting_inside_a_runtime_to_nothing_fails_without_a_panic() {
    let e = RedisStore::connect("redis://127.0.0.1:1/", "ops").unwrap_err();
    assert!(e.to_string().contains("redis://127.0.0.1:1/"), "{e}");
}

/// Tokens for the owner test: `alice-…` are alice's (any number of them), `mallory` mallory's.
struct Named;

/// A loopback endpoint whose tokens `Named` verifies.
fn protected() -> surface::mcp::HttpOptions {
    surface::mcp::HttpOptions::loopback(0)
        .auth(surface::auth::Auth::custom(Named).with_resource("http://127.0.0.1/mcp"))
}

impl surface::auth::TokenVerifier for Named {
    async fn verify(&self, token: &str) -> Result<surface::Principal, surface::auth::Refusal> {
        let subject = match token {
            t if t.starts_with("alice-") => "alice",
            "mallory" => "mallory",
            _ => return Err(surface::auth::Refusal::new("unknown token")),
        };
        Ok(surface::Principal::new("https://issuer.test", subject).with_scopes(["ops.read", "ops.admin"]))
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_session_belongs_to_its_subject_on_every_instance() {
    let Some(redis) = Redis::start("a_session_belongs_to_its_subject_on_every_instance") else {
        return;
    };
    let (_a, a_addr) = http_instance(&redis, protected()).await;
    let (_b, b_addr) = http_instance(&redis, protected()).await;
    let (_c, c_addr) = http_instance(&redis, protected()).await;
    let post = |addr: SocketAddr, token: &'static str, session: Option<String>, body: Value| async move {
        let bearer = format!("Bearer {token}");
        let mut headers = vec![
            ("Authorization", bearer.as_str()),
            ("MCP-Protocol-Version", "2025-11-25"),
        ];
        if let Some(s) = &session {
            headers.push(("Mcp-Session-Id", s));
        }
        exchange(addr, &headers, &body.to_string()).await
    };
    let init = json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
        "protocolVersion": "2025-11-25", "capabilities": {},
        "clientInfo": {"name": "owners", "version": "0"}}});
    let opened = post(a_addr, "alice-1", None, init).await;
    assert!(opened.starts_with("HTTP/1.1 200"), "{opened}");
    let session = opened
        .lines()
        .find_map(|l| {
            let (name, value) = l.split_once(':')?;
            name.eq_ignore_ascii_case("mcp-session-id")
                .then(|| value.trim().to_owned())
        })
        .expect("a session id");
    let initialized = json!({"jsonrpc": "2.0", "method": "notifications/initialized"});
    post(a_addr, "alice-1", Some(session.clone()), initialized).await;
    let list = json!({"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": {}});
    // Another subject is told the session does not exist, on an instance that has not seen it
    // yet as on the one that opened it.
    for addr in [c_addr, a_addr] {
        let stolen = post(addr, "mallory", Some(session.clone()), list.clone()).await;
        assert!(stolen.starts_with("HTTP/1.1 404"), "mallory on {addr}: {stolen}");
    }
    // Its subject, with another of its tokens, continues it on another instance.
    let continued = post(b_addr, "alice-2", Some(session.clone()), list.clone()).await;
    assert!(continued.starts_with("HTTP/1.1 200"), "{continued}");
    assert!(answer_of(&continued)["result"]["tools"].is_array(), "{continued}");
    // Once restored there, the session is still refused to another subject.
    let stolen = post(b_addr, "mallory", Some(session.clone()), list.clone()).await;
    assert!(stolen.starts_with("HTTP/1.1 404"), "{stolen}");
    // And on the instance that refused mallory before, alice is served.
    let continued = post(c_addr, "alice-3", Some(session.clone()), list).await;
    assert!(continued.starts_with("HTTP/1.1 200"), "{continued}");
}

/// A task is its creator's on every instance: created by alice through A, it is "not found"
/// for mallory through B (exactly as an unknown id), and alice reads and cancels it there.
/// (`tests/tasks_redis.rs` has the rest of tasks across instances.)
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_task_belongs_to_its_subject_on_every_instance() {
    let Some(redis) = Redis::start("a_task_belongs_to_its_subject_on_every_instance") else {
        return;
    };
    let (_a, a_addr) = http_instance(&redis, protected()).await;
    let (_b, b_addr) = http_instance(&redis, protected()).await;
    let ask = |addr: SocketAddr, token: &'static str, method: &'static str, mut params: Value| async move {
        params["_meta"] = json!({
            "io.modelcontextprotocol/protocolVersion": "2026-07-28",
            "io.modelcontextprotocol/clientCapabilities":
                {"extensions": {"io.modelcontextprotocol/tasks": {}}},
            "io.modelcontextprotocol/clientInfo": {"name": "owners", "version": "0"}
        });
        let name = params["name"]
            .as_str()
            .or(params["taskId"].as_str())
            .unwrap_or_default()
            .to_owned();
        let bearer = format!("Bearer {token}");
        let headers = [
            ("Authorization", bearer.as_str()),
            ("MCP-Protocol-Version", "2026-07-28"),
            ("Mcp-Method", method),
            ("Mcp-Name", name.as_str()),
        ];
        let body = json!({"jsonrpc": "2.0", "id": 1, "method": method, "params": params});
        answer_of(&exchange(addr, &headers, &body.to_string()).await)
    };
    let created = ask(
        a_addr,
        "alice-1",
        "tools/call",
        json!({"name": "proc_wait", "arguments": {"pid": 1}}),
    )
    .await;
    let id = created["result"]["taskId"].as_str().expect("a task").to_owned();
    let unknown = ask(b_addr, "mallory", "tasks/get", json!({"taskId": "0123"})).await;
    for method in ["tasks/get", "tasks/cancel"] {
        let stolen = ask(b_addr, "mallory", method, json!({"taskId": id})).await;
        assert_eq!(stolen["error"]["code"], unknown["error"]["code"], "{stolen}");
        assert_eq!(
            stolen["error"]["message"].as_str().unwrap(),
            unknown["error"]["message"].as_str().unwrap().replace("0123", &id),
            "{method}: {stolen}"
        );
    }
    let seen = ask(b_addr, "alice-2", "tasks/get", json!({"taskId": id})).await;
    assert_eq!(seen["result"]["status"], "working", "{seen}");
    let cancelled = ask(b_addr, "alice-2", "tasks/cancel", json!({"taskId": id})).await;
    assert!(cancelled.get("result").is_some(), "{cancelled}");
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        let task = ask(b_addr, "alice-3", "tasks/get", json!({"taskId": id})).await;
        if task["result"]["status"] == "cancelled" {
            break;
        }
        assert!(Instant::now() < deadline, "never cancelled: {task}");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}
