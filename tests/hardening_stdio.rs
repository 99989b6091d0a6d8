//! The stdio face against hostile input and a slow peer: the ops example as a real child
//! process, driven line by line. Every line that is not a notification gets an answer, every
//! answer to a call that ran reaches the reader, only the canonical spelling of a key
//! addresses an item, and the per-session bounds (requests in flight, subscriptions) cannot be
//! raised by the client.

mod common;

use common::stdio::Wire;
use serde_json::{Value, json};
use std::time::{Duration, Instant};
use tokio::io::{AsyncBufReadExt, AsyncWriteExt};

fn initialize_line() -> Vec<u8> {
    let mut line = serde_json::to_vec(&json!({"jsonrpc": "2.0", "id": 0, "method": "initialize",
        "params": {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "t", "version": "0"}}}))
    .unwrap();
    line.extend_from_slice(b"\n{\"jsonrpc\":\"2.0\",\"method\":\"notifications/initialized\"}\n");
    line
}

/// 2,000 calls, stdin closed, a reader that pauses 6 s after the close (longer than any fixed
/// close timeout of 5 s) and then reads 200 lines a second: every answer arrives whole, and
/// the process exits cleanly.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_answer_reaches_a_slow_reader_after_stdin_eof() {
    const CALLS: u64 = 2_000;
    let mut wire = Wire::start(&[], false);
    let mut stdin = wire.stdin.take().unwrap();
    let (closed_tx, closed_rx) = tokio::sync::oneshot::channel();
    let writer = tokio::spawn(async move {
        stdin.write_all(&initialize_line()).await.unwrap();
        for id in 1..=CALLS {
            let call = json!({"jsonrpc": "2.0", "id": id, "method": "tools/call",
                "params": {"name": "load_sample", "arguments": {}}});
            let mut line = serde_json::to_vec(&call).unwrap();
            line.push(b'\n');
            stdin.write_all(&line).await.unwrap();
        }
        drop(stdin);
        let _ = closed_tx.send(Instant::now());
    });
    let mut closed_rx = Some(closed_rx);
    let mut answered = std::collections::BTreeSet::new();
    let mut raw = String::new();
    loop {
        if let Some(rx) = closed_rx.as_mut()
            && rx.try_recv().is_ok()
        {
            closed_rx = None;
            tokio::time::sleep(Duration::from_secs(6)).await;
        }
        raw.clear();
        let n = tokio::time::timeout(Duration::from_secs(30), wire.stdout.read_line(&mut raw))
            .await
            .expect("stdout ends in time")
            .unwrap();
        if n == 0 {
            break;
        }
        assert!(raw.ends_with('\n'), "a truncated last line: {raw:?}");
        let v: Value = serde_json::from_str(&raw).unwrap_or_else(|e| panic!("not JSON {raw:?}: {e}"));
        if let Some(id) = v["id"].as_u64()
            && id >= 1
        {
            assert_eq!(v["result"]["structuredContent"]["procs"], 2, "{v}");
            answered.insert(id);
        }
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
    writer.await.unwrap();
    assert_eq!(answered.len() as u64, CALLS, "every call that ran was answered");
    let status = tokio::time::timeout(Duration::from_secs(10), wire.child.wait())
        .await
        .expect("ops exits after the last answer")
        .unwrap();
    assert!(status.success(), "{status}");
}

