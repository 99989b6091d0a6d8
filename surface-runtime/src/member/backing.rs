//! The seam between a member and where its value lives.
//!
//! By default a member keeps its value in this process, in its own typed state; nothing here
//! runs then. A backing ([`Backing`]) moves the value elsewhere — the Redis store
//! (`surface_runtime::store`, feature `redis`) is the one there is — and every member operation
//! becomes one step on it, with the value encoded as JSON text. The core defines the seam; a
//! backend implements it, and the core never names the backend.
//!
//! A backing can fail in the middle of a call (a store that does not answer). Such a failure is
//! recorded against the running call, so the call answers it instead of what it computed
//! ([`guard`]), and later operations in that call fail at once instead of waiting again; the
//! member meanwhile falls back to the value it last heard.

use super::change::{Change, MemberValue, to_json};
use crate::failure::{Failure, FailureKind};
use crate::sync::lock;
use serde_json::Value;
use std::any::Any;
use std::future::Future;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, OnceLock};
use tokio::sync::broadcast;

/// Why a backing operation did not complete: one sentence the running call answers with.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Unanswered(pub String);

/// A backing's answer.
pub type Backed<T> = Result<T, Unanswered>;

/// What a backing keeps of a turn it handed out; dropping it gives the turn back.
pub type Hold = Box<dyn Any + Send>;

/// This instance's turn at a read-modify-write of one value, with the value as the backing
/// last knew it (no read when it knows one: a stale value is caught by [`Backing::swap`]).
pub struct Turn {
    /// The stored JSON, when there is one.
    pub value: Option<String>,
    /// The backing's hold, handed to [`Backing::swap`]; dropped, the turn is given back.
    pub hold: Hold,
}

/// What [`Backing::swap`] did.
#[derive(Debug)]
#[allow(
    dead_code,
    reason = "only a backend answers it, and the one there is is behind a feature"
)]
pub enum Swapped {
    /// The value was written (and its change published).
    Written,
    /// Another write came first, so nothing was written: this is the value stored now (the
    /// hold knows it too), to compute the update again from.
    Moved(Option<String>),
}

/// Which kind of entries [`Backing::seed_entries`] seeds.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Entries {
    /// A collection's items: `(id, item)`.
    Hash,
    /// A stream's chunks, oldest first: `("", chunk)`.
    Stream,
}

/// One member's (or counter's) place outside this process. Values are JSON text; every write
/// carries the [`Change`] the backing publishes to every instance together with it, so no
/// instance sees a value without its change or a change without its value.
///
/// Crate-private, so no compiler message about a user's own method suggests it; a backend hands
/// it to members wrapped in a [`Backend`].
pub(crate) trait Backing: Send + Sync + std::fmt::Debug {
    /// The stored value (a cell's), if any.
    fn get(&self) -> Backed<Option<String>>;
    /// Stores `value` and publishes `change`, in one step.
    fn set(&self, value: String, change: &Change) -> Backed<()>;
    /// Publishes `change` (an event: nothing is stored).
    fn publish(&self, change: &Change) -> Backed<()>;
    /// Stores `value` unless a value is stored already (a cell's or counter's seed).
    fn seed_value(&self, value: String) -> Backed<()>;
    /// Seeds a collection's items or a stream's chunks unless this member was seeded before.
    fn seed_entries(&self, kind: Entries, entries: Vec<(String, String)>) -> Backed<()>;
    /// The value after adding one; a value that is gone starts again from `seed`, not zero.
    fn incr(&self, seed: u64) -> Backed<u64>;
    /// The item `id` of a collection.
    fn item(&self, id: String) -> Backed<Option<String>>;
    /// Whether the collection has an item `id`.
    fn has_item(&self, id: String) -> Backed<bool>;
    /// Every item id of the collection.
    fn ids(&self) -> Backed<Vec<String>>;
    /// Every `(id, item)` of the collection.
    fn items(&self) -> Backed<Vec<(String, String)>>;
    /// How many items the collection has.
    fn count(&self) -> Backed<usize>;
    /// Stores the item `id` and publishes `change`; answers what it replaced.
    fn upsert(&self, id: String, item: String, change: &Change) -> Backed<Option<String>>;
    /// Deletes the item `id` and, if it was there, publishes `change`; answers what it deleted.
    fn remove(&self, id: String, change: &Change) -> Backed<Option<String>>;
    /// Waits for this instance's turn at the value (the item `id`'s, when given) and answers
    /// it with the value as last known; other instances are not waited for.
    fn turn(&self, id: Option<&str>) -> Backed<Turn>;
    /// Writes `value` and publishes `change` in one step, only if the stored value is still the
    /// one the turn knows (optimistic concurrency); otherwise answers what is stored now.
    fn swap(&self, hold: &mut Hold, id: Option<&str>, value: String, change: &Change) -> Backed<Swapped>;
    /// Appends a chunk to a stream kept to its last `keep` and publishes it.
    fn push(&self, keep: usize, chunk: String) -> Backed<()>;
    /// Every stored chunk, oldest first.
    fn chunks(&self) -> Backed<Vec<String>>;
    /// Calls `subscribe` at this instance's delivery point of the stream, then answers the
    /// chunks stored up to it: no chunk is missed or seen twice between the two.
    fn open(&self, subscribe: &mut dyn FnMut()) -> Backed<Vec<String>>;
    /// Moves the delivery point to the last stored chunk (when a stream is bound).
    fn mark_last(&self) -> Backed<()>;
    /// A chunk the feed heard (`entry`: where it is stored): runs `deliver` unless this
    /// instance has delivered it already, at the delivery point.
    fn heard_chunk(&self, entry: Option<&str>, deliver: &mut dyn FnMut());
    /// The feed reconnected; `entry`: the stream's last stored chunk then.
    fn heard_lag(&self, entry: Option<&str>);
    /// A receiver of the feed's reconnections (each one: re-read).
    fn lagged(&self) -> broadcast::Receiver<u64>;
}

