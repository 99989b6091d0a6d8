//! A collection: items by key.

use super::backing::{Backend, Bound, Entries, Swapped, install};
use super::{
    Change, ChangeStream, FEED_CAPACITY, LiveMember, MemberKey, MemberValue, Write, decode, feed, id_to_key,
    key_to_id, to_json, with_lag, wrong_write,
};
use crate::failure::{Failure, FailureKind};
use crate::spec::MemberKind;
use crate::sync::{read, write};
use serde_json::Value;
use std::collections::BTreeMap;
use std::sync::{OnceLock, RwLock};
use tokio::sync::broadcast;

/// A collection bound to a backing: the items' codec and the keys'.
#[derive(Debug)]
struct BoundMap<K, V> {
    items: Bound<V>,
    id: fn(&K) -> String,
    key: fn(&str) -> Option<K>,
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
    /// Where the items live when not here.
    backing: OnceLock<BoundMap<K, V>>,
}

impl<K: Ord + Clone, V: Clone> Collection<K, V> {
    /// An empty collection.
    pub fn new() -> Self {
        Collection {
            items: RwLock::new(BTreeMap::new()),
            changes: broadcast::channel(FEED_CAPACITY).0,
            backing: OnceLock::new(),
        }
    }

    /// A copy of the item at `key`.
    pub fn get(&self, key: &K) -> Option<V> {
        if let Some(b) = self.backing.get()
            && let Some(stored) = b.items.run(|s| s.item((b.id)(key)))
        {
            return stored.as_deref().and_then(b.items.decode);
        }
        read(&self.items).get(key).cloned()
    }

    /// Whether an item is at `key`.
    pub fn contains(&self, key: &K) -> bool {
        if let Some(b) = self.backing.get()
            && let Some(there) = b.items.run(|s| s.has_item((b.id)(key)))
        {
            return there;
        }
        read(&self.items).contains_key(key)
    }

    /// Every key, in order.
    pub fn keys(&self) -> Vec<K> {
        if let Some(b) = self.backing.get()
            && let Some(ids) = b.items.run(|s| s.ids())
        {
            let mut keys: Vec<K> = ids.iter().filter_map(|id| (b.key)(id)).collect();
            keys.sort();
            return keys;
        }
        read(&self.items).keys().cloned().collect()
    }

    /// A copy of every item, in key order.
    pub fn items(&self) -> Vec<(K, V)> {
        if let Some(b) = self.backing.get()
            && let Some(stored) = b.items.run(|s| s.items())
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
        if let Some(b) = self.backing.get()
            && let Some(n) = b.items.run(|s| s.count())
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
        if let Some(b) = self.backing.get() {
            let id = (b.id)(&key);
            let stored = b.items.stored(&value);
            let change = Change::Upserted { id: id.clone() };
            let old = b.items.run(|s| s.upsert(id, stored, &change)).flatten();
            return old.as_deref().and_then(b.items.decode);
        }
        let mut items = write(&self.items);
        let old = items.insert(key.clone(), value);
        self.publish(CollectionChange::Upserted(key));
        old
    }

    /// Changes the item at `key` in place (publishing it); `None` when there is none.
    ///
    /// In memory `f` runs once. In a store it may run again, on the item another instance
    /// wrote meanwhile, as [`Cell::update`](crate::Cell::update) says: keep `f` to computing
    /// the new item.
    pub fn update<R>(&self, key: &K, mut f: impl FnMut(&mut V) -> R) -> Option<R> {
        if let Some(b) = self.backing.get() {
            let id = (b.id)(key);
            let mut turn = b.items.run(|s| s.turn(Some(&id)))?;
            let mut stored = turn.value.take();
            let change = Change::Upserted { id: id.clone() };
            loop {
                let mut value = stored.as_deref().and_then(b.items.decode)?;
                let r = f(&mut value);
                let text = b.items.stored(&value);
                match b.items.run(|s| s.swap(&mut turn.hold, Some(&id), text, &change)) {
                    Some(Swapped::Moved(now)) => stored = now,
                    // Written, or the call fails (the failure is recorded).
                    _ => return Some(r),
                }
            }
        }
        let mut items = write(&self.items);
        let r = f(items.get_mut(key)?);
        self.publish(CollectionChange::Upserted(key.clone()));
        Some(r)
    }

    /// Deletes the item at `key`; answers it.
    pub fn remove(&self, key: &K) -> Option<V> {
        if let Some(b) = self.backing.get() {
            let id = (b.id)(key);
            let change = Change::Removed { id: id.clone() };
            let old = b.items.run(|s| s.remove(id, &change)).flatten();
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
        with_lag(changes, self.backing.get().map(|b| b.items.backing()))
    }
    fn bind(&self, backing: Backend) -> Result<(), String> {
        let b = BoundMap {
            items: Bound::new(backing.0),
            id: key_to_id::<K>,
            key: |id| id_to_key(id).ok(),
        };
        let seed = read(&self.items)
            .iter()
            .map(|(k, v)| (key_to_id(k), to_json(v).to_string()))
            .collect();
        b.items
            .run(|s| s.seed_entries(Entries::Hash, seed))
            .ok_or("the store did not answer")?;
        install(&self.backing, b)
    }
    fn deliver(&self, change: Change, _entry: Option<&str>) {
        let Some(b) = self.backing.get() else { return };
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
            Change::Lagged(_) => b.items.backing().heard_lag(None),
            _ => {}
        }
    }
}
