//! Live members: the runtime values behind `#[cell]`, `#[collection]`, `#[stream]`, `#[event]`.
//!
//! Each member holds its state and publishes every change on a broadcast channel. Typed
//! subscribers (`subscribe`) see typed changes; faces see the erased [`Change`] feed through
//! [`LiveMember::changes`]. A change is built only when someone listens.

use crate::failure::{Failure, FailureKind};
use crate::spec::MemberKind;
use crate::sync::{lock, read, write};
use futures::stream::{self, BoxStream, StreamExt};
use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::Value;
use std::collections::{BTreeMap, VecDeque};
use std::sync::{Mutex, RwLock};
use tokio::sync::broadcast;

mod counter;

pub use counter::Counter;

#[cfg(feature = "redis")]
use crate::store::Remote;
#[cfg(feature = "redis")]
use std::sync::OnceLock;

/// How many changes a slow subscriber may fall behind before it is told it lagged.
const FEED_CAPACITY: usize = 256;

/// An erased change of one member, as faces see it.
#[derive(Clone, Debug, PartialEq, Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum Change {
    /// A cell was written.
    Set(Value),
    /// A collection item was inserted or replaced; `id` is its key as it appears in URIs.
    Upserted {
        /// The item's key, URI-shaped (`"42"`, `"alice"`).
        id: String,
    },
    /// A collection item was deleted.
    Removed {
        /// The item's key, URI-shaped.
        id: String,
    },
    /// A stream yielded a chunk.
    Chunk(Value),
    /// An event was published.
    Published(Value),
    /// The subscriber fell behind and missed this many changes; re-read the member.
    Lagged(u64),
}

/// A stream of erased changes of one member.
pub type ChangeStream = BoxStream<'static, Change>;

/// The bound every member value, item, chunk and event type meets.
#[diagnostic::on_unimplemented(
    message = "`{Self}` cannot be the value of a surface member",
    label = "needs `Serialize`, `Deserialize`, `JsonSchema`, `Clone`, `Send` and `Sync`",
    note = "add `#[derive(Clone, serde::Serialize, serde::Deserialize, schemars::JsonSchema)]` to the type"
)]
pub trait MemberValue:
    Serialize + DeserializeOwned + schemars::JsonSchema + Clone + Send + Sync + 'static
{
}
impl<T> MemberValue for T where
    T: Serialize + DeserializeOwned + schemars::JsonSchema + Clone + Send + Sync + 'static
{
}

/// The bound every collection key type meets.
#[diagnostic::on_unimplemented(
    message = "`{Self}` cannot be the key of a surface collection",
    label = "needs `Serialize`, `Deserialize`, `JsonSchema`, `Ord`, `Clone`, `Send` and `Sync`",
    note = "integers and `String` are the usual keys"
)]
pub trait MemberKey: MemberValue + Ord {}
impl<T: MemberValue + Ord> MemberKey for T {}

/// What every live member offers a face, erased of its types.
pub trait LiveMember: Send + Sync {
    /// Its kind.
    fn kind(&self) -> MemberKind;
    /// The whole member as JSON: a cell's value, a collection's keys, a stream's snapshot,
    /// `null` for an event.
    fn read(&self) -> Value;
    /// One item of a collection, addressed by its URI-shaped id.
    fn read_item(&self, id: &str) -> Result<Value, Failure> {
        let _ = id;
        Err(Failure::new(
            FailureKind::Unknown,
            format!("a {} has no items", self.kind().word()),
        ))
    }
    /// Applies a write that arrived erased (from a client over a dispatch).
    fn write(&self, write: Write) -> Result<(), Failure>;
    /// Its change feed.
    fn changes(&self) -> ChangeStream;
    /// Moves the member's value into a store (what `store::RedisStore::attach` calls).
    #[cfg(feature = "redis")]
    #[doc(hidden)]
    fn bind_store(&self, remote: Remote) -> Result<(), String> {
        let _ = remote;
        Err(format!("a {} cannot live in a store", self.kind().word()))
    }
    /// Hands the member a change the store's feed heard (`entry`: a stream chunk's entry id).
    #[cfg(feature = "redis")]
    #[doc(hidden)]
    fn deliver(&self, change: Change, entry: Option<&str>) {
        let _ = (change, entry);
    }
}

