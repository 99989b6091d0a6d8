//! One member's (or counter's) place in Redis, and the atomic steps a member takes on it: the
//! core's `Backing`, implemented on Redis.
//!
//! Members call these with JSON already encoded; each failure answers the sentence the running
//! call fails with (the core records it against the call), so a member can fall back to the
//! value it last heard and carry on.

use super::{Inner, OP_TIMEOUT};
use crate::member::Change;
use crate::member::backing::{self, Backed, Backing, Entries, Swapped, Turn, Unanswered};
use crate::spec::MemberKind;
use crate::sync::lock;
use redis::Script;
use std::fmt;
use std::sync::{Arc, LazyLock, Mutex};
use std::time::{Duration, Instant};
use tokio::sync::broadcast;

/// Sets a cell and bumps its version (answered), and publishes its change, in one step.
static SET: LazyLock<Script> = LazyLock::new(|| {
    Script::new(
        "redis.call('SET', KEYS[1], ARGV[1]) local v = redis.call('INCR', KEYS[2]) \
         redis.call('PUBLISH', ARGV[2], ARGV[3]) return v",
    )
});

/// Sets a hash field, gives it a new version and publishes its change; answers the value it
/// replaced.
static HSET: LazyLock<Script> = LazyLock::new(|| {
    Script::new(
        "local old = redis.call('HGET', KEYS[1], ARGV[1]) \
         redis.call('HSET', KEYS[1], ARGV[1], ARGV[2]) \
         redis.call('HSET', KEYS[2], ARGV[1], redis.call('INCR', KEYS[3])) \
         redis.call('PUBLISH', ARGV[3], ARGV[4]) return old",
    )
});

/// Deletes a hash field (and its version) and, if it was there, publishes its removal; answers
/// what it deleted.
static HDEL: LazyLock<Script> = LazyLock::new(|| {
    Script::new(
        "local old = redis.call('HGET', KEYS[1], ARGV[1]) \
         if old then redis.call('HDEL', KEYS[1], ARGV[1]) redis.call('HDEL', KEYS[2], ARGV[1]) \
           redis.call('PUBLISH', ARGV[2], ARGV[3]) end \
         return old",
    )
});

/// Reads a value (the hash field ARGV[1] when not empty) with its version: `{version, value}`.
static READ: LazyLock<Script> = LazyLock::new(|| {
    Script::new(
        "if ARGV[1] == '' then \
           return {tonumber(redis.call('GET', KEYS[2])) or 0, redis.call('GET', KEYS[1])} end \
         return {tonumber(redis.call('HGET', KEYS[2], ARGV[1])) or 0, redis.call('HGET', KEYS[1], ARGV[1])}",
    )
});

/// Compare-and-set: writes ARGV[3] to the value (the hash field ARGV[1] when not empty, only
/// while it exists) and publishes ARGV[5] on ARGV[4], only if its version is still ARGV[2]:
/// `{1, new version, false}`; otherwise writes nothing and answers `{0, version, value}`, what
/// is stored now, so a retry needs no read of its own. A version is never reused (a cell's
/// counts its writes, an item's comes from the collection's sequence KEYS[3]), so a value
/// removed and written again is never mistaken for the one seen.
static SWAP: LazyLock<Script> = LazyLock::new(|| {
    Script::new(
        "local f = ARGV[1] local v \
         if f == '' then v = tonumber(redis.call('GET', KEYS[2])) or 0 \
         else v = tonumber(redis.call('HGET', KEYS[2], f)) or 0 end \
         if v == tonumber(ARGV[2]) then \
           if f == '' then redis.call('SET', KEYS[1], ARGV[3]) v = redis.call('INCR', KEYS[2]) \
           elseif redis.call('HEXISTS', KEYS[1], f) == 1 then \
             redis.call('HSET', KEYS[1], f, ARGV[3]) v = redis.call('INCR', KEYS[3]) \
             redis.call('HSET', KEYS[2], f, v) \
           else return {0, 0, false} end \
           redis.call('PUBLISH', ARGV[4], ARGV[5]) return {1, v, false} end \
         if f == '' then return {0, v, redis.call('GET', KEYS[1])} end \
         return {0, v, redis.call('HGET', KEYS[1], f)}",
    )
});

/// Appends a chunk to a stream trimmed to ARGV[1] entries ('' unbounded, '0' keeps none) and
/// publishes it with its entry id spliced between ARGV[4] and ARGV[5]; answers the id.
static XADD: LazyLock<Script> = LazyLock::new(|| {
    Script::new(
        "local id = '' \
         if ARGV[1] == '' then id = redis.call('XADD', KEYS[1], '*', 'c', ARGV[2]) \
         elseif ARGV[1] ~= '0' then id = redis.call('XADD', KEYS[1], 'MAXLEN', ARGV[1], '*', 'c', ARGV[2]) end \
         redis.call('PUBLISH', ARGV[3], ARGV[4] .. id .. ARGV[5]) return id",
    )
});

/// Seeds a hash or stream once per member: only the first instance's values go in, so a later
/// instance never resurrects an item another deleted.
static SEED: LazyLock<Script> = LazyLock::new(|| {
    Script::new(
        "if redis.call('SETNX', KEYS[1], 1) == 0 then return 0 end \
         for i = 2, #ARGV, 2 do \
           if ARGV[1] == 'hash' then redis.call('HSET', KEYS[2], ARGV[i], ARGV[i + 1]) \
           else redis.call('XADD', KEYS[2], '*', 'c', ARGV[i + 1]) end end \
         return 1",
    )
});

