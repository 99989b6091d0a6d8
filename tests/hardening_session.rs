//! Bounds a session or a member cannot outgrow: a stream's history, the feeds of a refused
//! listen, subscriptions per session — over the ops example served in-process.

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