/// A member bound to a store: its place there and its type's codec, as plain functions so the
/// member's own methods need no serde bounds.
#[cfg(feature = "redis")]
#[derive(Debug)]
struct Bound<T> {
    remote: Remote,
    encode: fn(&T) -> Value,
    decode: fn(&str) -> Option<T>,
}

#[cfg(feature = "redis")]
impl<T: MemberValue> Bound<T> {
    fn new(remote: Remote) -> Self {
        Bound {
            remote,
            encode: to_json::<T>,
            decode: |s| serde_json::from_str(s).ok(),
        }
    }
}

#[cfg(feature = "redis")]
impl<T> Bound<T> {
    /// The stored form of `value` and the publication of `change(value)`.
    fn write(&self, value: &T, change: fn(Value) -> Change) -> (String, String) {
        let json = (self.encode)(value);
        (json.to_string(), self.remote.message(&change(json)))
    }
}

/// A collection bound to a store: the items' codec and the keys'.
#[cfg(feature = "redis")]
#[derive(Debug)]
struct BoundMap<K, V> {
    items: Bound<V>,
    id: fn(&K) -> String,
    key: fn(&str) -> Option<K>,
}

/// `changes`, plus one `Lagged` each time a store's feed reconnects.
#[cfg(feature = "redis")]
fn with_lag(changes: ChangeStream, remote: Option<&Remote>) -> ChangeStream {
    match remote {
        Some(r) => stream::select(changes, feed(r.lagged(), Change::Lagged)).boxed(),
        None => changes,
    }
}

/// A write to a member, erased of its types (what a client sends over a dispatch).
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub enum Write {
    /// Replace a cell's value.
    Set(Value),
    /// Insert or replace a collection item.
    Upsert {
        /// The item's key.
        key: Value,
        /// The item.
        value: Value,
    },
    /// Delete a collection item.
    Remove {
        /// The item's key.
        key: Value,
    },
    /// Append a chunk to a stream.
    Push(Value),
    /// Publish an event.
    Publish(Value),
}

impl Write {
    fn word(&self) -> &'static str {
        match self {
            Write::Set(_) => "set",
            Write::Upsert { .. } => "upsert",
            Write::Remove { .. } => "remove",
            Write::Push(_) => "push",
            Write::Publish(_) => "publish",
        }
    }
}

fn wrong_write(kind: MemberKind, write: &Write) -> Failure {
    Failure::new(
        FailureKind::Unknown,
        format!("a {} cannot take a `{}` write", kind.word(), write.word()),
    )
}

fn decode<T: DeserializeOwned>(what: &str, v: Value) -> Result<T, Failure> {
    serde_json::from_value(v).map_err(|e| {
        Failure::new(
            FailureKind::InvalidInput { field: what.into() },
            format!("invalid {what}: {e}"),
        )
    })
}

fn to_json<T: Serialize>(v: &T) -> Value {
    serde_json::to_value(v).unwrap_or_else(|e| Value::String(format!("<unserializable: {e}>")))
}

fn feed<T: Clone + Send + 'static>(rx: broadcast::Receiver<T>, erase: fn(T) -> Change) -> ChangeStream {
    stream::unfold(rx, move |mut rx| async move {
        match rx.recv().await {
            Ok(v) => Some((erase(v), rx)),
            Err(broadcast::error::RecvError::Lagged(n)) => Some((Change::Lagged(n), rx)),
            Err(broadcast::error::RecvError::Closed) => None,
        }
    })
    .boxed()
}

/// A cell: one value; every write is published.
///
/// ```
/// # #[tokio::main(flavor = "current_thread")] async fn main() {
/// use surface_runtime::Cell;
/// let load = Cell::new(2u32);
/// let mut watch = load.subscribe();
/// load.set(3);
/// assert_eq!(load.get(), 3);
/// assert_eq!(watch.recv().await.unwrap(), 3);
/// load.update(|n| *n += 1);
/// assert_eq!(load.get(), 4);
/// # }
/// ```
#[derive(Debug)]
pub struct Cell<T> {
    value: RwLock<T>,
    writes: broadcast::Sender<T>,
    #[cfg(feature = "redis")]
    remote: OnceLock<Bound<T>>,
}

