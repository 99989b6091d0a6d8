//! One task: its state over its life, the questions it waits on, the listens that follow it and
//! the mirroring of its state for other instances.

use super::super::results::{self, branded};
use super::super::task_sharing::{self, TaskSharing};
use super::settings::TaskSettings;
use crate::failure::Failure;
use crate::sync::lock;
use rmcp::ErrorData;
use rmcp::model::{
    CallToolResult, DetailedTask, InputRequest, InputRequests, JsonObject, Task, TaskPayload, TaskStatus,
};
use serde_json::Value;
use std::collections::BTreeMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};
use tokio::sync::{mpsc, oneshot};
use tokio_util::sync::CancellationToken;

/// Where a listen stream hears the tasks it names (`subscriptions.rs` sends them).
pub(crate) type TaskFeed = mpsc::Sender<DetailedTask>;

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
    pub(super) id: String,
    /// The connection that created it (for the per-connection cap).
    pub(super) session: usize,
    /// Who created it, when a face identified the caller: another subject's `tasks/get`,
    /// `tasks/update` or `tasks/cancel` finds no such task.
    pub(super) owner: Option<Arc<crate::Principal>>,
    created_at: String,
    pub(super) created: Instant,
    pub(super) cancel: CancellationToken,
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
    /// A new task for connection `session`, owned by `owner`, cancelled through `cancel`,
    /// mirrored through `mirror` when tasks are shared.
    pub(super) fn new(
        session: usize,
        owner: Option<Arc<crate::Principal>>,
        cancel: CancellationToken,
        settings: TaskSettings,
        mirror: Option<Arc<dyn TaskSharing>>,
    ) -> Entry {
        let created_at = now();
        Entry {
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
            settings,
            watchers: Mutex::new(Vec::new()),
            mirror,
            mirrored: Arc::default(),
        }
    }

    /// Whether its TTL ended it (then it is kept one more TTL, see `Tasks::sweep`).
    pub(super) fn expired(&self) -> bool {
        lock(&self.state).expired
    }

    /// Marks it ended by its TTL.
    pub(super) fn expire(&self) {
        lock(&self.state).expired = true;
    }

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
    pub(super) fn settle(&self, payload: TaskPayload) {
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
    pub(super) fn changed(&self) {
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
    pub(super) fn watch(&self, feed: &TaskFeed) {
        let mut watchers = lock(&self.watchers);
        let _ = feed.try_send(self.detailed());
        watchers.push(feed.clone());
    }

    /// Mirrors the task's state now where other instances read it (under way when this
    /// returns; the future says whether it was stored); none when tasks are not shared.
    pub(super) fn publish(&self) -> Option<Mirrored> {
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
        let record = task_sharing::record(sharing.instance(), self.owner(), task);
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

    pub(super) fn detailed(&self) -> DetailedTask {
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

pub(super) fn millis(d: Duration) -> u64 {
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
pub(crate) type Mirrored = task_sharing::Pending<'static, Result<bool, String>>;

pub(super) fn object(result: &CallToolResult) -> JsonObject {
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
