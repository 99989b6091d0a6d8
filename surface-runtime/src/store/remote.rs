//! One member's (or counter's) place in Redis, and the atomic steps a member takes on it: the
//! core's `Backing`, implemented on Redis.
//!
//! Members call these with JSON already encoded; each failure answers the sentence the running
//! call fails with (the core records it against the call), so a member can fall back to the
//! value it last heard and carry on.

use super::counted::Counted;
use super::layout;
use super::round_trip::OP_TIMEOUT;
use super::scripts::{HDEL, HSET, INCR, READ, SEED, SET, SWAP, XADD};
use super::shared::Inner;
use crate::member::Change;
use crate::member::backing::{self, Backed, Backing, Entries, Swapped, Turn, Unanswered};
use crate::spec::MemberKind;
use crate::sync::lock;
use redis::Script;
use std::fmt;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};
use tokio::sync::broadcast;

/// A stream entry id, `ms-seq`, comparable.
pub(crate) type EntryId = (u64, u64);

/// Parses `ms-seq`; anything else is the smallest id.
fn entry_id(s: &str) -> EntryId {
    let (ms, seq) = s.split_once('-').unwrap_or((s, "0"));
    (ms.parse().unwrap_or(0), seq.parse().unwrap_or(0))
}

/// What this instance last knew of one value: as stored, and its version — or, while a swap is
/// in flight, what that swap writes.
#[derive(Clone)]
struct Seen {
    value: Option<String>,
    version: String,
}

/// What one instance knows of one value.
#[derive(Default)]
struct Known {
    seen: Option<Seen>,
    /// How many times Redis told what is stored (a read, a write's or a failed swap's answer);
    /// a swap built on what it knew, and its failure teaches the slot only if nothing newer
    /// did since.
    epoch: u64,
    /// When a swap last found another instance's write: until [`CALM`] after it, a swap keeps
    /// the turn until its answer.
    conflict: Option<Instant>,
}

/// How long after a conflict with another instance's write swaps stop passing the turn on
/// before their answer: with several instances writing one value, a chain of swaps built on
/// each other would fail together at each of the others' writes.
const CALM: Duration = Duration::from_secs(1);

impl Known {
    /// What Redis said is stored.
    fn learn(&mut self, seen: Option<Seen>) {
        self.seen = seen;
        self.epoch += 1;
    }
}

/// One value's turn: callers of one instance updating one value take it in order (first come,
/// first served), so they do not race each other's swaps; it keeps the value as last known.
type Slot = Arc<tokio::sync::Mutex<Known>>;

/// The turn, taken.
type Taken = tokio::sync::OwnedMutexGuard<Known>;

/// What a [`Turn`] holds here: the value's slot (locked while the caller has the turn) and
/// when the update must give up.
struct Hold {
    slot: Slot,
    seen: Option<Taken>,
    deadline: Instant,
}

/// How many idle slots a member keeps before sweeping them.
const IDLE_SLOTS: usize = 64;

/// One member's (or counter's) place in the store. Built by [`RedisStore::attach`](super::RedisStore::attach).
pub struct Remote {
    store: Arc<Inner>,
    name: String,
    key: String,
    /// Feeds hear a `Lagged` when the change feed reconnects.
    lagged: broadcast::Sender<u64>,
    /// A stream's last entry delivered to this instance's subscribers.
    mark: Mutex<EntryId>,
    /// A cell's version key, or a collection's hash of item versions.
    versions: String,
    /// This value's slots, by hash field (`""`: the value itself); idle ones are swept once
    /// there are more than [`IDLE_SLOTS`].
    slots: Mutex<std::collections::HashMap<String, Slot>>,
}

impl fmt::Debug for Remote {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Remote").field("key", &self.key).finish()
    }
}

impl Remote {
    pub(super) fn new(store: Arc<Inner>, name: &str, kind: MemberKind) -> Self {
        let key = layout::member(store.prefix(), kind, name);
        Remote::at(store, name, key)
    }

    pub(super) fn counter(store: Arc<Inner>, name: &str) -> Self {
        let key = layout::counter(store.prefix(), name);
        Remote::at(store, name, key)
    }

    fn at(store: Arc<Inner>, name: &str, key: String) -> Self {
        Remote {
            store,
            name: name.to_owned(),
            lagged: broadcast::channel(16).0,
            mark: Mutex::new((0, 0)),
            versions: layout::versions(&key),
            key,
            slots: Mutex::new(std::collections::HashMap::new()),
        }
    }