impl<T: Clone> Cell<T> {
    /// A cell holding `value`.
    pub fn new(value: T) -> Self {
        Cell {
            value: RwLock::new(value),
            writes: broadcast::channel(FEED_CAPACITY).0,
            #[cfg(feature = "redis")]
            remote: OnceLock::new(),
        }
    }

    /// A copy of the current value.
    pub fn get(&self) -> T {
        #[cfg(feature = "redis")]
        if let Some(b) = self.remote.get()
            && let Ok(Some(stored)) = b.remote.get()
            && let Some(value) = (b.decode)(&stored)
        {
            return value;
        }
        read(&self.value).clone()
    }

    /// Replaces the value and publishes it.
    pub fn set(&self, value: T) {
        #[cfg(feature = "redis")]
        if let Some(b) = self.remote.get() {
            // The local copy and the subscribers hear it back from the store's feed.
            let (stored, message) = b.write(&value, Change::Set);
            let _ = b.remote.set(stored, message);
            return;
        }
        let mut slot = write(&self.value);
        *slot = value;
        self.publish(&slot);
    }

    /// Changes the value in place and publishes the result; answers what `f` answers.
    ///
    /// In a store, the value is read and written under a lease, so updates made through
    /// several instances at once each see the one before.
    pub fn update<R>(&self, f: impl FnOnce(&mut T) -> R) -> R {
        #[cfg(feature = "redis")]
        if let Some(b) = self.remote.get() {
            let lease = b.remote.lease(None);
            let stored = lease.as_ref().ok().and_then(|l| l.value.as_deref());
            let mut value = stored
                .and_then(b.decode)
                .unwrap_or_else(|| read(&self.value).clone());
            let r = f(&mut value);
            if let Ok(lease) = lease {
                let (stored, message) = b.write(&value, Change::Set);
                let _ = b.remote.commit(lease, None, stored, message);
            }
            return r;
        }
        let mut slot = write(&self.value);
        let r = f(&mut slot);
        self.publish(&slot);
        r
    }

    /// How many feeds watch it now (typed subscribers and faces' change feeds): a way to
    /// see that closed subscriptions let go.
    pub fn watchers(&self) -> usize {
        self.writes.receiver_count()
    }

    /// Every value written from now on.
    pub fn subscribe(&self) -> broadcast::Receiver<T> {
        self.writes.subscribe()
    }

    fn publish(&self, value: &T) {
        // Published under the write lock, so subscribers see writes in the order they happened.
        if self.writes.receiver_count() > 0 {
            let _ = self.writes.send(value.clone());
        }
    }
}

impl<T: Clone + Default> Default for Cell<T> {
    fn default() -> Self {
        Cell::new(T::default())
    }
}

impl<T: MemberValue> LiveMember for Cell<T> {
    fn kind(&self) -> MemberKind {
        MemberKind::Cell
    }
    fn read(&self) -> Value {
        #[cfg(feature = "redis")]
        if self.remote.get().is_some() {
            return to_json(&self.get());
        }
        to_json(&*read(&self.value))
    }
    fn write(&self, write: Write) -> Result<(), Failure> {
        match write {
            Write::Set(v) => {
                self.set(decode("value", v)?);
                Ok(())
            }
            other => Err(wrong_write(MemberKind::Cell, &other)),
        }
    }
    fn changes(&self) -> ChangeStream {
        let changes = feed(self.subscribe(), |v| Change::Set(to_json(&v)));
        #[cfg(feature = "redis")]
        let changes = with_lag(changes, self.remote.get().map(|b| &b.remote));
        changes
    }
    #[cfg(feature = "redis")]
    fn bind_store(&self, remote: Remote) -> Result<(), String> {
        let b = Bound::new(remote);
        let seed = (b.encode)(&*read(&self.value)).to_string();
        b.remote
            .seed_value(seed)
            .map_err(|_| "the store did not answer")?;
        if let Ok(Some(stored)) = b.remote.get()
            && let Some(value) = (b.decode)(&stored)
        {
            *write(&self.value) = value;
        }
        self.remote.set(b).map_err(|_| "it is in a store already".into())
    }
    #[cfg(feature = "redis")]
    fn deliver(&self, change: Change, _entry: Option<&str>) {
        match change {
            Change::Set(v) => {
                if let Ok(v) = serde_json::from_value::<T>(v) {
                    let mut slot = write(&self.value);
                    *slot = v;
                    self.publish(&slot);
                }
            }
            Change::Lagged(_) => self.remote.get().iter().for_each(|b| b.remote.announce_lag()),
            _ => {}
        }
    }
}

