//! MCP tasks (the `io.modelcontextprotocol/tasks` extension, SEP-2663) on the MCP face.
//!
//! A tool declared `#[tool(task)]` runs as a task when a 2026-07-28 request's client declares the
//! extension in its `_meta` capabilities: `tools/call` answers a `CreateTaskResult` at once
//! (`resultType: "task"`, the id, `working`, the timestamps, `ttlMs`, `pollIntervalMs`), and only
//! after `tasks/get` can resolve that id. The call then runs on its own tokio task:
//!
//! - `tasks/get` answers its state with the payload inlined: the tool's result once it ends
//!   (a tool's failure is a `completed` task whose result has `isError`), the JSON-RPC error when
//!   the protocol, not the tool, failed it (`failed`), or the questions it waits on
//!   (`input_required` with `inputRequests`);
//! - a question the tool asks (`ctx.elicit`, `ctx.sample`, `ctx.roots`, unchanged) becomes one
//!   of those `inputRequests`; `tasks/update` with `inputResponses` answers it (keys that are not
//!   pending are ignored, as the extension says) and the tool goes on from where it waited;
//! - `tasks/cancel` is cooperative: the tool's `ctx.cancelled()` fires and its future is dropped
//!   at the await it is waiting on (the point of no return, as for `notifications/cancelled`); a
//!   task it stopped is `cancelled`;
//! - `ctx.progress_with(…)` becomes the task's `statusMessage` (and `ctx.progress` a
//!   `progress/total` one).
//!
//! A `subscriptions/listen` whose filter names `taskIds` hears `notifications/tasks` on its
//! stream for each of those tasks its caller may see (others are ignored, as unknown ids): the
//! task's state at once (as `tasks/get` answers it, so a task that ended before the listen opened
//! is not missed), then again each time its status changes — input asked for, answered, ended.
//! A status message alone (progress) notifies nobody: `tasks/get` reads it. A stream whose reader
//! falls [`NOTIFY_BUFFER`] notifications behind misses the next ones; `tasks/get` still answers.
//!
//! A `#[tool(task = required)]` tool refuses a client that does not declare the extension with
//! `-32021` (MissingRequiredClientCapability) naming it; a `#[tool(task)]` one answers such a
//! client (and every legacy session) inline, as any tool.
//!
//! Ids are 128 random bits from the OS (hex). The bounds are settings of `McpServer`
//! ([`TaskSettings`]): how long a task is kept from its creation (its `ttlMs`: a task still
//! running then is ended as `failed`, saying so, and a task is forgotten at that time), the
//! polling interval suggested, and how many live (non-terminal) tasks the server and one
//! connection may hold; a call over either cap is answered inline-refused with -32603 saying which.
//! Terminal tasks are swept on every access to the table.
//!
//! Served over HTTP with a store (`HttpOptions::store`), every change of a task's state is
//! mirrored there too, so any instance answers for it (task_sharing.rs).

use super::results::{self, branded};
use super::task_sharing::TaskSharing;
use crate::failure::Failure;
use crate::sync::lock;
use rmcp::ErrorData;
use rmcp::model::{
    CallToolResult, DetailedTask, InputRequest, InputRequests, JsonObject, Task, TaskPayload, TaskStatus,
};
use serde_json::Value;
use std::collections::{BTreeMap, HashMap};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, OnceLock};
use std::time::{Duration, Instant};
use tokio::sync::{mpsc, oneshot};
use tokio_util::sync::CancellationToken;

/// How long a task is kept from its creation, by default (its `ttlMs`).
pub const TASK_TTL: Duration = Duration::from_secs(15 * 60);
/// The polling interval a task suggests, by default (its `pollIntervalMs`).
pub const TASK_POLL_INTERVAL: Duration = Duration::from_millis(500);
/// How many live tasks the whole server holds at once, by default.
pub const MAX_TASKS: usize = 1024;
/// How many live tasks one connection holds at once, by default.
pub const MAX_TASKS_PER_SESSION: usize = 64;
/// How many `notifications/tasks` wait for one listen stream's reader; past that, they are
/// dropped (`tasks/get` still answers).
pub const NOTIFY_BUFFER: usize = 64;

/// Where a listen stream hears the tasks it names (`subscriptions.rs` sends them).
pub(crate) type TaskFeed = mpsc::Sender<DetailedTask>;