    /// The Redis key holding the value.
    pub(crate) fn key(&self) -> &str {
        &self.key
    }

    /// The publication of `change` on the surface's channel.
    fn message(&self, change: &Change) -> String {
        serde_json::json!({ "member": self.name, "change": change }).to_string()
    }

    /// Tells this instance's feeds to re-read.
    fn announce_lag(&self) {
        let _ = self.lagged.send(0);
    }

    /// The stream's delivery mark, locked: read it and subscribe under it.
    fn mark(&self) -> std::sync::MutexGuard<'_, EntryId> {
        lock(&self.mark)
    }

    /// The connection, this value's key and the surface's channel, owned for a future.
    fn parts(&self) -> (Counted, String, String) {
        (
            self.store.con(),
            self.key.clone(),
            self.store.channel().to_owned(),
        )
    }

    /// One plain command on this value's key, then `args` (`GET`, `HGET field`, `HKEYS`, …).
    fn query<T: redis::FromRedisValue + Send + 'static>(
        &self,
        command: &'static str,
        args: Vec<String>,
    ) -> Backed<T> {
        let (mut con, key, _) = self.parts();
        self.store
            .block(async move { redis::cmd(command).arg(key).arg(args).query_async(&mut con).await })
    }

    /// One of the [scripts](super::scripts) on `keys` and `args`: each is one atomic step in Redis.
    fn script<T: redis::FromRedisValue + Send + 'static>(
        &self,
        script: &'static Script,
        keys: Vec<String>,
        args: Vec<String>,
    ) -> Backed<T> {
        let mut con = self.store.con();
        self.store.block(async move {
            let mut call = script.prepare_invoke();
            for k in keys {
                call.key(k);
            }
            for a in args {
                call.arg(a);
            }
            call.invoke_async(&mut con).await
        })
    }

    fn channel(&self) -> String {
        self.store.channel().to_owned()
    }

    /// This instance's slot for the value (its hash field `field`, when not empty).
    fn slot(&self, field: &str) -> Slot {
        let mut slots = lock(&self.slots);
        if slots.len() > IDLE_SLOTS && !slots.contains_key(field) {
            // Nobody holds or waits on a slot only the map references.
            slots.retain(|_, q| Arc::strong_count(q) > 1);
        }
        slots.entry(field.to_owned()).or_default().clone()
    }

    /// Why an update gave up: other writers kept coming first for the whole budget.
    fn busy(&self) -> Unanswered {
        Unanswered(format!(
            "{} was being updated by other calls (through this instance or another) for over {} ms — this call did not complete; retry it",
            self.name,
            OP_TIMEOUT.as_millis()
        ))
    }

    /// The keys every versioned script takes: the value and its versions.
    fn versioned_keys(&self) -> Vec<String> {
        vec![self.key.clone(), self.versions.clone()]
    }

    /// Waits for this instance's turn at `slot`, until `deadline`.
    fn take_turn(&self, slot: &Slot, deadline: Instant) -> Backed<Taken> {
        if let Ok(seen) = slot.clone().try_lock_owned() {
            return Ok(seen);
        }
        let slot = slot.clone();
        self.store
            .block(async move {
                Ok(tokio::time::timeout_at(deadline.into(), slot.lock_owned())
                    .await
                    .ok())
            })?
            .ok_or_else(|| self.busy())
    }

    /// The stream's chunks up to and including `end` (all of them when `None`), oldest first.
    fn range(&self, end: Option<EntryId>) -> Backed<Vec<String>> {
        let (mut con, key, _) = self.parts();
        let end = end.map_or_else(|| "+".to_owned(), |(ms, seq)| format!("{ms}-{seq}"));
        let entries: Vec<(String, Vec<String>)> = self.store.block(async move {
            redis::cmd("XRANGE")
                .arg(key)
                .arg("-")
                .arg(end)
                .query_async(&mut con)
                .await
        })?;
        Ok(entries
            .into_iter()
            .filter_map(|(_, mut fields)| fields.pop())
            .collect())
    }
}

impl Backing for Remote {
    fn get(&self) -> Backed<Option<String>> {
        self.query("GET", vec![])
    }

    fn set(&self, value: String, change: &Change) -> Backed<()> {
        let version = self.store.version();
        let args = vec![
            value.clone(),
            version.clone(),
            self.channel(),
            self.message(change),
        ];
        self.script::<i64>(&SET, self.versioned_keys(), args)?;
        // What this instance wrote is what it knows now (unless an update has the turn; its
        // swap then learns what is stored).
        if let Ok(mut known) = self.slot("").try_lock_owned() {
            known.learn(Some(Seen {
                value: Some(value),
                version,
            }));
        }
        Ok(())
    }

