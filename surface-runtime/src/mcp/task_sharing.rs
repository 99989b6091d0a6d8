//! MCP tasks across instances: the seam a backend implements ([`TaskSharing`]; the Redis
//! store's, set by `HttpOptions::store`) and what the task table does with it.
//!
//! A task runs on the instance that created it (its tool's future cannot move), and that
//! instance mirrors each change of the task's state into the backend — status, status message,
//! result, error or questions, who created it, its time to live — each write numbered so an
//! older one never overwrites a newer one, and a terminal state never overwritten at all. Every
//! write, and a poll every [`TASK_ORDERS_POLL`] while the instance runs a task, renews the
//! instance's lease ([`TASK_LEASE`]). A write the store did not answer is made again at the
//! next poll, so a terminal state is not lost to a moment without Redis.
//!
//! An instance that does not hold a task id reads it from the backend: `tasks/get` answers the
//! mirrored state (a task another subject created is "not found", as on its own instance);
//! `tasks/update` and `tasks/cancel` are handed to the owning instance, which takes them at its
//! next poll (at most [`TASK_ORDERS`] waiting per instance; older ones are dropped). A task
//! still live whose instance's lease has run out is written `failed`, saying that the instance
//! serving it ended, by whichever instance reads it first: it is never `working` forever.
//!
//! `notifications/tasks` on a listen stream are sent by the instance that runs the task as its
//! state changes; a listen on another instance naming it reads its mirrored state every
//! [`TASK_ORDERS_POLL`] and hears each change of its status (and its end, `failed`, when the
//! instance running it ended), so within that poll of the change.

use super::results::branded;
use super::tasks::{Entry, Tasks};
use crate::sync::lock;
use rmcp::ErrorData;
use rmcp::model::{DetailedTask, TaskPayload};
use serde_json::Value;
use std::collections::{BTreeMap, HashMap};
use std::sync::atomic::Ordering;
use std::sync::{Arc, Mutex, Weak};
use std::time::Duration;

/// How long an instance's lease on the tasks it runs lasts without renewal: a live task whose
/// instance has not renewed it for this long is reported `failed`.
pub const TASK_LEASE: Duration = Duration::from_secs(5);
/// How often an instance running tasks renews its lease and takes the `tasks/update` and
/// `tasks/cancel` other instances handed it.
pub const TASK_ORDERS_POLL: Duration = Duration::from_millis(200);
/// How many handed-over `tasks/update` and `tasks/cancel` wait for one instance (the oldest are
/// dropped past that).
pub const TASK_ORDERS: usize = 1024;

/// What a live task's record says when the instance running it ended.
pub(crate) const INSTANCE_ENDED: &str =
    "the instance serving this task ended before the task finished; its outcome is unknown";

/// A backend's answer to come.
pub type Pending<'a, T> = std::pin::Pin<Box<dyn std::future::Future<Output = T> + Send + 'a>>;

/// Where tasks' states live when several instances serve one surface.
///
/// Hidden: the seam a backend implements (`HttpOptions::store`, feature `redis`). Every method
/// starts its work before it returns (dropping the future does not undo it) and ends within the
/// backend's own timeout.
#[doc(hidden)]
pub trait TaskSharing: Send + Sync + std::fmt::Debug {
    /// This instance's name among those sharing the tasks.
    fn instance(&self) -> &str;
    /// Stores `record` as task `id`'s state number `version`, kept `keep`, unless the stored
    /// state is terminal or numbered `version` or more; renews this instance's lease. Answers
    /// whether it was stored.
    fn save(
        &self,
        id: &str,
        version: u64,
        terminal: bool,
        record: String,
        keep: Duration,
    ) -> Pending<'static, Result<bool, String>>;
    /// Task `id`'s stored state and its number.
    fn load(&self, id: &str) -> Pending<'static, Result<Option<(u64, String)>, String>>;
    /// Hands `order` to the instance `instance` (its next [`take`](Self::take)).
    fn send(&self, instance: &str, order: String) -> Pending<'static, Result<(), String>>;
    /// The orders handed to this instance since its last take; renews its lease.
    fn take(&self) -> Pending<'static, Result<Vec<String>, String>>;
    /// Whether the lease of `instance` is current.
    fn alive(&self, instance: &str) -> Pending<'static, Result<bool, String>>;
}

