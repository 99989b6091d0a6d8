//! Asks under a hostile or broken host, on a legacy session over raw stdio lines: answers to
//! the server's own requests are always read (more asking calls than `max_in_flight` complete,
//! and `ping` is answered), an ask that gets no answer ends at `McpServer::ask_timeout`, and
//! an answer that cannot be read fails the ask at once. Each way the tool sees `AskError` and
//! the call ends.

mod common;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};
use std::convert::Infallible;
use std::sync::Arc;
use std::time::{Duration, Instant};
use surface::ask::Elicitation;
use surface::context::ToolContext;
use surface::mcp::{BundleClient, McpServer, Member, ServedMcp};
use surface::{Elicit, Expose, Failure, expose, surface, tool};
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader, DuplexStream, ReadHalf, WriteHalf};

/// A desk that asks its host for names.
#[surface]
pub struct Desk {
    /// How many names were given.
    #[cell]
    pub given: u32,
}

/// Nothing.
#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]
pub struct Nothing {}

#[surface]
impl Desk {
    /// Does nothing.
    #[procedure("desk.noop")]
    pub async fn noop(&self, _input: Nothing) -> Result<(), Infallible> {
        Ok(())
    }
}

const EXPOSE: Expose<Desk> = expose!(Desk { given: resource });

/// A name.
#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema, Elicit)]
pub struct Name {
    /// The name.
    pub name: String,
}

/// Input of `ask_name`.
#[derive(Clone, Debug, Deserialize, JsonSchema)]
pub struct AskArgs {
    /// Which call this is.
    pub n: u32,
}

/// Asks the host for a name; answers it, what the user did instead, or why the ask failed.
#[tool(read_only)]
pub async fn ask_name(args: AskArgs, _client: &DeskClient, ctx: ToolContext) -> Result<String, Failure> {
    Ok(match ctx.elicit::<Name>(format!("Name {}?", args.n)).await {
        Ok(Elicitation::Accept(name)) => name.name,
        Ok(other) => other.action().to_string(),
        Err(e) => format!("ask failed: {e}"),
    })
}

fn served(max_in_flight: usize, ask_timeout: Duration) -> ServedMcp {
    let desk = Arc::new(Desk {
        given: surface::Cell::new(0),
    });
    McpServer::new("desk", "0.0.0")
        .max_in_flight(max_in_flight)
        .ask_timeout(ask_timeout)
        .core(Member::new(EXPOSE).tool(AskNameTool))
        .client(move || BundleClient::with_core(DeskClient::direct(desk.clone())))
        .start()
        .unwrap()
}

/// A legacy session that can be asked, over an in-process pipe, one raw line at a time.
struct Host {
    write: WriteHalf<DuplexStream>,
    read: BufReader<ReadHalf<DuplexStream>>,
}

impl Host {
    async fn open(served: &ServedMcp) -> Host {
        let (read, write) = tokio::io::split(common::pipe(served, 1 << 22));
        let mut host = Host {
            write,
            read: BufReader::new(read),
        };
        host.send(
            json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
            "protocolVersion": "2025-06-18", "capabilities": {"elicitation": {}},
            "clientInfo": {"name": "host", "version": "0"}}}),
        )
        .await;
        let init = host.next().await;
        assert_eq!(init["id"], 0, "{init}");
        host.send(json!({"jsonrpc": "2.0", "method": "notifications/initialized"}))
            .await;
        host
    }

    async fn send(&mut self, message: Value) {
        self.raw(&serde_json::to_vec(&message).unwrap()).await;
    }

    async fn raw(&mut self, line: &[u8]) {
        self.write.write_all(line).await.unwrap();
        self.write.write_all(b"\n").await.unwrap();
    }

    async fn next(&mut self) -> Value {
        let mut line = String::new();
        let n = tokio::time::timeout(Duration::from_secs(30), self.read.read_line(&mut line))
            .await
            .expect("the server writes within 30 s")
            .unwrap();
        assert!(n > 0, "the server closed");
        serde_json::from_str(&line).unwrap_or_else(|e| panic!("{line:?}: {e}"))
    }

    async fn call(&mut self, id: u64) {
        self.send(json!({"jsonrpc": "2.0", "id": id, "method": "tools/call",
            "params": {"name": "ask_name", "arguments": {"n": id}}}))
            .await;
    }
}

/// What `ask_name` answered.
fn text(result: &Value) -> &str {
    result["result"]["structuredContent"]["value"]
        .as_str()
        .unwrap_or_default()
}