    fn publish(&self, change: &Change) -> Backed<()> {
        let (mut con, _, channel) = self.parts();
        let message = self.message(change);
        self.store.block(async move {
            redis::cmd("PUBLISH")
                .arg(channel)
                .arg(message)
                .query_async::<i64>(&mut con)
                .await
                .map(drop)
        })
    }

    fn seed_value(&self, value: String) -> Backed<()> {
        self.query::<Option<String>>("SET", vec![value, "NX".into()])
            .map(drop)
    }

    fn seed_entries(&self, kind: Entries, entries: Vec<(String, String)>) -> Backed<()> {
        let marker = layout::seeded(self.store.prefix(), &self.name);
        let what = match kind {
            Entries::Hash => "hash",
            Entries::Stream => "stream",
        };
        let mut args = vec![what.to_owned()];
        args.extend(entries.into_iter().flat_map(|(field, value)| [field, value]));
        self.script::<i64>(&SEED, vec![marker, self.key.clone()], args)
            .map(drop)
    }

    /// `INCR`, seeding a key that is gone (a Redis restarted without persistence).
    fn incr(&self, seed: u64) -> Backed<u64> {
        self.script(&INCR, vec![self.key.clone()], vec![seed.to_string()])
    }

    fn item(&self, id: String) -> Backed<Option<String>> {
        self.query("HGET", vec![id])
    }

    fn has_item(&self, id: String) -> Backed<bool> {
        self.query("HEXISTS", vec![id])
    }

    fn ids(&self) -> Backed<Vec<String>> {
        self.query("HKEYS", vec![])
    }

    fn items(&self) -> Backed<Vec<(String, String)>> {
        self.query("HGETALL", vec![])
    }

    fn count(&self) -> Backed<usize> {
        self.query("HLEN", vec![])
    }

    fn upsert(&self, id: String, item: String, change: &Change) -> Backed<Option<String>> {
        let args = vec![
            id,
            item,
            self.store.version(),
            self.channel(),
            self.message(change),
        ];
        self.script(&HSET, self.versioned_keys(), args)
    }

    fn remove(&self, id: String, change: &Change) -> Backed<Option<String>> {
        let message = self.message(change);
        self.script(&HDEL, self.versioned_keys(), vec![id, self.channel(), message])
    }

    /// Within [`OP_TIMEOUT`]; reads the value (one round trip) only when this instance knows
    /// none.
    fn turn(&self, field: Option<&str>) -> Backed<Turn> {
        let deadline = Instant::now() + OP_TIMEOUT - Duration::from_millis(500);
        let slot = self.slot(field.unwrap_or_default());
        let mut known = self.take_turn(&slot, deadline)?;
        // An item known absent may have been written since: only a known value is trusted (a
        // stale one is caught by the swap).
        if known
            .seen
            .as_ref()
            .is_none_or(|s| field.is_some() && s.value.is_none())
        {
            let args = vec![field.unwrap_or_default().to_owned()];
            let (version, value) = self.script(&READ, self.versioned_keys(), args)?;
            known.learn(Some(Seen { value, version }));
        }
        Ok(Turn {
            value: known.seen.as_ref().and_then(|s| s.value.clone()),
            hold: Box::new(Hold {
                slot,
                seen: Some(known),
                deadline,
            }),
        })
    }

