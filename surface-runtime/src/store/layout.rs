//! Where everything of one surface lives in Redis: every key and the change channel, named in
//! this one place.
//!
//! All of them start with the surface's prefix, `surface:{<name>}`: the name is a hash tag, so
//! every key of one surface lands in one Redis Cluster slot and each script's keys stay together
//! on one master (one Redis ignores the braces).

use crate::spec::MemberKind;

/// The key prefix of the surface `surface`.
pub(crate) fn prefix(surface: &str) -> String {
    format!("surface:{{{surface}}}")
}

/// The channel every write publishes its change on.
pub(crate) fn channel(prefix: &str) -> String {
    format!("{prefix}:changes")
}

/// A member's value: a string (cell), a hash (collection) or a stream.
pub(crate) fn member(prefix: &str, kind: MemberKind, name: &str) -> String {
    format!("{prefix}:{}:{name}", kind.word())
}

/// A counter's value (a namespace apart from members).
pub(crate) fn counter(prefix: &str, name: &str) -> String {
    format!("{prefix}:counter:{name}")
}

/// The version of the value at `key` (a cell's), or the hash of its items' versions.
pub(crate) fn versions(key: &str) -> String {
    format!("{key}:version")
}

/// Set once the member `name`'s starting entries are seeded, so only the first instance seeds.
pub(crate) fn seeded(prefix: &str, name: &str) -> String {
    format!("{prefix}:seeded:{name}")
}

/// A shared log's entries.
pub(crate) fn log(prefix: &str, name: &str) -> String {
    format!("{prefix}:log:{name}")
}

/// An SSE stream's stored events.
#[cfg(feature = "http")]
pub(crate) fn sse(prefix: &str, stream: &str) -> String {
    format!("{prefix}:sse:{stream}")
}

/// A session's `initialize` parameters.
#[cfg(feature = "http")]
pub(crate) fn session(prefix: &str, session: &str) -> String {
    format!("{prefix}:session:{session}")
}

/// The subject that opened a session (beside its state, with its expiry).
#[cfg(feature = "http")]
pub(crate) fn session_owner(prefix: &str, session: &str) -> String {
    format!("{prefix}:session-owner:{session}")
}

/// A task's mirrored state.
#[cfg(feature = "http")]
pub(crate) fn task(prefix: &str, id: &str) -> String {
    format!("{prefix}:task:{id}")
}

/// Present while `instance` is alive and runs tasks.
#[cfg(feature = "http")]
pub(crate) fn task_lease(prefix: &str, instance: &str) -> String {
    format!("{prefix}:task-lease:{instance}")
}

/// The task orders handed to `instance`.
#[cfg(feature = "http")]
pub(crate) fn task_orders(prefix: &str, instance: &str) -> String {
    format!("{prefix}:task-orders:{instance}")
}
