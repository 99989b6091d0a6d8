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
