//! [`ReadOnly`]: a member nobody may write, what a projected surface's derived members and
//! their typed clients are.

use crate::dispatch::{CellClient, CollectionClient, EventClient, StreamClient};
use crate::failure::{Failure, FailureKind};
use crate::member::{Cell, ChangeStream, Collection, Event, LiveMember, Stream, Write};
use crate::spec::MemberKind;
use serde::de::DeserializeOwned;
use serde_json::Value;
use std::fmt;
use std::sync::Arc;
use tokio::task::JoinHandle;

/// A member nobody may write: a derived member of a projected surface (`#[cell(derived)]`),
/// and the typed client of one (`client.load()` on B's client).
///
/// It offers the reads of the member it wraps and none of its writes, so writing one
/// (`observer.load.set(…)`, `client.load().set(…)`) does not compile. A write that arrives
/// erased (from a dispatch) is refused with a sentence. A derived member follows its source
/// until it is dropped, which ends its watch there.
///
/// ```
/// # #[tokio::main(flavor = "current_thread")] async fn main() {
/// use surface_runtime::{Cell, LiveMember, ReadOnly, Write};
/// let load = ReadOnly::new(Cell::new(3u32));     // a member that keeps the value it was built with
/// assert_eq!(load.value(), 3);
/// let refused = load.write(Write::Set(serde_json::json!(4))).unwrap_err();
/// assert_eq!(refused.message, "this cell is derived from another surface, so it is read-only: change the surface it follows");
/// # }
/// ```
pub struct ReadOnly<M> {
    inner: Arc<M>,
    feeder: Option<JoinHandle<()>>,
}

impl<M> ReadOnly<M> {
    /// `member`, read-only: a derived member that follows nothing keeps the value it was built
    /// with (what a test or a placeholder needs).
    pub fn new(member: M) -> Self {
        ReadOnly {
            inner: Arc::new(member),
            feeder: None,
        }
    }

    /// `member`, fed by the task `feeder` (aborted when this is dropped).
    pub(super) fn fed(inner: Arc<M>, feeder: JoinHandle<()>) -> Self {
        ReadOnly {
            inner,
            feeder: Some(feeder),
        }
    }

    /// Whether it still follows its source: false once the source's change feed ended (the
    /// source failed or closed), after which it keeps the last value it had; false for a
    /// member built with [`ReadOnly::new`]. Over a [`Source::redialling`](super::Source::redialling) the feed does not
    /// end: it waits for the next connection.
    pub fn is_following(&self) -> bool {
        self.feeder.as_ref().is_some_and(|f| !f.is_finished())
    }
}

impl<M> Drop for ReadOnly<M> {
    fn drop(&mut self) {
        // The feeder owns the watch on the source: aborting it drops the watch, which lets go
        // of the source's feed (in process) or sends the unwatch (over the wire).
        if let Some(feeder) = &self.feeder {
            feeder.abort();
        }
    }
}

impl<M> fmt::Debug for ReadOnly<M> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ReadOnly")
            .field("following", &self.is_following())
            .finish_non_exhaustive()
    }
}

impl<T: Clone> ReadOnly<Cell<T>> {
    /// A copy of the current value. (Not `get`: a method that close to `set` would make
    /// rustc answer an attempted write by pointing into this crate, instead of saying plainly
    /// that the member has no `set`.)
    pub fn value(&self) -> T {
        self.inner.get()
    }
    /// Every value it takes from now on.
    pub fn subscribe(&self) -> tokio::sync::broadcast::Receiver<T> {
        self.inner.subscribe()
    }
    /// How many feeds watch it now.
    pub fn watchers(&self) -> usize {
        self.inner.watchers()
    }
}

impl<K: Ord + Clone, V: Clone> ReadOnly<Collection<K, V>> {
    /// A copy of the item at `key`.
    pub fn get(&self, key: &K) -> Option<V> {
        self.inner.get(key)
    }
    /// Every key, in order.
    pub fn keys(&self) -> Vec<K> {
        self.inner.keys()
    }
    /// How many items it holds.
    pub fn len(&self) -> usize {
        self.inner.len()
    }
    /// Whether it holds no item.
    pub fn is_empty(&self) -> bool {
        self.inner.len() == 0
    }
    /// How many feeds watch it now.
    pub fn watchers(&self) -> usize {
        self.inner.watchers()
    }
}