/// The bounds of the task table (see the module): set with `McpServer::task_settings`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TaskSettings {
    /// How long a task is kept from its creation ([`TASK_TTL`]).
    pub ttl: Duration,
    /// The polling interval suggested to clients ([`TASK_POLL_INTERVAL`]).
    pub poll_interval: Duration,
    /// Live tasks the server holds at once ([`MAX_TASKS`]).
    pub max_tasks: usize,
    /// Live tasks one connection holds at once ([`MAX_TASKS_PER_SESSION`]).
    pub max_tasks_per_session: usize,
}

impl Default for TaskSettings {
    fn default() -> Self {
        TaskSettings {
            ttl: TASK_TTL,
            poll_interval: TASK_POLL_INTERVAL,
            max_tasks: MAX_TASKS,
            max_tasks_per_session: MAX_TASKS_PER_SESSION,
        }
    }
}

/// A question a running task waits on.
struct Pending {
    request: InputRequest,
    answer: oneshot::Sender<Value>,
}

/// What changes over a task's life.
struct State {
    status_message: Option<String>,
    last_updated_at: String,
    pending: BTreeMap<String, Pending>,
    terminal: Option<TaskPayload>,
    /// Ended by its TTL (kept one more TTL, see `Tasks::sweep`).
    expired: bool,
    /// How many times its state was mirrored (each mirrored state is numbered).
    version: u64,
}

/// One task.
pub(crate) struct Entry {
    id: String,
    /// The connection that created it (for the per-connection cap).
    session: usize,
    /// Who created it, when a face identified the caller: another subject's `tasks/get`,
    /// `tasks/update` or `tasks/cancel` finds no such task.
    owner: Option<Arc<crate::Principal>>,
    created_at: String,
    created: Instant,
    cancel: CancellationToken,
    state: Mutex<State>,
    settings: TaskSettings,
    /// The listen streams that named it.
    watchers: Mutex<Vec<TaskFeed>>,
    /// Where its state is mirrored for other instances, when they share tasks.
    mirror: Option<Arc<dyn TaskSharing>>,
    /// How far its mirroring went.
    mirrored: Arc<Mirroring>,
}

/// The numbers of a task's mirrored states: the last whose write ended, the last stored.
#[derive(Default)]
struct Mirroring {
    ended: AtomicU64,
    stored: AtomicU64,
}

impl Entry {
    fn touch(state: &mut State) {
        state.last_updated_at = now();
    }

    /// Who created it, if a face identified the caller.
    pub(crate) fn owner(&self) -> Option<Arc<crate::Principal>> {
        self.owner.clone()
    }

    pub(crate) fn is_live(&self) -> bool {
        lock(&self.state).terminal.is_none()
    }

    /// Ends the task with `payload` unless it has ended already.
    fn settle(&self, payload: TaskPayload) {
        let settled = {
            let mut state = lock(&self.state);
            let live = state.terminal.is_none();
            if live {
                state.terminal = Some(payload);
                state.pending.clear();
                Entry::touch(&mut state);
            }
            live
        };
        if settled {
            self.changed();
        }
    }

    /// Tells every listen stream naming the task its state now (and the store, when tasks are
    /// shared); forgets the closed ones.
    fn changed(&self) {
        let _ = self.publish();
        let task = self.detailed();
        lock(&self.watchers).retain(|feed| {
            !matches!(
                feed.try_send(task.clone()),
                Err(mpsc::error::TrySendError::Closed(_))
            )
        });
    }

    /// Adds `feed` to the listen streams naming the task, with its state now as the first.
    fn watch(&self, feed: &TaskFeed) {
        let mut watchers = lock(&self.watchers);
        let _ = feed.try_send(self.detailed());
        watchers.push(feed.clone());
    }

    /// Mirrors the task's state now where other instances read it (under way when this
    /// returns; the future says whether it was stored); none when tasks are not shared.
    fn publish(&self) -> Option<Mirrored> {
        let sharing = self.mirror.as_ref()?;
        let (version, task, terminal, keep) = {
            let mut state = lock(&self.state);
            state.version += 1;
            // Forgotten here at its TTL (a second one once it expired): there too.
            let kept = if state.expired {
                self.settings.ttl * 2
            } else {
                self.settings.ttl
            };
            let keep = kept
                .saturating_sub(self.created.elapsed())
                .max(Duration::from_millis(1));
            (
                state.version,
                self.detailed_of(&state),
                state.terminal.is_some(),
                keep,
            )
        };
        let record = super::task_sharing::record(sharing.instance(), self, task);
        let write = sharing.save(&self.id, version, terminal, record, keep);
        let Ok(runtime) = tokio::runtime::Handle::try_current() else {
            return Some(write);
        };
        // Noted when it ends, so that a failed write is made again (see `unmirrored`).
        let marks = self.mirrored.clone();
        let (tell, told) = oneshot::channel();
        runtime.spawn(async move {
            let result = write.await;
            if result.is_ok() {
                marks.stored.fetch_max(version, Ordering::SeqCst);
            }
            marks.ended.fetch_max(version, Ordering::SeqCst);
            let _ = tell.send(result);
        });
        Some(Box::pin(async move {
            told.await
                .unwrap_or_else(|_| Err("the write was dropped".to_owned()))
        }))
    }

