//! Tasks another instance runs, answered through the backend the instances share: `tasks/get`,
//! `tasks/update`, `tasks/cancel` and a listen naming a task, wherever it runs.

use super::super::results::branded;
use super::super::task_sharing::{INSTANCE_ENDED, Order, Record, TASK_LEASE, TASK_ORDERS_POLL, TaskSharing};
use super::entry::{TaskFeed, error_object, unknown};
use super::settings::TASK_TTL;
use super::table::Tasks;
use rmcp::ErrorData;
use rmcp::model::DetailedTask;
use rmcp::model::TaskPayload;
use serde_json::Value;
use std::collections::BTreeMap;
use std::time::Duration;

/// How many tasks run elsewhere one listen follows at most; the ids past that are ignored, as
/// unknown ids: each one followed polls the backend.
pub const MAX_REMOTE_WATCHES: usize = 64;

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
    let unknown = || unknown(id);
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
            error: error_object(&ErrorData::internal_error(branded(INSTANCE_ENDED), None)),
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
        .map_or(TASK_TTL, Duration::from_millis);
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
        .ok_or_else(|| unknown(id))?;
    let now: Record = serde_json::from_str(&raw).map_err(|_| unknown(id))?;
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
    /// A listen stream naming `ids`: `feed` hears each of them `caller` may see, now and at each
    /// change of its status, wherever it runs (at most [`MAX_REMOTE_WATCHES`] run elsewhere); the
    /// others are ignored, as unknown ids.
    pub(crate) fn watch(&self, ids: &[String], caller: Option<&crate::Principal>, feed: &TaskFeed) {
        let mut remote = 0;
        for id in ids {
            match self.find(id, caller) {
                Ok(entry) => entry.watch(feed),
                // Perhaps another instance's: followed through the backend, up to the cap.
                Err(_) if remote < MAX_REMOTE_WATCHES && self.sharing().is_some() => {
                    remote += 1;
                    self.watch_remote(id, caller, feed);
                }
                Err(_) => {}
            }
        }
    }

    /// Follows task `id`, run by another instance, for a listen on this one (`feed`): its state
    /// now, then each change of its status, until it ends, the listen ends, or the task turns
    /// out unknown to `caller`. Nothing without a backend.
    fn watch_remote(&self, id: &str, caller: Option<&crate::Principal>, feed: &TaskFeed) {
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