/// A typed change of a collection.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum CollectionChange<K> {
    /// The item at this key was inserted or replaced.
    Upserted(K),
    /// The item at this key was deleted.
    Removed(K),
}

/// A collection: items by key; every upsert and delete is published.
///
/// ```
/// use surface_runtime::Collection;
/// let names: Collection<u32, String> = Collection::from_iter([(1, "init".to_string())]);
/// names.upsert(2, "shell".into());
/// assert_eq!(names.keys(), vec![1, 2]);
/// assert_eq!(names.get(&2).as_deref(), Some("shell"));
/// assert_eq!(names.remove(&1).as_deref(), Some("init"));
/// assert_eq!(names.len(), 1);
/// ```
#[derive(Debug)]
pub struct Collection<K, V> {
    items: RwLock<BTreeMap<K, V>>,
    changes: broadcast::Sender<CollectionChange<K>>,
    #[cfg(feature = "redis")]
    remote: OnceLock<BoundMap<K, V>>,
}

impl<K: Ord + Clone, V: Clone> Collection<K, V> {
    /// An empty collection.
    pub fn new() -> Self {
        Collection {
            items: RwLock::new(BTreeMap::new()),
            changes: broadcast::channel(FEED_CAPACITY).0,
            #[cfg(feature = "redis")]
            remote: OnceLock::new(),
        }
    }

    /// A copy of the item at `key`.
    pub fn get(&self, key: &K) -> Option<V> {
        #[cfg(feature = "redis")]
        if let Some(b) = self.remote.get()
            && let Ok(stored) = b.items.remote.hget((b.id)(key))
        {
            return stored.as_deref().and_then(b.items.decode);
        }
        read(&self.items).get(key).cloned()
    }

    /// Whether an item is at `key`.
    pub fn contains(&self, key: &K) -> bool {
        #[cfg(feature = "redis")]
        if let Some(b) = self.remote.get()
            && let Ok(there) = b.items.remote.hexists((b.id)(key))
        {
            return there;
        }
        read(&self.items).contains_key(key)
    }

    /// Every key, in order.
    pub fn keys(&self) -> Vec<K> {
        #[cfg(feature = "redis")]
        if let Some(b) = self.remote.get()
            && let Ok(ids) = b.items.remote.hkeys()
        {
            let mut keys: Vec<K> = ids.iter().filter_map(|id| (b.key)(id)).collect();
            keys.sort();
            return keys;
        }
        read(&self.items).keys().cloned().collect()
    }

    /// A copy of every item, in key order.
    pub fn items(&self) -> Vec<(K, V)> {
        #[cfg(feature = "redis")]
        if let Some(b) = self.remote.get()
            && let Ok(stored) = b.items.remote.hgetall()
        {
            let mut items: Vec<(K, V)> = stored
                .iter()
                .filter_map(|(id, v)| Some(((b.key)(id)?, (b.items.decode)(v)?)))
                .collect();
            items.sort_by(|a, b| a.0.cmp(&b.0));
            return items;
        }
        read(&self.items)
            .iter()
            .map(|(k, v)| (k.clone(), v.clone()))
            .collect()
    }

    /// How many items there are.
    pub fn len(&self) -> usize {
        #[cfg(feature = "redis")]
        if let Some(b) = self.remote.get()
            && let Ok(n) = b.items.remote.hlen()
        {
            return n;
        }
        read(&self.items).len()
    }

    /// Whether there are none.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Inserts or replaces the item at `key`; answers the item it replaced.
    pub fn upsert(&self, key: K, value: V) -> Option<V> {
        #[cfg(feature = "redis")]
        if let Some(b) = self.remote.get() {
            let id = (b.id)(&key);
            let stored = (b.items.encode)(&value).to_string();
            let message = b.items.remote.message(&Change::Upserted { id: id.clone() });
            let old = b.items.remote.hset(id, stored, message).ok().flatten();
            return old.as_deref().and_then(b.items.decode);
        }
        let mut items = write(&self.items);
        let old = items.insert(key.clone(), value);
        self.publish(CollectionChange::Upserted(key));
        old
    }