    /// Whether the task's state now is not yet mirrored; if its last write failed (the store
    /// did not answer), writes it again.
    pub(crate) fn unmirrored(&self) -> bool {
        if self.mirror.is_none() {
            return false;
        }
        let version = lock(&self.state).version;
        if self.mirrored.stored.load(Ordering::SeqCst) >= version {
            return false;
        }
        if self.mirrored.ended.load(Ordering::SeqCst) >= version {
            let _ = self.publish();
        }
        true
    }

    fn detailed(&self) -> DetailedTask {
        self.detailed_of(&lock(&self.state))
    }

    fn detailed_of(&self, state: &State) -> DetailedTask {
        let settings = &self.settings;
        let payload = match &state.terminal {
            Some(p) => p.clone(),
            None if !state.pending.is_empty() => TaskPayload::InputRequired {
                input_requests: state
                    .pending
                    .iter()
                    .map(|(k, p)| (k.clone(), p.request.clone()))
                    .collect::<InputRequests>(),
            },
            None => TaskPayload::Working,
        };
        let mut task = Task::new(
            self.id.clone(),
            TaskStatus::Working,
            self.created_at.clone(),
            state.last_updated_at.clone(),
        )
        .with_ttl_ms(millis(settings.ttl))
        .with_poll_interval_ms(millis(settings.poll_interval));
        task.status_message = state.status_message.clone();
        DetailedTask::new(task, payload)
    }

    /// Asks the client `request` under `key` and waits for its `tasks/update` answer; `None`
    /// when the task ended meanwhile (cancelled, expired).
    pub(crate) async fn ask(&self, key: String, request: InputRequest) -> Option<Value> {
        let (answer, heard) = oneshot::channel();
        {
            let mut state = lock(&self.state);
            if state.terminal.is_some() {
                return None;
            }
            state.pending.insert(key, Pending { request, answer });
            Entry::touch(&mut state);
        }
        self.changed();
        heard.await.ok()
    }

    /// Sets the task's status message (a tool's progress).
    pub(crate) fn status(&self, message: String) {
        let set = {
            let mut state = lock(&self.state);
            let live = state.terminal.is_none();
            if live {
                state.status_message = Some(message);
                Entry::touch(&mut state);
            }
            live
        };
        if set {
            let _ = self.publish();
        }
    }

    /// Answers the pending questions `responses` names (others are ignored).
    pub(crate) fn answer(&self, responses: impl IntoIterator<Item = (String, Value)>) {
        let answered = {
            let mut state = lock(&self.state);
            let mut answered = false;
            for (key, value) in responses {
                if let Some(pending) = state.pending.remove(&key) {
                    let _ = pending.answer.send(value);
                    answered = true;
                }
            }
            Entry::touch(&mut state);
            answered
        };
        if answered {
            self.changed();
        }
    }

    /// Fires when the task is cancelled or expires.
    pub(crate) fn cancelled(&self) -> CancellationToken {
        self.cancel.clone()
    }
}

fn millis(d: Duration) -> u64 {
    u64::try_from(d.as_millis()).unwrap_or(u64::MAX)
}

fn now() -> String {
    rmcp::task_manager::current_timestamp()
}

/// 128 random bits, as 32 hex digits.
fn new_id() -> String {
    let mut bits = [0u8; 16];
    getrandom::fill(&mut bits).expect("the OS random source is unavailable");
    bits.iter().map(|b| format!("{b:02x}")).collect()
}

pub(crate) fn unknown(id: &str) -> ErrorData {
    ErrorData::invalid_params(branded(&format!("unknown task \"{id}\"")), None)
}

/// A write mirroring a task's state, under way (task_sharing.rs): whether it was stored.
pub(crate) type Mirrored = super::task_sharing::Pending<'static, Result<bool, String>>;

/// The task table: id to task.
type Table = Arc<Mutex<HashMap<String, Arc<Entry>>>>;

