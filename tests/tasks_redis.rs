//! MCP tasks across instances (feature `redis`; `.ci/run` runs
//! `cargo test --features redis --test tasks_redis`): two `ops --http ADDR --redis URL`
//! children share one Redis, and a 2026-07-28 client that declares the tasks extension speaks
//! raw Streamable HTTP to each. A `proc_wait` task created through A is read, answered,
//! cancelled and finished through B, and a listen on B naming it hears its changes of status;
//! when A dies mid-task, B reports it `failed`, saying the instance serving it ended.
//!
//! Every test starts its own `redis-server` (skipping, saying why, without one).

mod common;

use common::raw_http::spawn_serving;
use common::redis::{Redis, ops_binary};
use serde_json::{Value, json};
use std::net::SocketAddr;
use std::time::Duration;

const TASKS: &str = "io.modelcontextprotocol/tasks";

/// `ops --http 127.0.0.1:0 --redis URL` as a child (killed on drop), and its address.
async fn instance(redis: &Redis) -> (tokio::process::Child, SocketAddr) {
    spawn_serving(&ops_binary(), &["--http", "127.0.0.1:0", "--redis", &redis.url()]).await
}

/// The `_meta` of a 2026-07-28 client that declares tasks and elicitation.
fn meta() -> Value {
    json!({
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": {"extensions": {TASKS: {}}, "elicitation": {}},
        "io.modelcontextprotocol/clientInfo": {"name": "tasks-redis-test", "version": "0"}
    })
}

/// A 2026-07-28 request to `addr` from that client: its whole answer (`result` or `error`).
async fn ask(addr: SocketAddr, method: &str, mut params: Value) -> Value {
    params["_meta"] = meta();
    common::raw_http::modern(addr, method, params).await
}

async fn result(addr: SocketAddr, method: &str, params: Value) -> Value {
    let answer = ask(addr, method, params).await;
    assert!(answer.get("result").is_some(), "{method}: {answer}");
    answer["result"].clone()
}

/// Starts `proc_wait` on `addr` as a task; its id.
async fn wait_task(addr: SocketAddr, arguments: Value) -> String {
    let created = result(
        addr,
        "tools/call",
        json!({"name": "proc_wait", "arguments": arguments}),
    )
    .await;
    assert_eq!(created["resultType"], "task", "{created}");
    created["taskId"].as_str().unwrap().to_owned()
}