    /// Changes the item at `key` in place (publishing it); `None` when there is none.
    ///
    /// In a store, the item is read and written under a lease, so updates made through
    /// several instances at once each see the one before.
    pub fn update<R>(&self, key: &K, f: impl FnOnce(&mut V) -> R) -> Option<R> {
        #[cfg(feature = "redis")]
        if let Some(b) = self.remote.get() {
            let id = (b.id)(key);
            let lease = b.items.remote.lease(Some(&id)).ok()?;
            let Some(mut value) = lease.value.as_deref().and_then(b.items.decode) else {
                b.items.remote.release(lease, Some(&id));
                return None;
            };
            let r = f(&mut value);
            let stored = (b.items.encode)(&value).to_string();
            let message = b.items.remote.message(&Change::Upserted { id: id.clone() });
            let _ = b.items.remote.commit(lease, Some(&id), stored, message);
            return Some(r);
        }
        let mut items = write(&self.items);
        let r = f(items.get_mut(key)?);
        self.publish(CollectionChange::Upserted(key.clone()));
        Some(r)
    }

    /// Deletes the item at `key`; answers it.
    pub fn remove(&self, key: &K) -> Option<V> {
        #[cfg(feature = "redis")]
        if let Some(b) = self.remote.get() {
            let id = (b.id)(key);
            let message = b.items.remote.message(&Change::Removed { id: id.clone() });
            let old = b.items.remote.hdel(id, message).ok().flatten();
            return old.as_deref().and_then(b.items.decode);
        }
        let mut items = write(&self.items);
        let old = items.remove(key)?;
        self.publish(CollectionChange::Removed(key.clone()));
        Some(old)
    }

    /// How many feeds watch it now (typed subscribers and faces' change feeds): a way to
    /// see that closed subscriptions let go.
    pub fn watchers(&self) -> usize {
        self.changes.receiver_count()
    }

    /// Every upsert and delete from now on.
    pub fn subscribe(&self) -> broadcast::Receiver<CollectionChange<K>> {
        self.changes.subscribe()
    }

    fn publish(&self, change: CollectionChange<K>) {
        // No `receiver_count()` check first: it takes the channel's lock too, so a watched
        // upsert paid for that lock twice; `send` answers an error (ignored) when no one
        // watches, after the one lock.
        let _ = self.changes.send(change);
    }
}

impl<K: Ord + Clone, V: Clone> Default for Collection<K, V> {
    fn default() -> Self {
        Collection::new()
    }
}

impl<K: Ord + Clone, V: Clone> FromIterator<(K, V)> for Collection<K, V> {
    fn from_iter<I: IntoIterator<Item = (K, V)>>(iter: I) -> Self {
        let c = Collection::new();
        *write(&c.items) = iter.into_iter().collect();
        c
    }
}

/// The URI-shaped id of a key: a string key as itself, any other key as its JSON.
pub fn key_to_id<K: Serialize>(key: &K) -> String {
    match to_json(key) {
        Value::String(s) => s,
        other => other.to_string(),
    }
}

/// Decodes a URI-shaped id against the key type: `42` addresses a `u32` key, `alice` a
/// `String`. Only the canonical spelling — what [`key_to_id`] writes for that key — addresses
/// it: ` 1`, `01`, `1.0` and `+1` address no `u32`, and `"alice"` (quotes included) is the
/// string key `"alice"` with its quotes, not `alice`.
///
/// ```
/// use surface_runtime::{id_to_key, key_to_id};
/// assert_eq!(id_to_key::<u32>("42").unwrap(), 42);
/// assert_eq!(id_to_key::<String>("42").unwrap(), "42");
/// assert!(id_to_key::<u32>(" 42").is_err());
/// assert!(id_to_key::<u32>("042").is_err());
/// assert_eq!(id_to_key::<String>("\"a\"").unwrap(), "\"a\"");
/// assert_eq!(key_to_id(&id_to_key::<i64>("-7").unwrap()), "-7");
/// ```
pub fn id_to_key<K: Serialize + DeserializeOwned>(id: &str) -> Result<K, Failure> {
    let canonical = |key: &K| key_to_id(key) == id;
    let as_json = match serde_json::from_str::<K>(id) {
        Ok(key) if canonical(&key) => return Ok(key),
        other => other,
    };
    let as_text = serde_json::from_value::<K>(Value::String(id.to_owned()));
    match (as_json, as_text) {
        (_, Ok(key)) if canonical(&key) => Ok(key),
        (Ok(key), _) | (_, Ok(key)) => Err(Failure::new(
            FailureKind::InvalidInput { field: "id".into() },
            format!(
                "\"{id}\" is not a valid key: the key it spells is written \"{}\"",
                key_to_id(&key)
            ),
        )),
        (Err(e), Err(_)) => Err(Failure::new(
            FailureKind::InvalidInput { field: "id".into() },
            format!("\"{id}\" is not a valid key ({e})"),
        )),
    }
}

