//! The task table's tests: ownership, ids, questions, cancellation, the TTL and the caps.

use super::entry::TaskInputs;
use super::entry::millis;
use super::remote::MAX_REMOTE_WATCHES;
use super::settings::TASK_TTL;
use super::settings::TaskSettings;
use super::table::Tasks;
use rmcp::model::{CallToolResult, DetailedTask, InputRequest, TaskStatus};
use serde_json::Value;
use std::sync::Arc;
use std::time::Duration;
use tokio_util::sync::CancellationToken;

fn settings(ttl_ms: u64, max_tasks: usize, per_session: usize) -> TaskSettings {
    TaskSettings {
        ttl: Duration::from_millis(ttl_ms),
        poll_interval: Duration::from_millis(10),
        max_tasks,
        max_tasks_per_session: per_session,
    }
}

async fn settled(tasks: &Tasks, id: &str) -> DetailedTask {
    for _ in 0..200 {
        let task = tasks.get(id, None).unwrap();
        if task.status().is_terminal() {
            return task;
        }
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
    panic!("task {id} did not end")
}

/// A task created by an identified subject is that subject's: any of its tokens (a step-up
/// with other scopes too) reads, answers and cancels it; another subject, or a caller no
/// face identified, gets exactly the answer of an unknown id.
#[tokio::test]
async fn a_task_is_found_only_by_the_subject_that_created_it() {
    let tasks = Tasks::new(TaskSettings::default());
    let alice = Arc::new(crate::Principal::new("https://as", "alice").with_scopes(["ops.read"]));
    let created = tasks
        .create(CancellationToken::new(), 1, Some(alice.clone()), |_| {
            std::future::pending()
        })
        .unwrap();
    let id = created.task.task_id;
    let stepped_up = crate::Principal::new("https://as", "alice").with_scopes(["ops.admin"]);
    let mallory = crate::Principal::new("https://as", "mallory").with_scopes(["ops.admin"]);
    let elsewhere = crate::Principal::new("https://other-as", "alice");
    let unknown = tasks.get("0123", Some(&mallory)).unwrap_err();
    for stranger in [Some(&mallory), Some(&elsewhere), None] {
        let refused = tasks.get(&id, stranger).unwrap_err();
        assert_eq!(refused.code, unknown.code, "{stranger:?}");
        assert_eq!(
            refused.message,
            unknown.message.replace("0123", &id),
            "{stranger:?}"
        );
        assert!(tasks.update(&id, stranger, []).is_err());
        assert!(tasks.cancel(&id, stranger).is_err());
    }
    assert_eq!(
        tasks.get(&id, Some(&alice)).unwrap().status(),
        TaskStatus::Working
    );
    tasks.cancel(&id, Some(&stepped_up)).unwrap();
    let mut status = TaskStatus::Working;
    for _ in 0..200 {
        status = tasks.get(&id, Some(&stepped_up)).unwrap().status();
        if status.is_terminal() {
            break;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    assert_eq!(status, TaskStatus::Cancelled);
}

#[tokio::test]
async fn ids_are_128_random_bits_and_resolve_at_once() {
    let tasks = Tasks::new(TaskSettings::default());
    let a = tasks
        .create(CancellationToken::new(), 1, None, |_| async {
            Ok(CallToolResult::success(vec![]))
        })
        .unwrap();
    let b = tasks
        .create(CancellationToken::new(), 1, None, |_| async {
            Ok(CallToolResult::success(vec![]))
        })
        .unwrap();
    assert_eq!(a.task.task_id.len(), 32);
    assert!(a.task.task_id.chars().all(|c| c.is_ascii_hexdigit()));
    assert_ne!(a.task.task_id, b.task.task_id);
    assert_eq!(a.task.ttl_ms, Some(millis(TASK_TTL)));
    assert!(tasks.get(&a.task.task_id, None).is_ok());
    let done = settled(&tasks, &b.task.task_id).await;
    assert_eq!(done.status(), TaskStatus::Completed);
    assert_eq!(tasks.get("nope", None).unwrap_err().code.0, -32602);
}

#[tokio::test]
async fn a_question_waits_for_its_update_and_unknown_keys_are_ignored() {
    let tasks = Tasks::new(TaskSettings::default());
    let created = tasks
        .create(CancellationToken::new(), 1, None, |inputs| async move {
            let request: InputRequest =
                serde_json::from_value(serde_json::json!({"method": "roots/list", "params": {}})).unwrap();
            let answer = inputs.entry().ask("where".into(), request).await.unwrap();
            Ok(CallToolResult::success(vec![rmcp::model::ContentBlock::text(
                answer.to_string(),
            )]))
        })
        .unwrap();
    let id = created.task.task_id;
    let mut asked = tasks.get(&id, None).unwrap();
    for _ in 0..100 {
        if asked.status() == TaskStatus::InputRequired {
            break;
        }
        tokio::time::sleep(Duration::from_millis(5)).await;
        asked = tasks.get(&id, None).unwrap();
    }
    assert_eq!(asked.status(), TaskStatus::InputRequired);
    tasks
        .update(&id, None, [("other".to_owned(), Value::Null)])
        .unwrap();
    assert_eq!(tasks.get(&id, None).unwrap().status(), TaskStatus::InputRequired);
    tasks
        .update(
            &id,
            None,
            [("where".to_owned(), serde_json::json!({"roots": []}))],
        )
        .unwrap();
    let done = serde_json::to_value(settled(&tasks, &id).await).unwrap();
    assert_eq!(done["result"]["content"][0]["text"], "{\"roots\":[]}");
}

#[tokio::test]
async fn cancel_drops_the_future_and_the_ttl_and_caps_bound_the_table() {
    let tasks = Tasks::new(settings(300, 2, 1));
    let slow = |_: TaskInputs| async {
        tokio::time::sleep(Duration::from_secs(60)).await;
        Ok(CallToolResult::success(vec![]))
    };
    let a = tasks
        .create(CancellationToken::new(), 1, None, slow)
        .unwrap()
        .task
        .task_id;
    let refused = tasks.create(CancellationToken::new(), 1, None, slow).unwrap_err();
    assert!(
        refused.message.contains("this connection already runs 1 tasks"),
        "{refused:?}"
    );
    let b = tasks.create(CancellationToken::new(), 2, None, slow).unwrap();
    let refused = tasks.create(CancellationToken::new(), 3, None, slow).unwrap_err();
    assert!(
        refused.message.contains("the server already runs 2 tasks"),
        "{refused:?}"
    );
    tasks.cancel(&a, None).unwrap();
    assert_eq!(settled(&tasks, &a).await.status(), TaskStatus::Cancelled);
    assert_eq!(tasks.live(), 1);
    tokio::time::sleep(Duration::from_millis(350)).await;
    // Past the TTL: the cancelled one is forgotten; the one still running is stopped and
    // failed, saying why, for one more TTL.
    assert!(tasks.get(&a, None).is_err());
    let expired = serde_json::to_value(tasks.get(&b.task.task_id, None).unwrap()).unwrap();
    assert_eq!(expired["status"], "failed");
    assert!(
        expired["error"]["message"]
            .as_str()
            .unwrap()
            .contains("ran past its time to live (300 ms)"),
        "{expired}"
    );
    assert_eq!(tasks.live(), 0);
    tokio::time::sleep(Duration::from_millis(300)).await;
    assert!(tasks.get(&b.task.task_id, None).is_err());
}

/// A backend that knows no task and notes which ids were read.
#[derive(Debug, Default)]
struct Noting {
    loaded: std::sync::Mutex<std::collections::HashSet<String>>,
}

impl super::super::task_sharing::TaskSharing for Noting {
    fn instance(&self) -> &str {
        "here"
    }
    fn save(
        &self,
        _: &str,
        _: u64,
        _: bool,
        _: String,
        _: Duration,
    ) -> super::super::task_sharing::Pending<'static, Result<bool, String>> {
        Box::pin(async { Ok(true) })
    }
    fn load(
        &self,
        id: &str,
    ) -> super::super::task_sharing::Pending<'static, Result<Option<(u64, String)>, String>> {
        self.loaded.lock().unwrap().insert(id.to_owned());
        Box::pin(async { Ok(None) })
    }
    fn send(&self, _: &str, _: String) -> super::super::task_sharing::Pending<'static, Result<(), String>> {
        Box::pin(async { Ok(()) })
    }
    fn take(&self) -> super::super::task_sharing::Pending<'static, Result<Vec<String>, String>> {
        Box::pin(async { Ok(Vec::new()) })
    }
    fn alive(&self, _: &str) -> super::super::task_sharing::Pending<'static, Result<bool, String>> {
        Box::pin(async { Ok(true) })
    }
}

#[tokio::test]
async fn a_listen_follows_at_most_its_cap_of_tasks_run_elsewhere() {
    let tasks = Tasks::new(TaskSettings::default());
    let backend = Arc::new(Noting::default());
    tasks.share(backend.clone());
    let ids: Vec<String> = (0..MAX_REMOTE_WATCHES + 36)
        .map(|i| format!("elsewhere-{i}"))
        .collect();
    let (feed, _heard) = tokio::sync::mpsc::channel(8);
    tasks.watch(&ids, None, &feed);
    let read = || backend.loaded.lock().unwrap().len();
    for _ in 0..500 {
        if read() >= MAX_REMOTE_WATCHES {
            break;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    // Each follower reads once, hears "unknown" and stops: the ids past the cap are never read.
    tokio::time::sleep(Duration::from_millis(100)).await;
    let loaded = backend.loaded.lock().unwrap().clone();
    assert_eq!(loaded.len(), MAX_REMOTE_WATCHES);
    assert!(ids[..MAX_REMOTE_WATCHES].iter().all(|id| loaded.contains(id)));
}