/// Increments a counter, first seeding it when the key is gone.
static INCR: LazyLock<Script> = LazyLock::new(|| {
    Script::new(
        "if redis.call('EXISTS', KEYS[1]) == 0 then redis.call('SET', KEYS[1], ARGV[1]) end \
         return redis.call('INCR', KEYS[1])",
    )
});

/// A stream entry id, `ms-seq`, comparable.
pub(crate) type EntryId = (u64, u64);

/// Parses `ms-seq`; anything else is the smallest id.
fn entry_id(s: &str) -> EntryId {
    let (ms, seq) = s.split_once('-').unwrap_or((s, "0"));
    (ms.parse().unwrap_or(0), seq.parse().unwrap_or(0))
}

/// What this instance last knew of one value: as stored, and its version.
struct Seen {
    value: Option<String>,
    version: i64,
}

/// One value's turn: callers of one instance updating one value take it in order (first come,
/// first served), so they do not race each other's swaps; it keeps the value as last known.
type Slot = Arc<tokio::sync::Mutex<Option<Seen>>>;

/// What a [`Turn`] holds here: the value's slot, locked, and when the update must give up.
struct Hold {
    seen: tokio::sync::OwnedMutexGuard<Option<Seen>>,
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
    /// A collection's version sequence.
    sequence: String,
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
        let key = format!("{}:{}:{name}", store.prefix(), kind.word());
        Remote::at(store, name, key)
    }

    pub(super) fn counter(store: Arc<Inner>, name: &str) -> Self {
        let key = format!("{}:counter:{name}", store.prefix());
        Remote::at(store, name, key)
    }

    fn at(store: Arc<Inner>, name: &str, key: String) -> Self {
        Remote {
            store,
            name: name.to_owned(),
            lagged: broadcast::channel(16).0,
            mark: Mutex::new((0, 0)),
            versions: format!("{key}:version"),
            sequence: format!("{key}:seq"),
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
    fn parts(&self) -> (super::counted::Counted, String, String) {
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

    /// One of the scripts above on `keys` and `args`: each is one atomic step in Redis.
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

    /// The keys every versioned script takes: the value, its versions, the sequence.
    fn versioned_keys(&self) -> Vec<String> {
        vec![self.key.clone(), self.versions.clone(), self.sequence.clone()]
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
        let message = self.message(change);
        let args = vec![value.clone(), self.channel(), message];
        let version = self.script::<i64>(&SET, vec![self.key.clone(), self.versions.clone()], args)?;
        // What this instance wrote is what it knows now (unless an update holds the turn; its
        // swap then learns the version from Redis).
        if let Ok(mut seen) = self.slot("").try_lock_owned() {
            *seen = Some(Seen {
                value: Some(value),
                version,
            });
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
        let marker = format!("{}:seeded:{}", self.store.prefix(), self.name);
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
        let message = self.message(change);
        self.script(
            &HSET,
            self.versioned_keys(),
            vec![id, item, self.channel(), message],
        )
    }

    fn remove(&self, id: String, change: &Change) -> Backed<Option<String>> {
        let message = self.message(change);
        let keys = vec![self.key.clone(), self.versions.clone()];
        self.script(&HDEL, keys, vec![id, self.channel(), message])
    }

    /// Within [`OP_TIMEOUT`]; reads the value (one round trip) only when this instance knows
    /// none.
    fn turn(&self, field: Option<&str>) -> Backed<Turn> {
        let deadline = Instant::now() + OP_TIMEOUT - Duration::from_millis(500);
        let slot = self.slot(field.unwrap_or_default());
        let mut seen = match slot.clone().try_lock_owned() {
            Ok(seen) => seen,
            Err(_) => self
                .store
                .block(async move {
                    Ok(tokio::time::timeout_at(deadline.into(), slot.lock_owned())
                        .await
                        .ok())
                })?
                .ok_or_else(|| self.busy())?,
        };
        // An item known absent may have been written since: only a known value is trusted (a
        // stale one is caught by the swap).
        if seen.as_ref().is_none_or(|s| field.is_some() && s.value.is_none()) {
            let (version, value): (i64, Option<String>) = self.script(
                &READ,
                vec![self.key.clone(), self.versions.clone()],
                vec![field.unwrap_or_default().to_owned()],
            )?;
            *seen = Some(Seen { value, version });
        }
        Ok(Turn {
            value: seen.as_ref().and_then(|s| s.value.clone()),
            hold: Box::new(Hold { seen, deadline }),
        })
    }

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
        let expected = hold.seen.as_ref().map_or(0, |s| s.version);
        let args = vec![
            field.unwrap_or_default().to_owned(),
            expected.to_string(),
            value.clone(),
            self.channel(),
            self.message(change),
        ];
        let swapped = self.script::<(i64, i64, Option<String>)>(&SWAP, self.versioned_keys(), args);
        match swapped {
            Ok((1, version, _)) => {
                *hold.seen = Some(Seen {
                    value: Some(value),
                    version,
                });
                Ok(Swapped::Written)
            }
            Ok((_, version, now)) => {
                *hold.seen = Some(Seen {
                    value: now.clone(),
                    version,
                });
                if Instant::now() >= hold.deadline {
                    return Err(self.busy());
                }
                Ok(Swapped::Moved(now))
            }
            Err(e) => {
                // Written or not, this instance no longer knows: read again next time.
                *hold.seen = None;
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
pub(crate) async fn last_entry(con: &mut super::counted::Counted, key: &str) -> redis::RedisResult<EntryId> {
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
