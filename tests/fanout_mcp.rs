//! Fan-out of one member's changes to many watchers: every session and URI watching items of
//! the same collection shares one reader of its feed, and each still hears only its own items.

#[allow(dead_code)]
#[path = "../examples/ops.rs"]
mod ops;

use serde_json::json;
use std::sync::Arc;
use std::time::Duration;
use surface::testing::{Era, Notice, TestClient};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn watchers_of_many_items_share_one_feed_and_hear_only_their_items() {
    let quiet = Duration::from_secs(1);
    let updated = |uri: &str| vec![Notice::Updated(uri.to_owned())];
    for era in Era::ALL {
        let surface = Arc::new(ops::Ops::new());
        let served = ops::mcp_server(surface.clone()).start().expect("ops composes");
        let (a, b) = (
            TestClient::connect(&served, era).await,
            TestClient::connect(&served, era).await,
        );
        let one = "surface://collections/processes/1";
        let two = "surface://collections/processes/2";
        let mut a1 = a.subscribe(one).await.unwrap();
        let mut a2 = a.subscribe(two).await.unwrap();
        let mut b1 = b.subscribe(one).await.unwrap();
        let mut b2 = b.subscribe(two).await.unwrap();
        let mut b_all = b.subscribe("surface://collections/processes").await.unwrap();
        // One reader of the collection's feed, however many sessions and URIs watch it: a write
        // wakes one task, not one per watcher.
        assert_eq!(surface.processes.watchers(), 1, "{era:?}");

        a.call("proc_kill", json!({"pid": 1})).await.value();
        assert_eq!(a1.until_quiet(quiet).await, updated(one), "{era:?}");
        assert_eq!(b1.until_quiet(quiet).await, updated(one), "{era:?}");
        assert_eq!(
            b_all.until_quiet(quiet).await,
            updated("surface://collections/processes"),
            "{era:?}"
        );
        assert_eq!(a2.until_quiet(quiet).await, [], "{era:?}: item 2 did not change");
        assert_eq!(b2.until_quiet(quiet).await, [], "{era:?}: item 2 did not change");

        // Many writes to one item inside the window: one notification per watcher of it.
        for _ in 0..50 {
            surface.processes.upsert(
                2,
                ops::Process {
                    pid: 2,
                    name: "shell".into(),
                    state: "sleeping".into(),
                },
            );
        }
        assert_eq!(a2.until_quiet(quiet).await, updated(two), "{era:?}");
        assert_eq!(b2.until_quiet(quiet).await, updated(two), "{era:?}");
        assert_eq!(a1.until_quiet(quiet).await, [], "{era:?}: item 1 did not change");

        // When every watcher is gone, so is the feed.
        drop((a1, a2, b1, b2, b_all));
        drop((a, b));
        let deadline = tokio::time::Instant::now() + Duration::from_secs(10);
        while surface.processes.watchers() > 0 && tokio::time::Instant::now() < deadline {
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        assert_eq!(
            surface.processes.watchers(),
            0,
            "{era:?}: the feed closed with its last watcher"
        );
    }
}

/// A session's URIs share one debounce window: a URI changed while another's window is open
/// still hears exactly one `updated` for what changed, and a URI nobody changed hears none.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn uris_changed_in_one_window_each_hear_one_updated() {
    let quiet = Duration::from_secs(1);
    for era in Era::ALL {
        let surface = Arc::new(ops::Ops::new());
        let served = ops::mcp_server(surface.clone()).start().expect("ops composes");
        let client = TestClient::connect(&served, era).await;
        let mut one = client.subscribe(&item_uri(1)).await.unwrap();
        let mut two = client.subscribe(&item_uri(2)).await.unwrap();
        let mut three = client.subscribe(&item_uri(3)).await.unwrap();

        surface.processes.upsert(1, shell(1));
        // Inside the window item 1 opened: item 2 joins it, then both change again.
        tokio::time::sleep(Duration::from_millis(80)).await;
        surface.processes.upsert(2, shell(2));
        surface.processes.upsert(1, shell(1));
        surface.processes.upsert(2, shell(2));

        let updated = |pid: u32| vec![Notice::Updated(item_uri(pid))];
        assert_eq!(one.until_quiet(quiet).await, updated(1), "{era:?}");
        assert_eq!(two.until_quiet(quiet).await, updated(2), "{era:?}");
        assert_eq!(
            three.until_quiet(quiet).await,
            [],
            "{era:?}: item 3 did not change"
        );

        // The next change opens a window of its own.
        surface.processes.upsert(2, shell(2));
        assert_eq!(two.until_quiet(quiet).await, updated(2), "{era:?}");
        assert_eq!(
            one.until_quiet(quiet).await,
            [],
            "{era:?}: item 1 did not change again"
        );
    }
}

/// A window holding more URIs than a session sends at once still sends each its one
/// `updated`: the window's notifications leave several at a time, none dropped or doubled.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_window_of_many_uris_sends_each_one_updated() {
    const MANY: u32 = 40;
    let quiet = Duration::from_secs(1);
    for era in Era::ALL {
        let surface = Arc::new(ops::Ops::new());
        for pid in 1000..1000 + MANY {
            surface.processes.upsert(pid, shell(pid));
        }
        let served = ops::mcp_server(surface.clone()).start().expect("ops composes");
        let client = TestClient::connect(&served, era).await;
        let mut watched = Vec::new();
        for pid in 1000..1000 + MANY {
            watched.push((pid, client.subscribe(&item_uri(pid)).await.unwrap()));
        }

        for round in 0..2 {
            for pid in 1000..1000 + MANY {
                surface.processes.upsert(pid, shell(pid));
            }
            // The first wait outlasts the window; the others' notices are in by then.
            let mut wait = quiet;
            for (pid, notices) in &mut watched {
                let heard = notices.until_quiet(wait).await;
                wait = Duration::from_millis(50);
                assert_eq!(
                    heard,
                    vec![Notice::Updated(item_uri(*pid))],
                    "{era:?}, window {round}: item {pid}"
                );
            }
        }
    }
}

/// The URI of one process.
fn item_uri(pid: u32) -> String {
    format!("surface://collections/processes/{pid}")
}

/// A process to upsert.
fn shell(pid: u32) -> ops::Process {
    ops::Process {
        pid,
        name: "shell".into(),
        state: "sleeping".into(),
    }
}