/// A task's state as the backend keeps it.
#[derive(serde::Serialize, serde::Deserialize)]
struct Record {
    /// The instance running it.
    instance: String,
    /// Who created it (issuer, subject), when a face identified the caller.
    owner: Option<(String, String)>,
    task: DetailedTask,
}

/// A `tasks/update` or `tasks/cancel` handed to the instance running the task.
#[derive(serde::Serialize, serde::Deserialize)]
#[serde(tag = "op", rename_all = "lowercase")]
enum Order {
    Update {
        task: String,
        responses: BTreeMap<String, Value>,
    },
    Cancel {
        task: String,
    },
}

/// The record of `entry`'s state `task`, as `instance` writes it.
pub(crate) fn record(instance: &str, entry: &Entry, task: DetailedTask) -> String {
    let owner = entry
        .owner()
        .map(|p| (p.issuer().to_owned(), p.subject().to_owned()));
    serde_json::to_string(&Record {
        instance: instance.to_owned(),
        owner,
        task,
    })
    .unwrap_or_default()
}

fn unreachable(e: String) -> ErrorData {
    ErrorData::internal_error(branded(&e), None)
}

/// A task another instance runs, as `caller` may see it.
struct Remote {
    version: u64,
    record: Record,
}

impl Remote {
    fn live(&self) -> bool {
        !self.record.task.status().is_terminal()
    }
}

async fn find(
    sharing: &dyn TaskSharing,
    id: &str,
    caller: Option<&crate::Principal>,
) -> Result<Remote, ErrorData> {
    let unknown = || super::tasks::unknown(id);
    let (version, raw) = sharing.load(id).await.map_err(unreachable)?.ok_or_else(unknown)?;
    let record: Record = serde_json::from_str(&raw).map_err(|_| unknown())?;
    let visible = match &record.owner {
        None => true,
        Some((issuer, subject)) => caller.is_some_and(|c| c.issuer() == issuer && c.subject() == subject),
    };
    if !visible {
        return Err(unknown());
    }
    Ok(Remote { version, record })
}

/// Whether the instance running `remote` ended with it live; if so, writes it `failed` (unless
/// someone wrote it meanwhile) and answers its state now.
async fn orphaned(
    sharing: &dyn TaskSharing,
    id: &str,
    remote: &Remote,
) -> Result<Option<DetailedTask>, ErrorData> {
    if !remote.live()
        || sharing
            .alive(&remote.record.instance)
            .await
            .map_err(unreachable)?
    {
        return Ok(None);
    }
    let mut task = remote.record.task.task.clone();
    task.last_updated_at = rmcp::task_manager::current_timestamp();
    let failed = DetailedTask::new(
        task,
        TaskPayload::Failed {
            error: super::tasks::error_object(&ErrorData::internal_error(branded(INSTANCE_ENDED), None)),
        },
    );
    let record = Record {
        instance: remote.record.instance.clone(),
        owner: remote.record.owner.clone(),
        task: failed.clone(),
    };
    let body = serde_json::to_string(&record).unwrap_or_default();
    let keep = remote
        .record
        .task
        .task
        .ttl_ms
        .map_or(super::tasks::TASK_TTL, Duration::from_millis);
    let stored = sharing
        .save(id, remote.version + 1, true, body, keep)
        .await
        .map_err(unreachable)?;
    if stored {
        return Ok(Some(failed));
    }
    // Written meanwhile (by its instance, or another reader): that state is the answer.
    let (_, raw) = sharing
        .load(id)
        .await
        .map_err(unreachable)?
        .ok_or_else(|| super::tasks::unknown(id))?;
    let now: Record = serde_json::from_str(&raw).map_err(|_| super::tasks::unknown(id))?;
    Ok(Some(now.task))
}

/// Hands `order` for task `id` to the instance running it, unless it ended.
async fn hand_over(
    sharing: &dyn TaskSharing,
    id: &str,
    caller: Option<&crate::Principal>,
    order: Order,
) -> Result<(), ErrorData> {
    let remote = find(sharing, id, caller).await?;
    if !remote.live() || orphaned(sharing, id, &remote).await?.is_some() {
        return Ok(());
    }
    let order = serde_json::to_string(&order).unwrap_or_default();
    sharing
        .send(&remote.record.instance, order)
        .await
        .map_err(unreachable)
}