/// More asking calls than `max_in_flight`: every ask is answered, after all the calls were
/// sent, so the answers sit behind calls waiting for a permit. Up to the bound's worth of
/// calls wait their turn and complete; calls read past that (only to reach the answers) are
/// refused at once with -32000; every call is answered and a `ping` sent last too.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn answers_to_asks_are_read_past_the_in_flight_bound() {
    const BOUND: usize = 8;
    const CALLS: u64 = 20;
    let served = served(BOUND, Duration::from_secs(120));
    let mut host = Host::open(&served).await;
    for id in 1..=CALLS {
        host.call(id).await;
    }
    let started = Instant::now();
    let mut done = std::collections::BTreeMap::new();
    let mut busy = 0;
    let mut asked = 0;
    while done.len() < CALLS as usize {
        let message = host.next().await;
        if message["method"] == "elicitation/create" {
            asked += 1;
            let n = message["params"]["message"].as_str().unwrap().to_owned();
            host.send(json!({"jsonrpc": "2.0", "id": message["id"], "result":
                {"action": "accept", "content": {"name": n}}}))
                .await;
        } else if message["error"]["code"] == -32000 {
            busy += 1;
            let id = message["id"].as_u64().unwrap();
            done.insert(id, message["error"]["message"].as_str().unwrap().to_owned());
        } else if let Some(id) = message["id"].as_u64() {
            assert_eq!(text(&message), format!("Name {id}?"), "{message}");
            done.insert(id, text(&message).to_owned());
        }
    }
    // Read past the bound (more than BOUND calls asked), yet bounded: at most BOUND in flight
    // and BOUND waiting their turn; the rest refused. Where in that range the split falls
    // depends on when the first ask went out relative to the reads, which load moves.
    let bound = BOUND as u64;
    assert!(asked > bound && asked <= 2 * bound, "asked {asked}: {done:?}");
    assert_eq!(asked + busy, CALLS, "{done:?}");
    host.send(json!({"jsonrpc": "2.0", "id": 999, "method": "ping"}))
        .await;
    assert_eq!(host.next().await["id"], 999);
    assert!(started.elapsed() < Duration::from_secs(20));
}

/// A host that never answers: the ask ends at the ask timeout, the host is told the request
/// is cancelled, and the call answers with the tool's view of `AskError`.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_unanswered_ask_ends_at_the_ask_timeout() {
    let served = served(8, Duration::from_secs(1));
    let mut host = Host::open(&served).await;
    let started = Instant::now();
    host.call(1).await;
    let ask = host.next().await;
    assert_eq!(ask["method"], "elicitation/create", "{ask}");
    let mut seen = Vec::new();
    let answer = loop {
        let message = host.next().await;
        if message["id"] == 1 {
            break message;
        }
        seen.push(message);
    };
    // The host is told the ask is over.
    assert_eq!(
        seen,
        [json!({"jsonrpc": "2.0", "method": "notifications/cancelled",
            "params": {"reason": "request timeout", "requestId": ask["id"]}})]
    );
    assert!(
        text(&answer)
            .starts_with("ask failed: asking the client failed: elicitation/create: no answer within 1 s"),
        "{answer}"
    );
    assert!(started.elapsed() < Duration::from_secs(5));
    // The ask is forgotten: an answer that comes late changes nothing, and the session goes on.
    host.send(json!({"jsonrpc": "2.0", "id": ask["id"], "result": {"action": "decline"}}))
        .await;
    host.send(json!({"jsonrpc": "2.0", "id": 2, "method": "ping"}))
        .await;
    assert_eq!(host.next().await["id"], 2);
}

/// Answers the ask with something that cannot be read: the ask fails at once (well before
/// the ask timeout) and the call ends; nothing is written back to the answer.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_unreadable_answer_fails_the_ask_at_once() {
    let served = served(8, Duration::from_secs(120));
    let mut host = Host::open(&served).await;
    for (n, garbage) in [
        json!({"error": {"code": "x"}}),
        json!({"error": {"code": -1}}),
        json!({"result": 5}),
    ]
    .into_iter()
    .enumerate()
    {
        let id = n as u64 + 1;
        let started = Instant::now();
        host.call(id).await;
        let ask = host.next().await;
        assert_eq!(ask["method"], "elicitation/create", "{ask}");
        let mut answer = garbage.clone();
        answer["jsonrpc"] = json!("2.0");
        answer["id"] = ask["id"].clone();
        host.send(answer).await;
        let result = host.next().await;
        assert_eq!(result["id"], id, "{garbage}: {result}");
        assert!(text(&result).starts_with("ask failed: "), "{garbage}: {result}");
        assert!(started.elapsed() < Duration::from_secs(10), "{garbage}");
    }
}

