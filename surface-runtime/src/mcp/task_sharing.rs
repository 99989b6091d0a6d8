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
//!
//! This file is the seam and what travels through it (a task's record, an order); the task
//! table's side is in `tasks/`: `tasks/entry.rs` mirrors, `tasks/table.rs` follows the orders,
//! `tasks/remote.rs` answers for the tasks other instances run.

use rmcp::model::DetailedTask;
use serde_json::Value;
use std::collections::BTreeMap;
use std::sync::Arc;
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
pub(crate) struct Record {
    /// The instance running it.
    pub(crate) instance: String,
    /// Who created it (issuer, subject), when a face identified the caller.
    pub(crate) owner: Option<(String, String)>,
    pub(crate) task: DetailedTask,
}

/// A `tasks/update` or `tasks/cancel` handed to the instance running the task.
#[derive(serde::Serialize, serde::Deserialize)]
#[serde(tag = "op", rename_all = "lowercase")]
pub(crate) enum Order {
    Update {
        task: String,
        responses: BTreeMap<String, Value>,
    },
    Cancel {
        task: String,
    },
}

/// The record of state `task` of a task created by `owner`, as `instance` writes it.
pub(crate) fn record(instance: &str, owner: Option<Arc<crate::Principal>>, task: DetailedTask) -> String {
    let owner = owner.map(|p| (p.issuer().to_owned(), p.subject().to_owned()));
    serde_json::to_string(&Record {
        instance: instance.to_owned(),
        owner,
        task,
    })
    .unwrap_or_default()
}
