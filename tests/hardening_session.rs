//! Bounds a session or a member cannot outgrow: a stream's history, the feeds of a refused
//! listen, subscriptions per session, requests in flight and the longest line — over the ops
//! example served in-process.

#[allow(dead_code)]
#[path = "../examples/ops.rs"]
mod ops;

mod common;

use common::connect;
use rmcp::model::SubscriptionFilter;
use serde_json::json;
use std::sync::Arc;
use std::time::Duration;
use surface::testing::{Era, Notice, TestClient};
use surface::{STREAM_HISTORY, Stream};

/// One session served over an in-memory pipe (`common::pipe`), spoken to line by line.
struct Lines {
    to_server: tokio::io::WriteHalf<tokio::io::DuplexStream>,
    heard: tokio::io::Lines<tokio::io::BufReader<tokio::io::ReadHalf<tokio::io::DuplexStream>>>,
}

impl Lines {
    fn serve(served: surface::mcp::ServedMcp) -> Lines {
        use tokio::io::AsyncBufReadExt;
        let (from_server, to_server) = tokio::io::split(common::pipe(&served, 1 << 20));
        Lines {
            to_server,
            heard: tokio::io::BufReader::new(from_server).lines(),
        }
    }

    async fn send(&mut self, message: serde_json::Value) {
        use tokio::io::AsyncWriteExt;
        let mut line = serde_json::to_vec(&message).unwrap();
        line.push(b'\n');
        self.to_server.write_all(&line).await.unwrap();
    }

