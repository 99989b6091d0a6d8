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
//! mirrored there too, so any instance answers for it (`task_sharing.rs`).
//!
//! One concern a file: [`settings`] the bounds, [`entry`] one task, [`table`] the table and the
//! requests on this instance's tasks, [`remote`] the same requests on another instance's.

mod entry;
mod remote;
mod settings;
mod table;
#[cfg(test)]
mod tests;

pub(crate) use entry::{Entry, TaskInputs, outcome};
pub use remote::MAX_REMOTE_WATCHES;
pub use settings::{
    MAX_TASKS, MAX_TASKS_PER_SESSION, NOTIFY_BUFFER, TASK_POLL_INTERVAL, TASK_TTL, TaskSettings,
};
pub(crate) use table::{Outcome, Tasks};