/// The server's task table.
#[derive(Default)]
pub(crate) struct Tasks {
    settings: TaskSettings,
    tasks: Table,
    /// Where tasks are shared with other instances, once an endpoint with a store serves.
    sharing: OnceLock<Arc<dyn TaskSharing>>,
    /// Whether this instance follows its orders now (task_sharing.rs, `follow`).
    following: Arc<AtomicBool>,
}

/// A task just created: its state, and the write that mirrors it (when tasks are shared).
pub(crate) struct Created {
    pub(crate) task: Task,
    pub(crate) stored: Option<Mirrored>,
}

impl std::fmt::Debug for Created {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Created").field("task", &self.task).finish()
    }
}

/// What a task's tool answers: its result, or the error the protocol answers instead.
pub(crate) type Outcome = Result<CallToolResult, ErrorData>;

impl Tasks {
    pub(crate) fn new(settings: TaskSettings) -> Tasks {
        Tasks {
            settings,
            ..Tasks::default()
        }
    }

    /// Shares the tasks through `sharing` from now on (the first store an endpoint offers).
    pub(crate) fn share(&self, sharing: Arc<dyn TaskSharing>) {
        let _ = self.sharing.set(sharing);
    }

    pub(crate) fn sharing(&self) -> Option<&Arc<dyn TaskSharing>> {
        self.sharing.get()
    }

    /// Ends what outlived its TTL: a task that ended in time is forgotten; one still running is
    /// `failed` saying so (its future dropped) and kept one more TTL, so a poller learns why.
    fn sweep(&self, tasks: &mut HashMap<String, Arc<Entry>>) {
        let ttl = self.settings.ttl;
        tasks.retain(|_, entry| {
            let age = entry.created.elapsed();
            if age < ttl {
                return true;
            }
            if !entry.is_live() {
                return lock(&entry.state).expired && age < ttl * 2;
            }
            lock(&entry.state).expired = true;
            entry.settle(TaskPayload::Failed {
                error: error_object(&ErrorData::internal_error(
                    branded(&format!(
                        "the task ran past its time to live ({} ms) and was stopped",
                        millis(ttl)
                    )),
                    None,
                )),
            });
            entry.cancel.cancel();
            true
        });
    }

    /// Creates a task for connection `session`, owned by `owner`, cancelled through `cancel`
    /// (the token its call's context already holds), and runs `run` for it; `run` is handed the
    /// task's questions. Refused (-32603) over a cap.
    pub(crate) fn create<F, Fut>(
        &self,
        cancel: CancellationToken,
        session: usize,
        owner: Option<Arc<crate::Principal>>,
        run: F,
    ) -> Result<Created, ErrorData>
    where
        F: FnOnce(TaskInputs) -> Fut,
        Fut: std::future::Future<Output = Outcome> + Send + 'static,
    {
        let mut tasks = lock(&self.tasks);
        self.sweep(&mut tasks);
        let live: Vec<&Arc<Entry>> = tasks.values().filter(|e| e.is_live()).collect();
        if live.len() >= self.settings.max_tasks {
            return Err(ErrorData::internal_error(
                branded(&format!(
                    "the server already runs {} tasks, its limit: try again when one ends",
                    self.settings.max_tasks
                )),
                None,
            ));
        }
        if live.iter().filter(|e| e.session == session).count() >= self.settings.max_tasks_per_session {
            return Err(ErrorData::internal_error(
                branded(&format!(
                    "this connection already runs {} tasks, its limit: try again when one ends",
                    self.settings.max_tasks_per_session
                )),
                None,
            ));
        }
        let created_at = now();
        let entry = Arc::new(Entry {
            id: new_id(),
            session,
            owner,
            created_at: created_at.clone(),
            created: Instant::now(),
            cancel,
            state: Mutex::new(State {
                status_message: None,
                last_updated_at: created_at,
                pending: BTreeMap::new(),
                terminal: None,
                expired: false,
                version: 0,
            }),
            settings: self.settings,
            watchers: Mutex::new(Vec::new()),
            mirror: self.sharing().cloned(),
            mirrored: Arc::default(),
        });
        // In the table before the answer goes out: `tasks/get` resolves the id at once.
        tasks.insert(entry.id.clone(), entry.clone());
        if let Some(sharing) = self.sharing()
            && !self.following.swap(true, Ordering::SeqCst)
        {
            tokio::spawn(super::task_sharing::follow(
                Arc::downgrade(&self.tasks),
                sharing.clone(),
                self.following.clone(),
            ));
        }
        drop(tasks);
        // Mirrored before the answer goes out: every instance resolves the id at once.
        let stored = entry.publish();
        super::observe::task_created();
        let future = run(TaskInputs::new(entry.clone()));
        let settled = entry.clone();
        let handle = tokio::spawn(async move {
            let answer = super::cancel::unless_cancelled(&settled.cancel, future).await;
            let payload = match answer {
                // A tool that heard the cancellation and answered first was still cancelled.
                _ if settled.cancel.is_cancelled() => TaskPayload::Cancelled,
                None => TaskPayload::Cancelled,
                Some(Ok(result)) => TaskPayload::Completed {
                    result: object(&result),
                },
                Some(Err(error)) => TaskPayload::Failed {
                    error: error_object(&error),
                },
            };
            settled.settle(payload);
        });
        // A tool that panics fails its task (the protocol's error, not the tool's answer).
        let watched = entry.clone();
        tokio::spawn(async move {
            if let Err(e) = handle.await
                && e.is_panic()
            {
                watched.settle(TaskPayload::Failed {
                    error: error_object(&ErrorData::internal_error(
                        branded("the tool panicked while running as a task"),
                        None,
                    )),
                });
            }
        });
        Ok(Created {
            task: entry.detailed().task,
            stored,
        })
    }