    /// The next message the server writes, within 20 s.
    async fn next(&mut self) -> serde_json::Value {
        let line = tokio::time::timeout(Duration::from_secs(20), self.heard.next_line())
            .await
            .expect("the server speaks in time")
            .unwrap()
            .expect("the connection stays open");
        serde_json::from_str(&line).unwrap()
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_stream_keeps_only_its_recent_history() {
    let surface = Arc::new(ops::Ops::new());
    for n in 0..STREAM_HISTORY + 10 {
        surface.log.push(format!("line {n}"));
    }
    let served = ops::mcp_server(surface.clone()).start().unwrap();
    let client = TestClient::connect(&served, Era::Legacy).await;
    let log = client.read("surface://streams/log").await.unwrap();
    let lines = log.as_array().expect("a stream reads as its snapshot");
    assert_eq!(lines.len(), STREAM_HISTORY);
    assert_eq!(lines[0], json!("line 10"), "the snapshot is the retained tail");
    assert_eq!(
        lines[STREAM_HISTORY - 1],
        json!(format!("line {}", STREAM_HISTORY + 9))
    );

    let short: Stream<u8> = Stream::with_history(3);
    (0..10).for_each(|n| short.push(n));
    assert_eq!(short.snapshot(), vec![7, 8, 9]);
    let none: Stream<u8> = Stream::with_history(0);
    none.push(1);
    assert!(none.snapshot().is_empty());
}

async fn settle(what: impl Fn() -> bool) -> bool {
    for _ in 0..40 {
        if what() {
            return true;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    what()
}

/// A listen naming a URI that does not resolve is refused, and the feeds opened for its other
/// URIs before the refusal close with it (they used to stay open for the session's life).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_refused_listen_lets_go_of_every_feed() {
    let surface = Arc::new(ops::Ops::new());
    let served = ops::mcp_server(surface.clone()).start().unwrap();
    let raw = connect(&served, common::Era::Modern).await;
    assert_eq!(surface.load.watchers(), 0);
    let filter = SubscriptionFilter::builder()
        .resource_subscription("surface://cells/load".to_owned())
        .resource_subscription("surface://cells/nope".to_owned())
        .build();
    match raw.service.listen(filter).await {
        Err(e) => assert!(e.to_string().contains("surface://cells/nope"), "{e}"),
        Ok(mut sub) => {
            let ended = tokio::time::timeout(Duration::from_secs(5), sub.next())
                .await
                .expect("the listen ends");
            assert!(
                ended
                    .as_ref()
                    .is_err_and(|e| e.to_string().contains("surface://cells/nope")),
                "{ended:?}"
            );
        }
    }
    assert!(
        settle(|| surface.load.watchers() == 0).await,
        "{} feeds still watch the load cell",
        surface.load.watchers()
    );

    // A listen that resolves holds its feed.
    let client = TestClient::connect(&served, Era::Modern).await;
    let mut notices = client.subscribe("surface://cells/load").await.unwrap();
    assert!(settle(|| surface.load.watchers() == 1).await);
    surface.load.update(|l| l.procs += 1);
    assert_eq!(
        notices.next().await,
        Some(Notice::Updated("surface://cells/load".into()))
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_subscription_limit_is_a_setting_and_covers_listens() {
    let surface = Arc::new(ops::Ops::new());
    let served = ops::mcp_server(surface.clone())
        .max_subscriptions(2)
        .start()
        .unwrap();
    for era in Era::ALL {
        let client = TestClient::connect(&served, era).await;
        let _load = client.subscribe("surface://cells/load").await.unwrap();
        let _log = client.subscribe("surface://streams/log").await.unwrap();
        // Refused as an answer to the request itself: in 2026-07-28 before the listen is
        // acknowledged, so no stream opens only to end.
        let refused = match client.subscribe("surface://events/autosave").await {
            Err(e) => e.message,
            Ok(mut notices) => panic!(
                "{era:?}: a third URI was acknowledged; then: {:?}",
                notices.next_within(Duration::from_millis(500)).await
            ),
        };
        assert!(refused.contains("2 URIs"), "{era:?}: {refused}");
    }
}

/// A listen cancelled while its feeds open (here, behind a dial that takes seconds) lets go
/// of its place in the subscription limit at once: the next listen for as many URIs is
/// acknowledged before that dial ends.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_listen_cancelled_while_its_feeds_open_lets_go_of_its_place() {
    use surface::mcp::{BundleClient, McpServer, Member, OwnedBundle};
    const DIAL: Duration = Duration::from_secs(4);
    let ops = Arc::new(ops::Ops::new());
    let served = McpServer::new("ops", "0")
        .core(Member::new(ops::EXPOSE))
        .dial(move || {
            let ops = ops.clone();
            async move {
                tokio::time::sleep(DIAL).await;
                Ok(OwnedBundle::new(BundleClient::with_core(ops::OpsClient::direct(
                    ops,
                ))))
            }
        })
        .max_subscriptions(2)
        .start()
        .unwrap();
    let mut session = Lines::serve(served);
    let meta = json!({
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": {},
        "io.modelcontextprotocol/clientInfo": {"name": "t", "version": "0"}
    });
    let listen = |id: u32| {
        json!({"jsonrpc": "2.0", "id": id, "method": "subscriptions/listen", "params": {
            "notifications": {"resourceSubscriptions": ["surface://cells/load", "surface://streams/log"]},
            "_meta": meta.clone()}})
    };
    let started = tokio::time::Instant::now();
    // Whether listen `id` was acknowledged (true) or answered (false: refused).
    let outcome = async |session: &mut Lines, id: u32| loop {
        let message = session.next().await;
        let subscription = &message["params"]["_meta"]["io.modelcontextprotocol/subscriptionId"];
        if message["method"] == "notifications/subscriptions/acknowledged" && *subscription == id {
            return (true, message);
        }
        if message["id"] == id {
            return (false, message);
        }
    };

    session.send(listen(1)).await;
    let (acknowledged, first) = outcome(&mut session, 1).await;
    assert!(acknowledged, "{first}");
    let cancel = json!({"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 1}});
    session.send(cancel).await;
    tokio::time::sleep(Duration::from_millis(300)).await;
    session.send(listen(2)).await;
    let (acknowledged, second) = outcome(&mut session, 2).await;
    assert!(
        acknowledged,
        "the cancelled listen still held its 2 URIs: {second}"
    );
    assert!(
        started.elapsed() < DIAL,
        "acknowledged only once the dial ended ({:?})",
        started.elapsed()
    );
}

/// `max_in_flight` is honoured below its default: an open listen stream holds its request in
/// flight, so with the bound at 2 and two listens open the next request is not read; at 3 it is
/// answered.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_lower_in_flight_setting_is_honoured() {
    for (bound, answered) in [(2, false), (3, true)] {
        let surface = Arc::new(ops::Ops::new());
        let served = ops::mcp_server(surface).max_in_flight(bound).start().unwrap();
        let client = TestClient::connect(&served, Era::Modern).await;
        let _load = client.subscribe("surface://cells/load").await.unwrap();
        let _log = client.subscribe("surface://streams/log").await.unwrap();
        // Generous when it must come, short when it must not (a wrong answer is then fast).
        let wait = Duration::from_secs(if answered { 20 } else { 1 });
        let read = tokio::time::timeout(wait, client.read("surface://cells/load")).await;
        assert_eq!(read.is_ok(), answered, "bound {bound}: {read:?}");
    }
}

/// `max_line` is honoured below its default, for a line read whole and for one longer than a
/// read: each is answered -32600 with its id and the limit, and the connection goes on.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_lower_line_limit_is_honoured() {
    let served = ops::mcp_server(Arc::new(ops::Ops::new()))
        .max_line(1024)
        .start()
        .unwrap();
    let mut session = Lines::serve(served);
    session
        .send(
            json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
        "protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "t", "version": "0"}}}),
        )
        .await;
    session
        .send(json!({"jsonrpc": "2.0", "method": "notifications/initialized"}))
        .await;
    let call = |id: u32, name_len: usize| {
        json!({"jsonrpc": "2.0", "id": id, "method": "tools/call",
            "params": {"name": "proc_spawn", "arguments": {"name": "a".repeat(name_len)}}})
    };
    // 2 KiB arrives in one read; 200 KiB spans several.
    session.send(call(1, 2 * 1024)).await;
    session.send(call(2, 200 * 1024)).await;
    session.send(call(3, 10)).await;
    let mut by_id = std::collections::HashMap::new();
    while by_id.len() < 4 {
        let answer = session.next().await;
        by_id.insert(answer["id"].as_u64().unwrap(), answer);
    }
    for id in [1, 2] {
        let refused = &by_id[&id];
        assert_eq!(refused["error"]["code"], -32600, "{refused}");
        let message = refused["error"]["message"].as_str().unwrap();
        assert!(message.contains("longer than 1024 bytes"), "{message}");
    }
    assert_eq!(by_id[&3]["result"]["isError"], json!(false), "{}", by_id[&3]);
}

/// `close_stall` is honoured below its default: after stdin EOF, answers queued for a reader
/// that never reads again are abandoned once the writer has made no progress for that long
/// (the default, 30 s, would outlast the wait here).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_lower_close_stall_is_honoured() {
    use tokio::io::AsyncWriteExt;
    let served = ops::mcp_server(Arc::new(ops::Ops::new()))
        .close_stall(Duration::from_millis(500))
        .start()
        .unwrap();
    let (server_in, mut to_server) = tokio::io::duplex(1 << 20);
    // Room for a few hundred bytes of answers, and a reader that never reads them.
    let (_never_read, server_out) = tokio::io::duplex(256);
    let connection = served.serve(server_in, server_out);
    let mut lines = serde_json::to_vec(&json!({"jsonrpc": "2.0", "id": 0, "method": "initialize",
        "params": {"protocolVersion": "2025-06-18", "capabilities": {},
        "clientInfo": {"name": "t", "version": "0"}}}))
    .unwrap();
    lines.extend_from_slice(b"\n{\"jsonrpc\":\"2.0\",\"method\":\"notifications/initialized\"}\n");
    for id in 1..=20 {
        lines.extend(
            serde_json::to_vec(&json!({"jsonrpc": "2.0", "id": id, "method": "tools/list"})).unwrap(),
        );
        lines.push(b'\n');
    }
    to_server.write_all(&lines).await.unwrap();
    drop(to_server);
    let started = std::time::Instant::now();
    let ended = tokio::time::timeout(Duration::from_secs(15), async {
        connection.await.unwrap().waiting().await
    })
    .await;
    assert!(
        ended.is_ok(),
        "the stalled writer was still waited for after {:?}",
        started.elapsed()
    );
}
