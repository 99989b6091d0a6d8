//! The server's task table: creating a task for a call, its caps, its TTL sweep, and the
//! `tasks/*` requests on the tasks this instance runs.

use super::super::results::{branded, panicked};
use super::super::task_sharing::{Order, TASK_ORDERS_POLL, TaskSharing};
use super::entry::{Entry, Mirrored, TaskInputs, error_object, millis, object, unknown};
use super::settings::TaskSettings;
use crate::sync::lock;
use futures::FutureExt;
use rmcp::ErrorData;
use rmcp::model::{CallToolResult, DetailedTask, Task, TaskPayload};
use serde_json::Value;
use std::collections::{BTreeMap, HashMap};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, OnceLock, Weak};
use tokio_util::sync::CancellationToken;

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
    #[cfg(any(feature = "http", test))]
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
                return entry.expired() && age < ttl * 2;
            }
            entry.expire();
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
        let entry = Arc::new(Entry::new(
            session,
            owner,
            cancel,
            self.settings,
            self.sharing().cloned(),
        ));
        // In the table before the answer goes out: `tasks/get` resolves the id at once.
        tasks.insert(entry.id.clone(), entry.clone());
        if let Some(sharing) = self.sharing()
            && !self.following.swap(true, Ordering::SeqCst)
        {
            tokio::spawn(follow(
                Arc::downgrade(&self.tasks),
                sharing.clone(),
                self.following.clone(),
            ));
        }
        drop(tasks);
        // Mirrored before the answer goes out: every instance resolves the id at once.
        let stored = entry.publish();
        super::super::observe::task_created();
        let future = run(TaskInputs::new(entry.clone()));
        let settled = entry.clone();
        // A tool that panics fails its task (the protocol's error, not the tool's answer).
        let running = std::panic::AssertUnwindSafe(future).catch_unwind();
        tokio::spawn(async move {
            let answer = super::super::cancel::unless_cancelled(&settled.cancel, running).await;
            let payload = match answer {
                // A tool that heard the cancellation and answered first was still cancelled.
                _ if settled.cancel.is_cancelled() => TaskPayload::Cancelled,
                None => TaskPayload::Cancelled,
                Some(Ok(Ok(result))) => TaskPayload::Completed {
                    result: object(&result),
                },
                Some(Ok(Err(error))) => TaskPayload::Failed {
                    error: error_object(&error),
                },
                Some(Err(payload)) => TaskPayload::Failed {
                    error: error_object(&panicked(payload.as_ref())),
                },
            };
            settled.settle(payload);
        });
        Ok(Created {
            task: entry.detailed().task,
            stored,
        })
    }

    /// Task `id` as `caller` may see it: a task created by an identified subject is that
    /// subject's alone (any of its tokens, whatever their scopes); to anyone else it does not
    /// exist, the same answer as an unknown id, so an id that leaked reveals nothing.
    pub(super) fn find(&self, id: &str, caller: Option<&crate::Principal>) -> Result<Arc<Entry>, ErrorData> {
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

    /// `tasks/cancel`: the tool's cancellation fires; its future ends at its next await.
    pub(crate) fn cancel(&self, id: &str, caller: Option<&crate::Principal>) -> Result<(), ErrorData> {
        self.find(id, caller)?.cancel.cancel();
        Ok(())
    }

    /// Whether any task is live (for tests).
    #[cfg(test)]
    pub(super) fn live(&self) -> usize {
        lock(&self.tasks).values().filter(|e| e.is_live()).count()
    }
}

/// Follows this instance's orders while it runs tasks: every [`TASK_ORDERS_POLL`], renews its
/// lease, applies the `tasks/update` and `tasks/cancel` handed to it and writes again the states
/// whose write failed; ends once no task of `table` is live and every state is stored (then
/// clearing `running`, under the table's lock, so that the next task starts it again).
pub(crate) async fn follow(
    table: Weak<Mutex<HashMap<String, Arc<Entry>>>>,
    sharing: Arc<dyn TaskSharing>,
    running: Arc<std::sync::atomic::AtomicBool>,
) {
    loop {
        tokio::time::sleep(TASK_ORDERS_POLL).await;
        let orders = sharing.take().await.unwrap_or_default();
        let Some(table) = table.upgrade() else {
            return;
        };
        for order in orders {
            let Ok(order) = serde_json::from_str::<Order>(&order) else {
                continue;
            };
            let (id, cancel, responses) = match order {
                Order::Update { task, responses } => (task, false, responses),
                Order::Cancel { task } => (task, true, BTreeMap::new()),
            };
            // Who may is checked where the order was given.
            let Some(entry) = lock(&table).get(&id).cloned() else {
                continue;
            };
            if cancel {
                entry.cancelled().cancel();
            } else {
                entry.answer(responses);
            }
        }
        let table = lock(&table);
        // A state whose write failed is written again (each one, so no short-circuit).
        let unmirrored = table.values().filter(|e| e.unmirrored()).count();
        if unmirrored == 0 && !table.values().any(|e| e.is_live()) {
            running.store(false, Ordering::SeqCst);
            return;
        }
    }
}