/// A backing on its way to a member (what [`LiveMember::bind`] takes; hidden: only a backend
/// makes one).
#[doc(hidden)]
pub struct Backend(pub(crate) Box<dyn Backing>);

/// A member's backing with its value type's codec, as plain functions so the member's own
/// methods need no serde bounds.
#[derive(Debug)]
pub(crate) struct Bound<T> {
    backing: Box<dyn Backing>,
    pub(crate) decode: fn(&str) -> Option<T>,
    encode: fn(&T) -> Value,
}

impl<T: MemberValue> Bound<T> {
    pub(crate) fn new(backing: Box<dyn Backing>) -> Self {
        Bound {
            backing,
            encode: to_json::<T>,
            decode: |s| serde_json::from_str(s).ok(),
        }
    }
}

impl<T> Bound<T> {
    /// `value` as JSON.
    pub(crate) fn json(&self, value: &T) -> Value {
        (self.encode)(value)
    }

    /// The stored form of `value`.
    pub(crate) fn stored(&self, value: &T) -> String {
        self.json(value).to_string()
    }

    /// Runs `op` (see [`run`]).
    pub(crate) fn run<R>(&self, op: impl FnOnce(&dyn Backing) -> Backed<R>) -> Option<R> {
        run(&*self.backing, op)
    }

    /// The backing, for what cannot fail.
    pub(crate) fn backing(&self) -> &dyn Backing {
        &*self.backing
    }
}

/// Runs `op` on `backing` unless the running call failed on a backing already; a failure is
/// recorded against the running call and answers `None`.
pub(crate) fn run<R>(backing: &dyn Backing, op: impl FnOnce(&dyn Backing) -> Backed<R>) -> Option<R> {
    if already_faulted() {
        return None;
    }
    op(backing).map_err(|Unanswered(message)| record(message)).ok()
}

/// Puts a member's `bound` backing in its `slot`; from then on every call carries a fault slot.
pub(crate) fn install<B>(slot: &OnceLock<B>, bound: B) -> Result<(), String> {
    slot.set(bound).map_err(|_| "it is in a store already")?;
    ACTIVE.store(true, Ordering::Relaxed);
    Ok(())
}

/// Whether any member lives in a backing in this process: only then do calls carry a fault slot.
pub(crate) fn active() -> bool {
    ACTIVE.load(Ordering::Relaxed)
}

static ACTIVE: AtomicBool = AtomicBool::new(false);

tokio::task_local! {
    /// The first backing failure of the running call.
    static FAULT: Arc<Mutex<Option<String>>>;
}

fn already_faulted() -> bool {
    FAULT.try_with(|f| lock(f).is_some()).unwrap_or(false)
}

fn record(message: String) {
    let recorded = FAULT.try_with(|f| {
        lock(f).get_or_insert_with(|| message.clone());
    });
    if recorded.is_err() {
        tracing::warn!("surface store: {message}");
    }
}

fn outcome<T>(slot: &Mutex<Option<String>>, answer: Result<T, Failure>) -> Result<T, Failure> {
    match lock(slot).take() {
        Some(message) => Err(Failure::new(FailureKind::Error, message)),
        None => answer,
    }
}

/// Runs a call; if any backing operation in it failed, the call answers that failure instead.
pub(crate) async fn guard<T>(fut: impl Future<Output = Result<T, Failure>>) -> Result<T, Failure> {
    if !active() {
        return fut.await;
    }
    let slot = Arc::new(Mutex::new(None));
    let answer = FAULT.scope(slot.clone(), fut).await;
    outcome(&slot, answer)
}

/// [`guard`] for a synchronous read or write.
pub(crate) fn guard_sync<T>(f: impl FnOnce() -> Result<T, Failure>) -> Result<T, Failure> {
    if !active() {
        return f();
    }
    let slot = Arc::new(Mutex::new(None));
    let answer = FAULT.sync_scope(slot.clone(), f);
    outcome(&slot, answer)
}