/// How many reads of a task followed for a listen may fail in a row (the store unreachable)
/// before the listen stops following it: a lease's worth of polls.
const REMOTE_WATCH_MISSES: u32 = (TASK_LEASE.as_millis() / TASK_ORDERS_POLL.as_millis()) as u32;

impl Tasks {
    /// Follows task `id`, run by another instance, for a listen on this one (`feed`): its state
    /// now, then each change of its status, until it ends, the listen ends, or the task turns
    /// out unknown to `caller`. Nothing without a backend.
    pub(crate) fn watch_remote(
        &self,
        id: &str,
        caller: Option<&crate::Principal>,
        feed: &super::tasks::TaskFeed,
    ) {
        let Some(sharing) = self.sharing().cloned() else {
            return;
        };
        let (id, caller, feed) = (id.to_owned(), caller.cloned(), feed.clone());
        tokio::spawn(async move {
            let mut heard = None;
            let mut misses = 0;
            while !feed.is_closed() {
                let task = match find(sharing.as_ref(), &id, caller.as_ref()).await {
                    Ok(remote) => match orphaned(sharing.as_ref(), &id, &remote).await {
                        Ok(ended) => Some(ended.unwrap_or(remote.record.task)),
                        Err(_) => None,
                    },
                    // Unknown (or another subject's): nothing to hear.
                    Err(e) if e.code == rmcp::model::ErrorCode::INVALID_PARAMS => return,
                    Err(_) => None,
                };
                match task {
                    Some(task) => {
                        misses = 0;
                        let status = task.status();
                        if heard != Some(status) {
                            // As for a local task: a listen that does not read does not hold
                            // this up; a full stream hears it at the next poll.
                            match feed.try_send(task) {
                                Ok(()) => heard = Some(status),
                                Err(tokio::sync::mpsc::error::TrySendError::Closed(_)) => return,
                                Err(tokio::sync::mpsc::error::TrySendError::Full(_)) => {}
                            }
                        }
                        if status.is_terminal() {
                            return;
                        }
                    }
                    None if misses >= REMOTE_WATCH_MISSES => return,
                    None => misses += 1,
                }
                tokio::time::sleep(TASK_ORDERS_POLL).await;
            }
        });
    }

    /// `tasks/get` by `caller`, wherever the task runs.
    pub(crate) async fn get_anywhere(
        &self,
        id: &str,
        caller: Option<&crate::Principal>,
    ) -> Result<DetailedTask, ErrorData> {
        let here = self.get(id, caller);
        let Some(sharing) = self.sharing() else {
            return here;
        };
        if here.is_ok() {
            return here;
        }
        let remote = find(sharing.as_ref(), id, caller).await?;
        match orphaned(sharing.as_ref(), id, &remote).await? {
            Some(task) => Ok(task),
            None => Ok(remote.record.task),
        }
    }

    /// `tasks/update` by `caller`, wherever the task runs.
    pub(crate) async fn update_anywhere(
        &self,
        id: &str,
        caller: Option<&crate::Principal>,
        responses: BTreeMap<String, Value>,
    ) -> Result<(), ErrorData> {
        match self.sharing() {
            Some(sharing) if self.get(id, caller).is_err() => {
                let order = Order::Update {
                    task: id.to_owned(),
                    responses,
                };
                hand_over(sharing.as_ref(), id, caller, order).await
            }
            _ => self.update(id, caller, responses),
        }
    }

    /// `tasks/cancel` by `caller`, wherever the task runs.
    pub(crate) async fn cancel_anywhere(
        &self,
        id: &str,
        caller: Option<&crate::Principal>,
    ) -> Result<(), ErrorData> {
        match self.sharing() {
            Some(sharing) if self.get(id, caller).is_err() => {
                let order = Order::Cancel { task: id.to_owned() };
                hand_over(sharing.as_ref(), id, caller, order).await
            }
            _ => self.cancel(id, caller),
        }
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