    /// While no other instance writes the value, the turn passes on as soon as the swap is sent:
    /// the next caller builds on the value it writes, so one instance's updates of a hot value
    /// go out back to back instead of one round trip apart (a successor's swap fails, and it
    /// retries, only if this one does). After a conflict, the turn is kept until the answer.
    fn swap(
        &self,
        hold: &mut backing::Hold,
        field: Option<&str>,
        value: String,
        change: &Change,
    ) -> Backed<Swapped> {
        let Some(hold) = hold.downcast_mut::<Hold>() else {
            return Err(self.busy());
        };
        let mut known = match hold.seen.take() {
            Some(known) => known,
            None => self.take_turn(&hold.slot, hold.deadline)?,
        };
        let expected = known.seen.as_ref().map(|s| s.version.clone()).unwrap_or_default();
        let epoch = known.epoch;
        let version = self.store.version();
        let args = vec![
            field.unwrap_or_default().to_owned(),
            expected,
            version.clone(),
            value.clone(),
            self.channel(),
            self.message(change),
        ];
        let mut con = self.store.con();
        let keys = self.versioned_keys();
        let sent = self.store.send(async move {
            let mut call = SWAP.prepare_invoke();
            for k in keys {
                call.key(k);
            }
            for a in args {
                call.arg(a);
            }
            call.invoke_async::<(i64, String, Option<String>)>(&mut con).await
        });
        let written = Seen {
            value: Some(value),
            version,
        };
        let mut kept = None;
        if known.conflict.is_some_and(|at| at.elapsed() < CALM) {
            kept = Some(known);
        } else {
            known.seen = Some(written.clone());
            drop(known);
        }
        match self.store.answer(sent) {
            Ok((1, _, _)) => {
                if let Some(mut known) = kept {
                    known.learn(Some(written));
                }
                Ok(Swapped::Written)
            }
            Ok((_, stored, now)) => {
                // What is stored, as the answer says — unless another answer taught the slot
                // since this swap was sent: a successor that built on this swap fails with it,
                // and the first failure to come back re-teaches the slot for all of them.
                let mut known = match kept {
                    Some(known) => known,
                    None => self.take_turn(&hold.slot, hold.deadline)?,
                };
                known.conflict = Some(Instant::now());
                if known.epoch == epoch {
                    known.learn(Some(Seen {
                        value: now,
                        version: stored,
                    }));
                }
                let now = known.seen.as_ref().and_then(|s| s.value.clone());
                hold.seen = Some(known);
                if Instant::now() >= hold.deadline {
                    return Err(self.busy());
                }
                Ok(Swapped::Moved(now))
            }
            Err(e) => {
                // Written or not, this instance no longer knows what is stored: read it again
                // next time (unless an answer taught the slot since).
                let known = kept.map_or_else(|| hold.slot.clone().try_lock_owned().ok(), Some);
                if let Some(mut known) = known
                    && known.epoch == epoch
                {
                    known.learn(None);
                }
                Err(e)
            }
        }
    }

    /// Publishes `Change::Chunk` with its entry id.
    fn push(&self, keep: usize, chunk: String) -> Backed<()> {
        let keep = match keep {
            usize::MAX => String::new(),
            n => n.to_string(),
        };
        // The message is assembled around the id Redis assigns.
        let head = format!(
            "{{\"member\":{},\"change\":{{\"chunk\":{chunk}}},\"entry\":\"",
            serde_json::Value::String(self.name.clone())
        );
        let args = vec![keep, chunk, self.channel(), head, "\"}".into()];
        self.script::<String>(&XADD, vec![self.key.clone()], args)
            .map(drop)
    }

    fn chunks(&self) -> Backed<Vec<String>> {
        self.range(None)
    }

    fn open(&self, subscribe: &mut dyn FnMut()) -> Backed<Vec<String>> {
        let mark = {
            let mark = self.mark();
            subscribe();
            *mark
        };
        self.range(Some(mark))
    }

    /// What is stored now is the snapshot; what comes after arrives on the feed.
    fn mark_last(&self) -> Backed<()> {
        let (mut con, key, _) = self.parts();
        let last = self
            .store
            .block(async move { last_entry(&mut con, &key).await })?;
        *self.mark() = last;
        Ok(())
    }

    fn heard_chunk(&self, entry: Option<&str>, deliver: &mut dyn FnMut()) {
        let mut mark = self.mark();
        if let Some(id) = entry.filter(|e| !e.is_empty()).map(entry_id) {
            // Already in the snapshot of whoever opened the stream since.
            if id <= *mark {
                return;
            }
            *mark = id;
        }
        deliver();
    }

    fn heard_lag(&self, entry: Option<&str>) {
        if let Some(id) = entry.filter(|e| !e.is_empty()).map(entry_id) {
            *self.mark() = id;
        }
        self.announce_lag();
    }

    fn lagged(&self) -> broadcast::Receiver<u64> {
        self.lagged.subscribe()
    }
}

/// The id of the last entry of the stream at `key` (`0-0` when it has none).
pub(crate) async fn last_entry(con: &mut Counted, key: &str) -> redis::RedisResult<EntryId> {
    let last: Vec<(String, Vec<String>)> = redis::cmd("XREVRANGE")
        .arg(key)
        .arg("+")
        .arg("-")
        .arg("COUNT")
        .arg(1)
        .query_async(con)
        .await?;
    Ok(last.first().map_or((0, 0), |(id, _)| entry_id(id)))
}
