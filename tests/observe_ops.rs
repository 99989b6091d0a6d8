//! What an operator sees: the ops example with `--metrics 127.0.0.1:0`, driven over its real
//! stdio through a known sequence of requests, then scraped as Prometheus text.

mod common;

use common::stdio::Wire;
use serde_json::json;
use std::net::SocketAddr;
use std::time::Duration;
use surface::mcp::observe;
use tokio::io::{AsyncBufReadExt, AsyncReadExt, AsyncWriteExt, BufReader};

/// Starts ops on stdio with `--metrics 127.0.0.1:0`: the child and where its metrics are.
async fn ops_with_metrics() -> (Wire, SocketAddr) {
    let mut wire = Wire::start_with(&["--metrics", "127.0.0.1:0"], &[], true);
    let mut stderr = BufReader::new(wire.child.stderr.take().unwrap()).lines();
    let addr = tokio::time::timeout(Duration::from_secs(60), async {
        while let Some(line) = stderr.next_line().await.unwrap() {
            if let Some(rest) = line.strip_prefix("ops: serving Prometheus metrics on ") {
                return rest.split_whitespace().next().unwrap().parse().unwrap();
            }
        }
        panic!("ops exited without serving metrics");
    })
    .await
    .expect("ops reports its metrics address");
    // Keep draining stderr (the handlers print there) so the child never blocks on it.
    tokio::spawn(async move { while let Ok(Some(_)) = stderr.next_line().await {} });
    (wire, addr)
}

/// `GET /metrics`: the body of a 200.
async fn scrape(addr: SocketAddr) -> String {
    let mut stream = tokio::net::TcpStream::connect(addr).await.unwrap();
    stream
        .write_all(b"GET /metrics HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n")
        .await
        .unwrap();
    let mut raw = String::new();
    tokio::time::timeout(Duration::from_secs(20), stream.read_to_string(&mut raw))
        .await
        .expect("the scrape answers in time")
        .unwrap();
    let (head, body) = raw.split_once("\r\n\r\n").expect("an HTTP answer");
    assert!(head.starts_with("HTTP/1.1 200"), "{head}");
    body.to_owned()
}

/// The value of the sample `name{labels}` (labels in the exporter's order), if present.
fn sample(text: &str, name: &str, labels: &[(&str, &str)]) -> Option<f64> {
    let labels: Vec<String> = labels.iter().map(|(k, v)| format!("{k}=\"{v}\"")).collect();
    let series = match labels.is_empty() {
        true => name.to_owned(),
        false => format!("{name}{{{}}}", labels.join(",")),
    };
    text.lines()
        .find_map(|line| line.strip_prefix(&series)?.strip_prefix(' '))
        .map(|v| v.trim().parse().unwrap())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn scraped_metrics_count_a_known_sequence_of_calls() {
    let (mut wire, addr) = ops_with_metrics().await;
    wire.initialize().await;
    let list = wire.request(1, "tools/list", json!({})).await;
    assert!(list["result"]["tools"].is_array(), "{list}");
    // Two calls that succeed, one answered `isError`, one for a name not served.
    for id in [2, 3] {
        let spawned = wire
            .request(
                id,
                "tools/call",
                json!({"name": "proc_spawn", "arguments": {"name": "vim"}}),
            )
            .await;
        assert_eq!(spawned["result"]["isError"], false, "{spawned}");
    }
    let refused = wire
        .request(
            4,
            "tools/call",
            json!({"name": "proc_kill", "arguments": {"pid": 4242}}),
        )
        .await;
    assert_eq!(refused["result"]["isError"], true, "{refused}");
    let unknown = wire
        .request(5, "tools/call", json!({"name": "no_such_tool", "arguments": {}}))
        .await;
    assert!(unknown["error"].is_object(), "{unknown}");
    let subscribed = wire
        .request(6, "resources/subscribe", json!({"uri": "surface://cells/load"}))
        .await;
    assert!(subscribed["result"].is_object(), "{subscribed}");

    let text = scrape(addr).await;
    let calls = |tool, outcome| {
        sample(
            &text,
            observe::TOOL_CALLS,
            &[(observe::TOOL, tool), (observe::OUTCOME, outcome)],
        )
    };
    assert_eq!(calls("proc_spawn", observe::OK), Some(2.0), "{text}");
    assert_eq!(calls("proc_kill", observe::ERROR), Some(1.0), "{text}");
    // A name the server does not serve is counted under one label, whatever the client sent.
    assert_eq!(calls("unknown", observe::REFUSED), Some(1.0), "{text}");
    assert!(!text.contains("no_such_tool"), "{text}");
    // The latency of each (the exporter renders the histogram as a summary with a count).
    let latencies = sample(
        &text,
        &format!("{}_count", observe::TOOL_CALL_DURATION),
        &[(observe::TOOL, "proc_spawn"), (observe::OUTCOME, observe::OK)],
    );
    assert_eq!(latencies, Some(2.0), "{text}");
    assert_eq!(sample(&text, observe::SESSIONS, &[]), Some(1.0), "{text}");
    assert_eq!(sample(&text, observe::SUBSCRIPTIONS, &[]), Some(1.0), "{text}");
    // Nothing is being answered while the scrape runs (every request above was answered).
    assert_eq!(
        sample(&text, observe::REQUESTS_IN_FLIGHT, &[]),
        Some(0.0),
        "{text}"
    );
    assert!(
        text.contains(&format!("# HELP {} ", observe::TOOL_CALLS)),
        "{text}"
    );

    // Unsubscribing ends the watch: the gauge follows.
    let unsubscribed = wire
        .request(7, "resources/unsubscribe", json!({"uri": "surface://cells/load"}))
        .await;
    assert!(unsubscribed["result"].is_object(), "{unsubscribed}");
    let text = scrape(addr).await;
    assert_eq!(sample(&text, observe::SUBSCRIPTIONS, &[]), Some(0.0), "{text}");
}