/// Polls `tasks/get` for `id` on `addr` until its status is one of `statuses` (within 60 s:
/// CI runs under load).
async fn until(addr: SocketAddr, id: &str, statuses: &[&str]) -> Value {
    let deadline = tokio::time::Instant::now() + Duration::from_secs(60);
    loop {
        let task = result(addr, "tasks/get", json!({"taskId": id})).await;
        if statuses.contains(&task["status"].as_str().unwrap_or_default()) {
            return task;
        }
        assert!(
            tokio::time::Instant::now() < deadline,
            "task {id} never reached {statuses:?}: {task}"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_task_created_on_a_is_read_and_finished_on_b() {
    let Some(redis) = Redis::start("a_task_created_on_a_is_read_and_finished_on_b") else {
        return;
    };
    let ((_a, a), (_b, b)) = (instance(&redis).await, instance(&redis).await);
    let id = wait_task(a, json!({"pid": 2})).await;
    // B resolves the id at once, with the fields A answers.
    let on_b = result(b, "tasks/get", json!({"taskId": id})).await;
    assert_eq!(on_b["taskId"], id.as_str(), "{on_b}");
    assert!(
        ["working", "input_required"].contains(&on_b["status"].as_str().unwrap()),
        "{on_b}"
    );
    let on_a = result(a, "tasks/get", json!({"taskId": id})).await;
    for field in ["createdAt", "ttlMs", "pollIntervalMs"] {
        assert_eq!(on_b[field], on_a[field], "{field}: {on_b} vs {on_a}");
    }
    // Its progress reaches B as the status message.
    let deadline = tokio::time::Instant::now() + Duration::from_secs(30);
    loop {
        let task = result(b, "tasks/get", json!({"taskId": id})).await;
        if task["statusMessage"]
            .as_str()
            .is_some_and(|m| m.contains("waiting for shell (pid 2) to exit"))
        {
            break;
        }
        assert!(tokio::time::Instant::now() < deadline, "no progress on B: {task}");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    // Killed through B; A's tool sees it and ends; B reads the result.
    let killed = result(
        b,
        "tools/call",
        json!({"name": "proc_kill", "arguments": {"pid": 2}}),
    )
    .await;
    assert_ne!(killed["isError"], true, "{killed}");
    let done = until(b, &id, &["completed", "failed", "cancelled"]).await;
    assert_eq!(done["status"], "completed", "{done}");
    assert_eq!(done["result"]["structuredContent"]["pid"], 2, "{done}");
    // An id no instance made is unknown on B, as on A.
    let unknown = ask(
        b,
        "tasks/get",
        json!({"taskId": "00000000000000000000000000000000"}),
    )
    .await;
    assert_eq!(unknown["error"]["code"], -32602, "{unknown}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_task_that_asks_is_answered_through_b() {
    let Some(redis) = Redis::start("a_task_that_asks_is_answered_through_b") else {
        return;
    };
    let ((_a, a), (_b, b)) = (instance(&redis).await, instance(&redis).await);
    // pid 1 never exits: after 1 s the tool asks whether to wait as long again.
    let id = wait_task(a, json!({"pid": 1, "timeout_secs": 1})).await;
    let mut keys = Vec::new();
    for keep_waiting in [true, false] {
        let asked = until(b, &id, &["input_required", "completed", "failed", "cancelled"]).await;
        assert_eq!(asked["status"], "input_required", "{asked}");
        let requests = asked["inputRequests"].as_object().unwrap();
        assert_eq!(requests.len(), 1, "{asked}");
        let (key, request) = requests.iter().next().unwrap();
        assert_eq!(request["method"], "elicitation/create", "{asked}");
        assert!(
            request["params"]["message"]
                .as_str()
                .unwrap()
                .contains("init (pid 1) still runs after"),
            "{asked}"
        );
        assert!(!keys.contains(key), "a new question each round: {keys:?} {key}");
        keys.push(key.clone());
        let answer = json!({"action": "accept", "content": {"keep_waiting": keep_waiting}});
        let updated = result(
            b,
            "tasks/update",
            json!({"taskId": id, "inputResponses": {key.as_str(): answer}}),
        )
        .await;
        assert!(updated.is_object(), "{updated}");
        // A took the answer: the question leaves the task (on B as well).
        let deadline = tokio::time::Instant::now() + Duration::from_secs(30);
        loop {
            let task = result(b, "tasks/get", json!({"taskId": id})).await;
            if task["inputRequests"].get(key.as_str()).is_none() {
                break;
            }
            assert!(tokio::time::Instant::now() < deadline, "never answered: {task}");
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    }
    // Waited once more (2 s in all), then gave up as answered.
    let done = until(b, &id, &["completed", "failed", "cancelled"]).await;
    assert_eq!(done["status"], "completed", "{done}");
    assert_eq!(done["result"]["isError"], true, "{done}");
    let text = done["result"]["content"][0]["text"].as_str().unwrap();
    assert!(text.contains("init (pid 1) still runs after 2s"), "{done}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_task_cancelled_through_b_is_cancelled_on_a() {
    let Some(redis) = Redis::start("a_task_cancelled_through_b_is_cancelled_on_a") else {
        return;
    };
    let ((_a, a), (_b, b)) = (instance(&redis).await, instance(&redis).await);
    let id = wait_task(a, json!({"pid": 1})).await;
    let cancelled = result(b, "tasks/cancel", json!({"taskId": id})).await;
    assert!(cancelled.is_object(), "{cancelled}");
    let on_b = until(b, &id, &["completed", "failed", "cancelled"]).await;
    assert_eq!(on_b["status"], "cancelled", "{on_b}");
    let on_a = result(a, "tasks/get", json!({"taskId": id})).await;
    assert_eq!(on_a["status"], "cancelled", "{on_a}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_task_whose_instance_died_is_failed_on_b_saying_so() {
    let Some(redis) = Redis::start("a_task_whose_instance_died_is_failed_on_b_saying_so") else {
        return;
    };
    let ((mut a_child, a), (_b, b)) = (instance(&redis).await, instance(&redis).await);
    let id = wait_task(a, json!({"pid": 1})).await;
    let alive = result(b, "tasks/get", json!({"taskId": id})).await;
    assert_eq!(alive["status"], "working", "{alive}");
    a_child.start_kill().unwrap();
    let _ = a_child.wait().await;
    // Never "working" forever: once A's lease runs out, B says why the task ended.
    let failed = until(b, &id, &["completed", "failed", "cancelled"]).await;
    assert_eq!(failed["status"], "failed", "{failed}");
    let message = failed["error"]["message"].as_str().unwrap();
    assert!(
        message.contains("the instance serving this task ended before the task finished"),
        "{failed}"
    );
    // It stays so, and an update or cancel of it is a no-op.
    let again = result(b, "tasks/cancel", json!({"taskId": id})).await;
    assert!(again.is_object(), "{again}");
    let still = result(b, "tasks/get", json!({"taskId": id})).await;
    assert_eq!(still["status"], "failed", "{still}");
    assert_eq!(still["error"], failed["error"], "{still}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_listen_on_b_hears_a_task_running_on_a() {
    let Some(redis) = Redis::start("a_listen_on_b_hears_a_task_running_on_a") else {
        return;
    };
    let ((_a, a), (_b, b)) = (instance(&redis).await, instance(&redis).await);
    let id = wait_task(a, json!({"pid": 2})).await;
    let listen = json!({
        "jsonrpc": "2.0", "id": 9, "method": "subscriptions/listen",
        "params": {"notifications": {"taskIds": [id]}, "_meta": meta()}
    });
    let mut stream = common::raw_http::Listen::open(b, &listen).await;
    let mut heard = Vec::new();
    while heard
        .last()
        .is_none_or(|n: &Value| n["params"]["status"] == "working")
    {
        let message = stream.next().await;
        if message["method"] != "notifications/tasks" {
            continue;
        }
        assert_eq!(message["params"]["taskId"], id.as_str(), "{message}");
        if heard.is_empty() {
            // Its state at once; then the process it waits on ends, through A.
            assert_eq!(message["params"]["status"], "working", "{message}");
            let killed = result(
                a,
                "tools/call",
                json!({"name": "proc_kill", "arguments": {"pid": 2}}),
            )
            .await;
            assert_ne!(killed["isError"], true, "{killed}");
        }
        heard.push(message);
    }
    let done = heard.last().unwrap();
    assert_eq!(done["params"]["status"], "completed", "{heard:?}");
    assert_eq!(done["params"]["result"]["structuredContent"]["pid"], 2, "{done}");
    assert_eq!(
        done["params"]["_meta"]["io.modelcontextprotocol/subscriptionId"], 9,
        "{done}"
    );
}