/// How a soaking host answers the server's asks.
#[derive(Clone, Copy, Debug)]
enum Answers {
    /// After a while (up to `SLOW`), accepting.
    Slowly,
    /// Never: each ask ends at the ask timeout.
    Never,
    /// With an error object that cannot be read: each ask fails at once.
    Garbage,
}

const SLOW: Duration = Duration::from_millis(400);

/// One round of a soaking host: `calls` asking calls at once, each ask answered `how`; every
/// call is answered within `bound`, and as the tool saw its ask.
async fn soak_round(host: &mut Host, how: Answers, first_id: u64, calls: u64, bound: Duration) {
    let started = Instant::now();
    for id in first_id..first_id + calls {
        host.call(id).await;
    }
    let mut answered = 0;
    while answered < calls {
        let message = host.next().await;
        if message["method"] == "elicitation/create" {
            let ask = message["id"].clone();
            match how {
                Answers::Slowly => {
                    tokio::time::sleep(SLOW / calls as u32).await;
                    let n = message["params"]["message"].as_str().unwrap().to_owned();
                    host.send(json!({"jsonrpc": "2.0", "id": ask, "result":
                        {"action": "accept", "content": {"name": n}}}))
                        .await;
                }
                Answers::Never => {}
                Answers::Garbage => {
                    host.send(json!({"jsonrpc": "2.0", "id": ask, "error": {"code": "x"}}))
                        .await;
                }
            }
        } else if message["method"] == "notifications/cancelled" {
            // The server giving up an unanswered ask.
        } else if let Some(id) = message["id"].as_u64() {
            let said = text(&message);
            match how {
                Answers::Slowly => assert_eq!(said, format!("Name {id}?"), "{message}"),
                Answers::Never | Answers::Garbage => {
                    assert!(said.starts_with("ask failed: "), "{how:?}: {message}")
                }
            }
            answered += 1;
        }
    }
    assert!(
        started.elapsed() < bound,
        "{how:?}: {calls} calls took {:?}",
        started.elapsed()
    );
}

/// The soak with asks in flight: three hosts on one server for `SOAK_SECS` (default 60), one
/// answering its asks slowly, one never, one with garbage, each keeping 8 asking calls in
/// flight round after round. Every call is answered within its bound (the ask timeout of 1 s
/// plus slack for the one that never answers), and the process's RSS, sampled every second,
/// holds flat: the median of the last tenth of the samples is at most the median of the first
/// tenth after a fifth of warm-up, plus 10% and 2 MiB.
///
/// ```sh
/// SOAK_SECS=600 cargo test --test hardening_asks -- --ignored --nocapture
/// ```
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "a minute or more: SOAK_SECS=60 cargo test --test hardening_asks -- --ignored --nocapture"]
async fn soak_with_asks_in_flight_holds_memory_and_answers_every_call() {
    let secs: u64 = std::env::var("SOAK_SECS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(60);
    let deadline = Instant::now() + Duration::from_secs(secs);
    let served = served(64, Duration::from_secs(1));
    let mut hosts = Vec::new();
    for how in [Answers::Slowly, Answers::Never, Answers::Garbage] {
        let mut host = Host::open(&served).await;
        hosts.push(tokio::spawn(async move {
            let mut rounds = 0u64;
            while Instant::now() < deadline {
                soak_round(&mut host, how, rounds * 8 + 1, 8, Duration::from_secs(15)).await;
                rounds += 1;
            }
            host.send(json!({"jsonrpc": "2.0", "id": 0, "method": "ping"}))
                .await;
            assert_eq!(host.next().await["id"], 0);
            (how, rounds)
        }));
    }
    let mut samples = Vec::new();
    while Instant::now() < deadline {
        samples.push(common::rss_kb(std::process::id()).expect("this process"));
        tokio::time::sleep(Duration::from_secs(1)).await;
    }
    for host in hosts {
        let (how, rounds) = host.await.expect("the host's calls were all answered in time");
        println!("{how:?}: {rounds} rounds of 8 asking calls");
        assert!(rounds > 0, "{how:?}");
    }
    let warm = samples.len() / 5;
    let tenth = (samples.len() / 10).max(1);
    let (early, late) = (
        common::median(&samples[warm..warm + tenth]),
        common::median(&samples[samples.len() - tenth..]),
    );
    println!(
        "RSS: {early} kB after warm-up, {late} kB at the end ({} samples)",
        samples.len()
    );
    assert!(
        late <= early + early / 10 + 2048,
        "RSS grew from {early} kB to {late} kB: {samples:?}"
    );
}