    /// Task `id` as `caller` may see it: a task created by an identified subject is that
    /// subject's alone (any of its tokens, whatever their scopes); to anyone else it does not
    /// exist, the same answer as an unknown id, so an id that leaked reveals nothing.
    fn find(&self, id: &str, caller: Option<&crate::Principal>) -> Result<Arc<Entry>, ErrorData> {
        let mut tasks = lock(&self.tasks);
        self.sweep(&mut tasks);
        tasks
            .get(id)
            .filter(|entry| match &entry.owner {
                None => true,
                Some(owner) => caller.is_some_and(|c| c.same_subject(owner)),
            })
            .cloned()
            .ok_or_else(|| unknown(id))
    }

    /// `tasks/get` by `caller`.
    pub(crate) fn get(&self, id: &str, caller: Option<&crate::Principal>) -> Result<DetailedTask, ErrorData> {
        Ok(self.find(id, caller)?.detailed())
    }

    /// `tasks/update`: answers the pending questions `responses` names (others are ignored).
    pub(crate) fn update(
        &self,
        id: &str,
        caller: Option<&crate::Principal>,
        responses: impl IntoIterator<Item = (String, Value)>,
    ) -> Result<(), ErrorData> {
        self.find(id, caller)?.answer(responses);
        Ok(())
    }

    /// A listen stream naming `ids`: `feed` hears each of them `caller` may see, now and at each
    /// change of its status; the others are ignored, as unknown ids.
    pub(crate) fn watch(&self, ids: &[String], caller: Option<&crate::Principal>, feed: &TaskFeed) {
        for id in ids {
            match self.find(id, caller) {
                Ok(entry) => entry.watch(feed),
                // Perhaps another instance's: followed through the backend.
                Err(_) => self.watch_remote(id, caller, feed),
            }
        }
    }

    /// `tasks/cancel`: the tool's cancellation fires; its future ends at its next await.
    pub(crate) fn cancel(&self, id: &str, caller: Option<&crate::Principal>) -> Result<(), ErrorData> {
        self.find(id, caller)?.cancel.cancel();
        Ok(())
    }

    /// Whether any task is live (for tests).
    #[cfg(test)]
    fn live(&self) -> usize {
        lock(&self.tasks).values().filter(|e| e.is_live()).count()
    }
}

fn object(result: &CallToolResult) -> JsonObject {
    match serde_json::to_value(result) {
        Ok(Value::Object(o)) => o,
        _ => JsonObject::new(),
    }
}

pub(crate) fn error_object(error: &ErrorData) -> JsonObject {
    match serde_json::to_value(error) {
        Ok(Value::Object(o)) => o,
        _ => JsonObject::new(),
    }
}

/// A task's answer from what its tool answered: a failure of the tool is a result (`isError`).
pub(crate) fn outcome(answer: Result<crate::blocks::ToolOutput, Failure>) -> CallToolResult {
    match answer {
        Ok(output) => results::success(output),
        Err(failure) => results::failure(failure),
    }
}

/// The questions of one task: where they wait for their answers.
#[derive(Clone)]
pub(crate) struct TaskInputs(Arc<Entry>);

impl TaskInputs {
    pub(crate) fn new(entry: Arc<Entry>) -> TaskInputs {
        TaskInputs(entry)
    }

    /// The task.
    pub(crate) fn entry(&self) -> &Arc<Entry> {
        &self.0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

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
                    serde_json::from_value(serde_json::json!({"method": "roots/list", "params": {}}))
                        .unwrap();
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
}