impl<K: MemberKey, V: MemberValue> LiveMember for Collection<K, V> {
    fn kind(&self) -> MemberKind {
        MemberKind::Collection
    }
    fn read(&self) -> Value {
        to_json(&self.keys())
    }
    fn read_item(&self, id: &str) -> Result<Value, Failure> {
        let key: K = id_to_key(id)?;
        match self.get(&key) {
            Some(v) => Ok(to_json(&v)),
            None => Err(Failure::new(
                FailureKind::Unknown,
                format!("no item with key \"{id}\" is present"),
            )),
        }
    }
    fn write(&self, write: Write) -> Result<(), Failure> {
        match write {
            Write::Upsert { key, value } => {
                self.upsert(decode("key", key)?, decode("value", value)?);
                Ok(())
            }
            Write::Remove { key } => {
                self.remove(&decode("key", key)?);
                Ok(())
            }
            other => Err(wrong_write(MemberKind::Collection, &other)),
        }
    }
    fn changes(&self) -> ChangeStream {
        let changes = feed(self.subscribe(), |c| match c {
            CollectionChange::Upserted(k) => Change::Upserted { id: key_to_id(&k) },
            CollectionChange::Removed(k) => Change::Removed { id: key_to_id(&k) },
        });
        #[cfg(feature = "redis")]
        let changes = with_lag(changes, self.remote.get().map(|b| &b.items.remote));
        changes
    }
    #[cfg(feature = "redis")]
    fn bind_store(&self, remote: Remote) -> Result<(), String> {
        let b = BoundMap {
            items: Bound::new(remote),
            id: key_to_id::<K>,
            key: |id| id_to_key(id).ok(),
        };
        let seed = read(&self.items)
            .iter()
            .map(|(k, v)| (key_to_id(k), to_json(v).to_string()))
            .collect();
        b.items
            .remote
            .seed_entries("hash", seed)
            .map_err(|_| "the store did not answer")?;
        self.remote.set(b).map_err(|_| "it is in a store already".into())
    }
    #[cfg(feature = "redis")]
    fn deliver(&self, change: Change, _entry: Option<&str>) {
        let Some(b) = self.remote.get() else { return };
        match change {
            Change::Upserted { id } => {
                if let Some(k) = (b.key)(&id) {
                    self.publish(CollectionChange::Upserted(k));
                }
            }
            Change::Removed { id } => {
                if let Some(k) = (b.key)(&id) {
                    self.publish(CollectionChange::Removed(k));
                }
            }
            Change::Lagged(_) => b.items.remote.announce_lag(),
            _ => {}
        }
    }
}

/// How many chunks a [`Stream`] keeps by default: the snapshot is the last this many.
pub const STREAM_HISTORY: usize = 1024;

/// A stream: a snapshot of the chunks so far, then each new chunk. It keeps the last
/// [`STREAM_HISTORY`] chunks (or as many as [`Stream::with_history`] says), so a long-lived
/// stream's memory stays bounded; the snapshot is the retained tail.
///
/// ```
/// # #[tokio::main(flavor = "current_thread")] async fn main() {
/// use surface_runtime::Stream;
/// let log: Stream<String> = Stream::new();
/// log.push("booted".into());
/// let (snapshot, mut chunks) = log.open();
/// assert_eq!(snapshot, vec!["booted".to_string()]);
/// log.push("spawned".into());
/// assert_eq!(chunks.recv().await.unwrap(), "spawned");
///
/// let recent: Stream<u32> = Stream::with_history(2);
/// (1..=5).for_each(|n| recent.push(n));
/// assert_eq!(recent.snapshot(), vec![4, 5]);
/// # }
/// ```
#[derive(Debug)]
pub struct Stream<C> {
    history: Mutex<VecDeque<C>>,
    keep: usize,
    chunks: broadcast::Sender<C>,
    #[cfg(feature = "redis")]
    remote: OnceLock<Bound<C>>,
}

