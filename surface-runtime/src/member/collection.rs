//! A collection: items by key.

use super::backing::{Backend, Bound, Entries, Swapped, install};
use super::touched::{self, HoldsTouched, Keyed, Touched};
use super::{
    Change, ChangeStream, FEED_CAPACITY, LiveMember, MemberKey, MemberValue, Write, decode, feed, id_to_key,
    key_to_id, to_json, with_lag, wrong_write,
};
use crate::failure::{Failure, FailureKind};
use crate::spec::MemberKind;
use crate::sync::{read, write};
use futures::StreamExt;
use serde_json::Value;
use std::collections::BTreeMap;
use std::sync::{Arc, OnceLock, RwLock, RwLockWriteGuard};
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

impl<K: MemberKey> CollectionChange<K> {
    /// The change as faces see it, its key spelled as in URIs.
    fn erased(self) -> Change {
        match self {
            CollectionChange::Upserted(k) => Change::Upserted { id: key_to_id(&k) },
            CollectionChange::Removed(k) => Change::Removed { id: key_to_id(&k) },
        }
    }
}

impl<K: Ord + Clone + Send + Sync + 'static> Keyed for CollectionChange<K> {
    type Key = K;
    fn key(&self) -> &K {
        match self {
            CollectionChange::Upserted(k) | CollectionChange::Removed(k) => k,
        }
    }
}

/// The items, and the changes the faces' feeds have not read yet: one lock for both, so a
/// watched write records its change under the lock it takes anyway.
#[derive(Debug)]
struct Items<K, V> {
    map: BTreeMap<K, V>,
    touched: Touched<CollectionChange<K>>,
}

impl<K: MemberKey, V: MemberValue> HoldsTouched<CollectionChange<K>> for Items<K, V> {
    fn touched(&mut self) -> &mut Touched<CollectionChange<K>> {
        &mut self.touched
    }
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
    /// Shared with the faces' feeds (`touched.rs`), which drain their changes under its lock.
    items: Arc<RwLock<Items<K, V>>>,
    changes: broadcast::Sender<CollectionChange<K>>,
    /// Where the items live when not here.
    backing: OnceLock<BoundMap<K, V>>,
}

impl<K: Ord + Clone, V: Clone> Collection<K, V> {
    /// An empty collection.
    pub fn new() -> Self {
        Collection {
            items: Arc::new(RwLock::new(Items {
                map: BTreeMap::new(),
                touched: Touched::default(),
            })),
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
        read(&self.items).map.get(key).cloned()
    }

    /// Whether an item is at `key`.
    pub fn contains(&self, key: &K) -> bool {
        if let Some(b) = self.backing.get()
            && let Some(there) = b.items.run(|s| s.has_item((b.id)(key)))
        {
            return there;
        }
        read(&self.items).map.contains_key(key)
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
        read(&self.items).map.keys().cloned().collect()
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
            .map
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
        read(&self.items).map.len()
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
        let old = items.map.insert(key.clone(), value);
        self.publish(items, CollectionChange::Upserted(key));
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
        let r = f(items.map.get_mut(key)?);
        self.publish(items, CollectionChange::Upserted(key.clone()));
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
        let old = items.map.remove(key)?;
        self.publish(items, CollectionChange::Removed(key.clone()));
        Some(old)
    }

    /// How many feeds watch it now (typed subscribers and faces' change feeds): a way to
    /// see that closed subscriptions let go.
    pub fn watchers(&self) -> usize {
        self.changes.receiver_count() + read(&self.items).touched.len()
    }

    /// Every upsert and delete from now on.
    pub fn subscribe(&self) -> broadcast::Receiver<CollectionChange<K>> {
        self.changes.subscribe()
    }

    /// Publishes `change`, made under `items`: to the faces' feeds (recorded under that lock)
    /// and to typed subscribers, in the order the changes were made.
    fn publish(&self, mut items: RwLockWriteGuard<'_, Items<K, V>>, change: CollectionChange<K>) {
        let wake = items.touched.record(&change);
        // No `receiver_count()` check first: it takes the channel's lock too, so a watched
        // upsert paid for that lock twice; `send` answers an error (ignored) when no one
        // watches, after the one lock.
        let _ = self.changes.send(change);
        drop(items);
        wake.wake();
    }
}

impl<K, V> Drop for Collection<K, V> {
    fn drop(&mut self) {
        // The faces' feeds hold the items: tell them the collection is gone, as a dropped
        // broadcast sender tells its receivers.
        let wake = write(&self.items).touched.close();
        wake.wake();
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
        write(&c.items).map = iter.into_iter().collect();
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
        let changes = feed(self.subscribe(), CollectionChange::erased);
        with_lag(changes, self.backing.get().map(|b| b.items.backing()))
    }
    fn touched(&self) -> ChangeStream {
        let feed = touched::open(self.items.clone(), CollectionChange::erased);
        with_lag(feed.boxed(), self.backing.get().map(|b| b.items.backing()))
    }
    fn bind(&self, backing: Backend) -> Result<(), String> {
        let b = BoundMap {
            items: Bound::new(backing.0),
            id: key_to_id::<K>,
            key: |id| id_to_key(id).ok(),
        };
        let seed = read(&self.items)
            .map
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
                    self.publish(write(&self.items), CollectionChange::Upserted(k));
                }
            }
            Change::Removed { id } => {
                if let Some(k) = (b.key)(&id) {
                    self.publish(write(&self.items), CollectionChange::Removed(k));
                }
            }
            Change::Lagged(_) => b.items.backing().heard_lag(None),
            _ => {}
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use futures::FutureExt;

