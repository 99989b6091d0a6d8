//! The task table's bounds and their defaults.

use std::time::Duration;

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