impl<C: Clone> Stream<C> {
    /// An empty stream keeping the last [`STREAM_HISTORY`] chunks.
    pub fn new() -> Self {
        Stream::with_history(STREAM_HISTORY)
    }

    /// An empty stream keeping the last `keep` chunks (`0`: none, every snapshot is empty;
    /// `usize::MAX`: all of them, memory growing with every chunk).
    pub fn with_history(keep: usize) -> Self {
        Stream {
            history: Mutex::new(VecDeque::new()),
            keep,
            chunks: broadcast::channel(FEED_CAPACITY).0,
            #[cfg(feature = "redis")]
            remote: OnceLock::new(),
        }
    }

    /// How many chunks this stream keeps.
    pub fn history_limit(&self) -> usize {
        self.keep
    }

    /// Appends a chunk and publishes it; the oldest kept chunk goes when the history is full.
    pub fn push(&self, chunk: C) {
        #[cfg(feature = "redis")]
        if let Some(b) = self.remote.get() {
            let _ = b.remote.push(self.keep, (b.encode)(&chunk).to_string());
            return;
        }
        let mut history = lock(&self.history);
        if self.chunks.receiver_count() > 0 {
            let _ = self.chunks.send(chunk.clone());
        }
        if self.keep == 0 {
            return;
        }
        if history.len() >= self.keep {
            history.pop_front();
        }
        history.push_back(chunk);
    }

    /// How many feeds watch it now (typed subscribers and faces' change feeds): a way to
    /// see that closed subscriptions let go.
    pub fn watchers(&self) -> usize {
        self.chunks.receiver_count()
    }

    /// The chunks kept, oldest first.
    pub fn snapshot(&self) -> Vec<C> {
        #[cfg(feature = "redis")]
        if let Some(b) = self.remote.get()
            && let Ok(stored) = b.remote.range(None)
        {
            return stored.iter().filter_map(|s| (b.decode)(s)).collect();
        }
        lock(&self.history).iter().cloned().collect()
    }

    /// The snapshot and a receiver of every later chunk, taken together so none is missed or
    /// seen twice.
    ///
    /// In a store, the snapshot is what is stored up to the last chunk this instance has
    /// delivered; every later one arrives on the receiver.
    pub fn open(&self) -> (Vec<C>, broadcast::Receiver<C>) {
        #[cfg(feature = "redis")]
        if let Some(b) = self.remote.get() {
            let (mark, chunks) = {
                let mark = b.remote.mark();
                (*mark, self.chunks.subscribe())
            };
            let snapshot = match b.remote.range(Some(mark)) {
                Ok(stored) => stored.iter().filter_map(|s| (b.decode)(s)).collect(),
                Err(()) => lock(&self.history).iter().cloned().collect(),
            };
            return (snapshot, chunks);
        }
        let history = lock(&self.history);
        (history.iter().cloned().collect(), self.chunks.subscribe())
    }
}

impl<C: Clone> Default for Stream<C> {
    fn default() -> Self {
        Stream::new()
    }
}

