//! A legacy session's `updated` notifications over Streamable HTTP: written onto the session's
//! standalone `GET` stream (surface-runtime/src/mcp/standalone.rs), each window's as one chunk
//! between rmcp's own events, and nothing lost when the stream ends and the client opens
//! another.

mod common;

#[allow(dead_code)]
#[path = "../examples/ops.rs"]
mod ops;

use common::raw_http::{Listen, legacy_open, legacy_post};
use serde_json::json;
use std::collections::BTreeSet;
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;
use surface::mcp::HttpOptions;

const UPDATED: &str = "notifications/resources/updated";

fn item(pid: u32) -> String {
    format!("surface://collections/processes/{pid}")
}

fn running(pid: u32, name: &str) -> ops::Process {
    ops::Process {
        pid,
        name: name.into(),
        state: "running".into(),
    }
}

async fn serve() -> (Arc<ops::Ops>, surface::mcp::HttpServer, SocketAddr) {
    let surface = Arc::new(ops::Ops::new());
    let served = ops::mcp_server(surface.clone()).start().expect("ops composes");
    let server = served.serve_http(HttpOptions::loopback(0)).await.unwrap();
    let addr = server.local_addr();
    (surface, server, addr)
}

/// A legacy session subscribed to the items `pids`.
async fn watching(addr: SocketAddr, pids: &[u32]) -> String {
    let (session, _) = legacy_open(addr).await;
    for (id, pid) in pids.iter().enumerate() {
        let params = json!({"uri": item(*pid)});
        let request =
            json!({"jsonrpc": "2.0", "id": id + 1, "method": "resources/subscribe", "params": params});
        let answer = legacy_post(addr, &session, &request).await;
        assert_eq!(answer.status, 200, "{answer:?}");
        assert!(answer.message()["result"].is_object(), "{answer:?}");
    }
    session
}

/// The URIs of the `updated` notifications the stream carries until it is quiet for `quiet`.
async fn updated_until_quiet(stream: &mut Listen, quiet: Duration) -> BTreeSet<String> {
    let mut heard = BTreeSet::new();
    while let Some(message) = stream.next_within(quiet).await {
        if message["method"] == UPDATED {
            heard.insert(message["params"]["uri"].as_str().unwrap().to_owned());
        }
    }
    heard
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_window_of_updated_reaches_the_get_stream_whole() {
    let (surface, _server, addr) = serve().await;
    let session = watching(addr, &[1, 2]).await;
    let mut stream = Listen::standalone(addr, &session, None).await;
    // The stream is open once rmcp answers its head; a change made before could go either way.
    tokio::time::sleep(Duration::from_millis(200)).await;
    surface.processes.upsert(1, running(1, "init again"));
    surface.processes.upsert(2, running(2, "shell again"));
    let quiet = Duration::from_secs(1);
    let heard = updated_until_quiet(&mut stream, quiet).await;
    assert_eq!(heard, BTreeSet::from([item(1), item(2)]), "{}", stream.raw());
    assert!(stream.raw().starts_with("HTTP/1.1 200"), "{}", stream.raw());

    // A change to one item: that item's `updated` only.
    surface.processes.upsert(2, running(2, "shell once more"));
    let heard = updated_until_quiet(&mut stream, quiet).await;
    assert_eq!(heard, BTreeSet::from([item(2)]), "{}", stream.raw());
}

/// The id of the last event read so far whose `id` was set (the client's `Last-Event-ID`).
fn last_event_id(stream: &Listen) -> String {
    let mut ids = stream.raw().lines().filter_map(|l| l.strip_prefix("id: "));
    ids.next_back().expect("an event with an id").to_owned()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_stream_opened_after_one_ended_hears_every_watched_uri_again() {
    let (surface, _server, addr) = serve().await;
    let session = watching(addr, &[1, 2]).await;
    let quiet = Duration::from_secs(1);
    let mut first = Listen::standalone(addr, &session, None).await;
    assert_eq!(updated_until_quiet(&mut first, quiet).await, BTreeSet::new());
    let last = last_event_id(&first);
    // The change's `updated` is written to the connection, and the client leaves unread.
    surface.processes.upsert(1, running(1, "init again"));
    tokio::time::sleep(Duration::from_millis(600)).await;
    drop(first);
    tokio::time::sleep(Duration::from_millis(300)).await;
    // Away: a change made now must reach it when it is back too.
    surface.processes.upsert(2, running(2, "shell again"));
    tokio::time::sleep(Duration::from_millis(600)).await;

    let mut second = Listen::standalone(addr, &session, Some(&last)).await;
    let heard = updated_until_quiet(&mut second, quiet).await;
    assert_eq!(heard, BTreeSet::from([item(1), item(2)]), "{}", second.raw());

    // The new stream is the session's: later changes reach it.
    surface.processes.upsert(1, running(1, "init once more"));
    assert_eq!(
        updated_until_quiet(&mut second, quiet).await,
        BTreeSet::from([item(1)]),
        "{}",
        second.raw()
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_second_stream_while_the_first_lives_leaves_the_first_the_session_s() {
    let (surface, _server, addr) = serve().await;
    let session = watching(addr, &[1]).await;
    let quiet = Duration::from_secs(1);
    let mut first = Listen::standalone(addr, &session, None).await;
    tokio::time::sleep(Duration::from_millis(200)).await;
    let mut second = Listen::standalone(addr, &session, None).await;
    tokio::time::sleep(Duration::from_millis(200)).await;
    surface.processes.upsert(1, running(1, "init again"));
    assert_eq!(
        updated_until_quiet(&mut first, quiet).await,
        BTreeSet::from([item(1)]),
        "{}",
        first.raw()
    );
    assert_eq!(
        updated_until_quiet(&mut second, Duration::from_millis(300)).await,
        BTreeSet::new(),
        "rmcp keeps the first live stream as the session's: {}",
        second.raw()
    );
}