    fn upserted(id: &str) -> Change {
        Change::Upserted { id: id.to_owned() }
    }

    /// What the feed holds now, without waiting.
    fn ready(feed: &mut ChangeStream) -> Vec<Change> {
        std::iter::from_fn(|| feed.next().now_or_never().flatten()).collect()
    }

    #[test]
    fn the_touched_feed_names_each_changed_item_once_with_its_last_change() {
        let c: Collection<u32, String> = Collection::from_iter([(2, "two".to_string())]);
        let mut feed = c.touched();
        c.upsert(1, "a".into());
        c.upsert(2, "b".into());
        c.upsert(1, "c".into());
        c.remove(&2);
        c.update(&1, |v| v.push('!'));
        assert_eq!(
            ready(&mut feed),
            [upserted("1"), Change::Removed { id: "2".into() }]
        );
        assert!(ready(&mut feed).is_empty());
        // A typed subscriber still hears every change, in order.
        let mut typed = c.subscribe();
        c.upsert(3, "d".into());
        c.upsert(3, "e".into());
        assert_eq!(typed.try_recv().unwrap(), CollectionChange::Upserted(3));
        assert_eq!(typed.try_recv().unwrap(), CollectionChange::Upserted(3));
        assert_eq!(ready(&mut feed), [upserted("3")]);
    }

    #[test]
    fn a_feed_that_falls_past_its_bound_is_told_it_lagged_and_loses_no_item() {
        let c: Collection<u32, u32> = Collection::new();
        let mut feed = c.touched();
        let over = touched::TOUCHED_CAPACITY as u32 + 5;
        for n in 0..over {
            c.upsert(n % 3, n);
        }
        // The last changes past the bound are not held, but the lag says to re-read all.
        assert_eq!(
            ready(&mut feed),
            [Change::Lagged(5), upserted("0"), upserted("1"), upserted("2")]
        );
    }

    #[tokio::test]
    async fn a_waiting_feed_wakes_at_the_next_change_and_ends_with_the_collection() {
        let c = Arc::new(Collection::<u32, u32>::new());
        let mut feed = c.touched();
        assert_eq!(c.watchers(), 1);
        let writer = c.clone();
        let waiting = tokio::spawn(async move {
            let first = feed.next().await;
            (first, feed)
        });
        tokio::task::yield_now().await;
        writer.upsert(7, 1);
        let (first, mut feed) = waiting.await.unwrap();
        assert_eq!(first, Some(upserted("7")));
        drop(writer);
        let c = Arc::into_inner(c).unwrap();
        drop(c);
        assert_eq!(feed.next().await, None);
        drop(feed);

        // Leaving a feed lets go of its buffer.
        let c = Collection::<u32, u32>::new();
        let feed = c.touched();
        assert_eq!(c.watchers(), 1);
        drop(feed);
        assert_eq!(c.watchers(), 0);
        c.upsert(1, 1);
    }
}