fn error_of(answers: &[Value]) -> &Value {
    assert_eq!(answers.len(), 1, "exactly one answer: {answers:?}");
    assert_eq!(answers[0]["jsonrpc"], "2.0", "{}", answers[0]);
    assert!(answers[0]["error"]["message"].is_string(), "{}", answers[0]);
    &answers[0]
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_line_that_is_not_a_notification_gets_an_answer() {
    let mut wire = Wire::start(&[], false);
    wire.initialize().await;

    // Not JSON at all: a parse error, id null (the key present, as JSON-RPC 2.0 writes it).
    let truncated = br#"{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"#;
    let e = error_of(&wire.answers_to(truncated, 100).await).clone();
    assert_eq!(e["error"]["code"], -32700, "{e}");
    assert_eq!(e.get("id"), Some(&Value::Null), "{e}");

    let e = error_of(&wire.answers_to(b"[]", 101).await).clone();
    assert_eq!(e["error"]["code"], -32600, "{e}");
    assert_eq!(e.get("id"), Some(&Value::Null), "{e}");

    let null_id = br#"{"jsonrpc":"2.0","id":null,"method":"tools/list"}"#;
    let e = error_of(&wire.answers_to(null_id, 102).await).clone();
    assert_eq!(e["error"]["code"], -32600, "{e}");
    assert_eq!(e.get("id"), Some(&Value::Null), "{e}");

    // Valid JSON serde cannot hold: the answer carries the request's id.
    let huge_number = br#"{"jsonrpc":"2.0","id":11,"method":"tools/call","params":{"name":"proc_kill","arguments":{"pid":1e400}}}"#;
    let e = error_of(&wire.answers_to(huge_number, 103).await).clone();
    assert_eq!(e["id"], 11, "{e}");

    let deep = format!(
        r#"{{"jsonrpc":"2.0","id":12,"method":"tools/call","params":{{"name":"load_sample","arguments":{{"x":{}1{}}}}}}}"#,
        "[".repeat(200),
        "]".repeat(200)
    );
    let e = error_of(&wire.answers_to(deep.as_bytes(), 104).await).clone();
    assert_eq!(e["id"], 12, "{e}");

    let big = format!(
        r#"{{"jsonrpc":"2.0","id":13,"method":"tools/call","params":{{"name":"proc_spawn","arguments":{{"name":"{}"}}}}}}"#,
        "a".repeat(17 * 1024 * 1024)
    );
    let e = error_of(&wire.answers_to(big.as_bytes(), 105).await).clone();
    assert_eq!(e["id"], 13, "{e}");
    assert_eq!(e["error"]["code"], -32600, "{e}");

    // A notification, even a broken one, gets no answer.
    let broken_notification = br#"{"jsonrpc":"2.0","method":"notifications/cancelled","params":5}"#;
    assert_eq!(
        wire.answers_to(broken_notification, 106).await,
        Vec::<Value>::new()
    );

    // And the session still serves.
    let listed = wire.request(107, "tools/list", json!({})).await;
    assert_eq!(listed["result"]["tools"].as_array().unwrap().len(), 6, "{listed}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn invalid_request_answers_carry_the_request_id() {
    let mut wire = Wire::start(&[], false);
    wire.initialize().await;
    let cases: [(&[u8], Value); 5] = [
        (br#"{"jsonrpc":"2.0","id":21}"#, json!(21)),
        (br#"{"jsonrpc":"2.0","id":"s-22","method":5}"#, json!("s-22")),
        (br#"{"jsonrpc":"1.0","id":23,"method":"ping"}"#, json!(23)),
        (br#"{"id":24,"method":"ping"}"#, json!(24)),
        (b"5", Value::Null),
    ];
    for (i, (line, id)) in cases.into_iter().enumerate() {
        let answers = wire.answers_to(line, 200 + i as u64).await;
        let e = error_of(&answers);
        assert_eq!(
            e["error"]["code"],
            -32600,
            "{}: {e}",
            String::from_utf8_lossy(line)
        );
        assert_eq!(e.get("id"), Some(&id), "{}: {e}", String::from_utf8_lossy(line));
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn only_the_canonical_spelling_of_a_key_addresses_an_item() {
    let mut wire = Wire::start(&[], false);
    wire.initialize().await;
    let read = |id: &str| json!({"uri": format!("surface://collections/processes/{id}")});
    let one = wire.request(1, "resources/read", read("1")).await;
    assert!(
        one["result"]["contents"][0]["text"]
            .as_str()
            .unwrap()
            .contains("init"),
        "{one}"
    );
    for (i, spelling) in ["%201", " 1", "1%09", "%0D%0A1", "01", "1.0", "+1", "%221%22"]
        .into_iter()
        .enumerate()
    {
        let answer = wire
            .request(10 + i as u64, "resources/read", read(spelling))
            .await;
        assert!(
            answer.get("error").is_some(),
            "{spelling:?} addressed an item: {answer}"
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn subscribe_refuses_every_uri_read_refuses() {
    let mut wire = Wire::start(&[], false);
    wire.initialize().await;
    let base = "surface://collections/processes";
    let mut id = 1;
    for bad in ["-1", "abc", "4294967296", "", "%201", "1/2"] {
        let uri = format!("{base}/{bad}");
        let read = wire.request(id, "resources/read", json!({"uri": uri})).await;
        let subscribed = wire
            .request(id + 1, "resources/subscribe", json!({"uri": uri}))
            .await;
        id += 2;
        assert!(read.get("error").is_some(), "read {uri:?}: {read}");
        assert!(
            subscribed.get("error").is_some(),
            "subscribe {uri:?}: {subscribed}"
        );
        assert_eq!(
            read["error"]["code"], subscribed["error"]["code"],
            "{uri:?}: {read} / {subscribed}"
        );
    }
    // An item that does not exist yet is a valid address: subscribing waits for it.
    let absent = wire
        .request(id, "resources/subscribe", json!({"uri": format!("{base}/99")}))
        .await;
    assert_eq!(absent["result"], json!({}), "{absent}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn subscriptions_per_session_are_capped() {
    const DEFAULT_CAP: u64 = 1024;
    let mut wire = Wire::start(&[], false);
    wire.initialize().await;
    let uri = |n: u64| format!("surface://collections/processes/{n}");
    for n in 0..DEFAULT_CAP {
        wire.send(
            json!({"jsonrpc": "2.0", "id": 1000 + n, "method": "resources/subscribe",
            "params": {"uri": uri(n)}}),
        )
        .await;
    }
    let mut ok = 0;
    while ok < DEFAULT_CAP {
        let v = wire.receive().await;
        if v["id"].as_u64().is_some_and(|id| id >= 1000) {
            assert_eq!(v["result"], json!({}), "{v}");
            ok += 1;
        }
    }
    // Re-subscribing a URI already held costs nothing.
    let again = wire
        .request(1, "resources/subscribe", json!({"uri": uri(5)}))
        .await;
    assert_eq!(again["result"], json!({}), "{again}");
    let refused = wire
        .request(2, "resources/subscribe", json!({"uri": uri(DEFAULT_CAP)}))
        .await;
    let message = refused["error"]["message"].as_str().unwrap_or_default();
    assert!(
        message.contains("1024") && message.contains("subscriptions"),
        "{refused}"
    );
    let gone = wire
        .request(3, "resources/unsubscribe", json!({"uri": uri(0)}))
        .await;
    assert_eq!(gone["result"], json!({}), "{gone}");
    let room = wire
        .request(4, "resources/subscribe", json!({"uri": uri(DEFAULT_CAP)}))
        .await;
    assert_eq!(room["result"], json!({}), "{room}");
}

/// Cancelling ids that are not in flight (unknown, or already answered) gives nothing back:
/// with slow calls, no more run at once than the bound allows.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn cancelling_ids_not_in_flight_cannot_raise_the_in_flight_bound() {
    const BOUND: u64 = 512;
    const CALLS: u64 = 900;
    const DELAY_MS: u64 = 3_000;
    let mut wire = Wire::start(&[("OPS_SPAWN_DELAY_MS", &DELAY_MS.to_string())], false);
    wire.initialize().await;
    let answered = wire.request(1, "ping", json!({})).await;
    assert_eq!(answered["result"], json!({}));
    let mut cancels = Vec::new();
    for n in 0..4_000u64 {
        // Half for an id already answered, half for ids never sent.
        let id = if n % 2 == 0 { 1 } else { 1_000_000 + n };
        cancels.extend(
            serde_json::to_vec(&json!({"jsonrpc": "2.0", "method": "notifications/cancelled",
                "params": {"requestId": id}}))
            .unwrap(),
        );
        cancels.push(b'\n');
    }
    wire.stdin.as_mut().unwrap().write_all(&cancels).await.unwrap();
    let mut stdin = wire.stdin.take().unwrap();
    let started = Instant::now();
    let writer = tokio::spawn(async move {
        for id in 0..CALLS {
            let call = json!({"jsonrpc": "2.0", "id": 10 + id, "method": "tools/call",
                "params": {"name": "proc_spawn", "arguments": {"name": "p"}}});
            let mut line = serde_json::to_vec(&call).unwrap();
            line.push(b'\n');
            stdin.write_all(&line).await.unwrap();
        }
        stdin
    });
    let mut first_wave = 0;
    let mut total = 0;
    while total < CALLS {
        let v = wire.receive().await;
        if v["id"].as_u64().is_some_and(|id| id >= 10) {
            total += 1;
            // The first wave finishes at DELAY; the second no earlier than 2 × DELAY.
            if started.elapsed() < Duration::from_millis(DELAY_MS * 3 / 2) {
                first_wave += 1;
            }
        }
    }
    drop(writer.await.unwrap());
    assert!(
        first_wave <= BOUND,
        "{first_wave} slow calls ran at once; the bound is {BOUND}"
    );
    assert!(first_wave > 0, "the first wave ran");
}