impl<C: MemberValue> LiveMember for Stream<C> {
    fn kind(&self) -> MemberKind {
        MemberKind::Stream
    }
    fn read(&self) -> Value {
        #[cfg(feature = "redis")]
        if self.remote.get().is_some() {
            return to_json(&self.snapshot());
        }
        to_json(&*lock(&self.history))
    }
    fn write(&self, write: Write) -> Result<(), Failure> {
        match write {
            Write::Push(v) => {
                self.push(decode("chunk", v)?);
                Ok(())
            }
            other => Err(wrong_write(MemberKind::Stream, &other)),
        }
    }
    fn changes(&self) -> ChangeStream {
        let changes = feed(self.chunks.subscribe(), |c| Change::Chunk(to_json(&c)));
        #[cfg(feature = "redis")]
        let changes = with_lag(changes, self.remote.get().map(|b| &b.remote));
        changes
    }
    #[cfg(feature = "redis")]
    fn bind_store(&self, remote: Remote) -> Result<(), String> {
        let b = Bound::new(remote);
        if self.keep > 0 {
            let seed = lock(&self.history)
                .iter()
                .map(|c| (String::new(), to_json(c).to_string()))
                .collect();
            b.remote
                .seed_entries("stream", seed)
                .map_err(|_| "the store did not answer")?;
        }
        b.remote.mark_last().map_err(|_| "the store did not answer")?;
        self.remote.set(b).map_err(|_| "it is in a store already".into())
    }
    #[cfg(feature = "redis")]
    fn deliver(&self, change: Change, entry: Option<&str>) {
        let Some(b) = self.remote.get() else { return };
        let entry = entry.filter(|e| !e.is_empty()).map(crate::store::entry_id);
        match change {
            Change::Chunk(v) => {
                let mut mark = b.remote.mark();
                if let Some(id) = entry {
                    // Already in the snapshot of whoever opened the stream since.
                    if id <= *mark {
                        return;
                    }
                    *mark = id;
                }
                if let Ok(chunk) = serde_json::from_value::<C>(v)
                    && self.chunks.receiver_count() > 0
                {
                    let _ = self.chunks.send(chunk);
                }
            }
            Change::Lagged(_) => {
                if let Some(id) = entry {
                    *b.remote.mark() = id;
                }
                b.remote.announce_lag();
            }
            _ => {}
        }
    }
}

/// An event: occurrences published to whoever listens.
///
/// ```
/// # #[tokio::main(flavor = "current_thread")] async fn main() {
/// use surface_runtime::Event;
/// let saved: Event<u64> = Event::new();
/// let mut rx = saved.subscribe();
/// saved.publish(7);
/// assert_eq!(rx.recv().await.unwrap(), 7);
/// # }
/// ```
#[derive(Debug)]
pub struct Event<T> {
    occurrences: broadcast::Sender<T>,
    #[cfg(feature = "redis")]
    remote: OnceLock<Bound<T>>,
}

impl<T: Clone> Event<T> {
    /// An event nobody has published yet.
    pub fn new() -> Self {
        Event {
            occurrences: broadcast::channel(FEED_CAPACITY).0,
            #[cfg(feature = "redis")]
            remote: OnceLock::new(),
        }
    }

    /// Publishes one occurrence to every current subscriber.
    pub fn publish(&self, value: T) {
        #[cfg(feature = "redis")]
        if let Some(b) = self.remote.get() {
            let (_, message) = b.write(&value, Change::Published);
            let _ = b.remote.publish(message);
            return;
        }
        let _ = self.occurrences.send(value);
    }

    /// How many feeds watch it now (typed subscribers and faces' change feeds): a way to
    /// see that closed subscriptions let go.
    pub fn watchers(&self) -> usize {
        self.occurrences.receiver_count()
    }

    /// Every occurrence from now on.
    pub fn subscribe(&self) -> broadcast::Receiver<T> {
        self.occurrences.subscribe()
    }
}

impl<T: Clone> Default for Event<T> {
    fn default() -> Self {
        Event::new()
    }
}

impl<T: MemberValue> LiveMember for Event<T> {
    fn kind(&self) -> MemberKind {
        MemberKind::Event
    }
    fn read(&self) -> Value {
        // An event has no stored state: reading one answers null at once.
        Value::Null
    }
    fn write(&self, write: Write) -> Result<(), Failure> {
        match write {
            Write::Publish(v) => {
                self.publish(decode("event", v)?);
                Ok(())
            }
            other => Err(wrong_write(MemberKind::Event, &other)),
        }
    }
    fn changes(&self) -> ChangeStream {
        let changes = feed(self.subscribe(), |v| Change::Published(to_json(&v)));
        #[cfg(feature = "redis")]
        let changes = with_lag(changes, self.remote.get().map(|b| &b.remote));
        changes
    }
    #[cfg(feature = "redis")]
    fn bind_store(&self, remote: Remote) -> Result<(), String> {
        self.remote
            .set(Bound::new(remote))
            .map_err(|_| "it is in a store already".into())
    }
    #[cfg(feature = "redis")]
    fn deliver(&self, change: Change, _entry: Option<&str>) {
        match change {
            Change::Published(v) => {
                if let Ok(v) = serde_json::from_value::<T>(v) {
                    let _ = self.occurrences.send(v);
                }
            }
            Change::Lagged(_) => self.remote.get().iter().for_each(|b| b.remote.announce_lag()),
            _ => {}
        }
    }
}