impl<C: Clone> ReadOnly<Stream<C>> {
    /// The chunks kept, oldest first.
    pub fn snapshot(&self) -> Vec<C> {
        self.inner.snapshot()
    }
    /// The snapshot and a receiver of every later chunk (see [`Stream::open`]).
    pub fn open(&self) -> (Vec<C>, tokio::sync::broadcast::Receiver<C>) {
        self.inner.open()
    }
    /// How many chunks it keeps.
    pub fn history_limit(&self) -> usize {
        self.inner.history_limit()
    }
    /// How many feeds watch it now.
    pub fn watchers(&self) -> usize {
        self.inner.watchers()
    }
}

impl<T: Clone> ReadOnly<Event<T>> {
    /// Every occurrence from now on.
    pub fn subscribe(&self) -> tokio::sync::broadcast::Receiver<T> {
        self.inner.subscribe()
    }
    /// How many feeds watch it now.
    pub fn watchers(&self) -> usize {
        self.inner.watchers()
    }
}

impl<T: serde::Serialize + DeserializeOwned> ReadOnly<CellClient<'_, T>> {
    /// The current value (`value`, not `get`, as on [`ReadOnly<Cell<T>>`]).
    pub async fn value(&self) -> Result<T, Failure> {
        self.inner.get().await
    }
    /// Every change from now on.
    pub async fn watch(&self) -> Result<ChangeStream, Failure> {
        self.inner.watch().await
    }
}

impl<K: serde::Serialize + DeserializeOwned, V: serde::Serialize + DeserializeOwned>
    ReadOnly<CollectionClient<'_, K, V>>
{
    /// Every key.
    pub async fn keys(&self) -> Result<Vec<K>, Failure> {
        self.inner.keys().await
    }
    /// The item at `key`; `None` when there is none.
    pub async fn get(&self, key: &K) -> Result<Option<V>, Failure> {
        self.inner.get(key).await
    }
    /// Every upsert and delete from now on.
    pub async fn watch(&self) -> Result<ChangeStream, Failure> {
        self.inner.watch().await
    }
}

impl<C: serde::Serialize + DeserializeOwned> ReadOnly<StreamClient<'_, C>> {
    /// Every chunk kept.
    pub async fn snapshot(&self) -> Result<Vec<C>, Failure> {
        self.inner.snapshot().await
    }
    /// Every chunk from now on.
    pub async fn watch(&self) -> Result<ChangeStream, Failure> {
        self.inner.watch().await
    }
}

impl<T: serde::Serialize + DeserializeOwned> ReadOnly<EventClient<'_, T>> {
    /// Every occurrence from now on.
    pub async fn watch(&self) -> Result<ChangeStream, Failure> {
        self.inner.watch().await
    }
}

impl<M: LiveMember> LiveMember for ReadOnly<M> {
    fn kind(&self) -> MemberKind {
        self.inner.kind()
    }
    fn read(&self) -> Value {
        self.inner.read()
    }
    fn read_item(&self, id: &str) -> Result<Value, Failure> {
        self.inner.read_item(id)
    }
    fn write(&self, _write: Write) -> Result<(), Failure> {
        Err(Failure::new(
            FailureKind::Refused,
            format!(
                "this {} is derived from another surface, so it is read-only: change the surface it follows",
                self.inner.kind().word()
            ),
        ))
    }
    fn changes(&self) -> ChangeStream {
        self.inner.changes()
    }
    fn touched(&self) -> ChangeStream {
        self.inner.touched()
    }
    fn bind(&self, _backing: crate::member::backing::Backend) -> Result<(), String> {
        Err(format!(
            "a derived {} follows the surface it is projected from and cannot live in a store",
            self.inner.kind().word()
        ))
    }
}
