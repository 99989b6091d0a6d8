//! One member's (or counter's) place in Redis, and the atomic steps a member takes on it: the
//! core's `Backing`, implemented on Redis.
//!
//! Members call these with JSON already encoded; each failure answers the sentence the running
//! call fails with (the core records it against the call), so a member can fall back to the
//! value it last heard and carry on.

use super::{Inner, OP_TIMEOUT};
use crate::member::Change;
use crate::member::backing::{self, Backed, Backing, Entries, Lease, Unanswered};
use crate::spec::MemberKind;
use crate::sync::lock;
use redis::Script;
use std::fmt;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, LazyLock, Mutex};
use std::time::{Duration, Instant};
use tokio::sync::broadcast;

/// Sets a key and publishes its change, in one step.
static SET: LazyLock<Script> = LazyLock::new(|| {
    Script::new("redis.call('SET', KEYS[1], ARGV[1]) redis.call('PUBLISH', ARGV[2], ARGV[3]) return 1")
});

/// Sets a hash field and publishes its change; answers the value it replaced.
static HSET: LazyLock<Script> = LazyLock::new(|| {
    Script::new(
        "local old = redis.call('HGET', KEYS[1], ARGV[1]) \
         redis.call('HSET', KEYS[1], ARGV[1], ARGV[2]) \
         redis.call('PUBLISH', ARGV[3], ARGV[4]) return old",
    )
});

/// Deletes a hash field and, if it was there, publishes its removal; answers what it deleted.
static HDEL: LazyLock<Script> = LazyLock::new(|| {
    Script::new(
        "local old = redis.call('HGET', KEYS[1], ARGV[1]) \
         if old then redis.call('HDEL', KEYS[1], ARGV[1]) redis.call('PUBLISH', ARGV[2], ARGV[3]) end \
         return old",
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

/// Takes the lease KEYS[1] for ARGV[2] ms and reads KEYS[2] (the hash field ARGV[3] when not
/// empty) under it: `{1, value}`, or `{0, false}` while another holds the lease.
static LEASE: LazyLock<Script> = LazyLock::new(|| {
    Script::new(
        "if redis.call('SET', KEYS[1], ARGV[1], 'NX', 'PX', ARGV[2]) then \
           if ARGV[3] == '' then return {1, redis.call('GET', KEYS[2])} end \
           return {1, redis.call('HGET', KEYS[2], ARGV[3])} end \
         return {0, false}",
    )
});

/// Writes KEYS[2] (or its field ARGV[2]), publishes and releases the lease, only while the
/// lease is still ours: 1, or 0 when it expired first (nothing is written then).
static COMMIT: LazyLock<Script> = LazyLock::new(|| {
    Script::new(
        "if redis.call('GET', KEYS[1]) ~= ARGV[1] then return 0 end \
         if ARGV[2] == '' then redis.call('SET', KEYS[2], ARGV[3]) \
         else redis.call('HSET', KEYS[2], ARGV[2], ARGV[3]) end \
         redis.call('PUBLISH', ARGV[4], ARGV[5]) redis.call('DEL', KEYS[1]) return 1",
    )
});

/// Releases a lease still ours without writing.
static RELEASE: LazyLock<Script> = LazyLock::new(|| {
    Script::new("if redis.call('GET', KEYS[1]) == ARGV[1] then redis.call('DEL', KEYS[1]) end return 1")
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

/// How long a read-modify-write holds its lease at most: an instance killed mid-update blocks
/// the value this long.
const LEASE_TTL: Duration = Duration::from_secs(2);

/// A stream entry id, `ms-seq`, comparable.
pub(crate) type EntryId = (u64, u64);

/// Parses `ms-seq`; anything else is the smallest id.
fn entry_id(s: &str) -> EntryId {
    let (ms, seq) = s.split_once('-').unwrap_or((s, "0"));
    (ms.parse().unwrap_or(0), seq.parse().unwrap_or(0))
}

/// What a [`Lease`] holds here: its token in Redis and this instance's turn for the value.
struct Hold {
    token: String,
    /// Given back after the Redis lease (on drop).
    _turn: tokio::sync::OwnedMutexGuard<()>,
}

impl Hold {
    /// The hold of a lease this backing handed out; kept until the lease's script has run, so
    /// this instance's next caller waits its turn until then.
    fn of(hold: backing::Hold) -> Option<Box<Hold>> {
        hold.downcast::<Hold>().ok()
    }
}

/// A value's local queue: callers of one instance updating one value wait here in order, so
/// only one of them at a time competes with other instances for the Redis lease.
type Queue = Arc<tokio::sync::Mutex<()>>;

/// How many idle local queues a member keeps before sweeping them.
const IDLE_QUEUES: usize = 64;

/// One member's (or counter's) place in the store. Built by [`RedisStore::attach`](super::RedisStore::attach).
pub struct Remote {
    store: Arc<Inner>,
    name: String,
    key: String,
    /// Feeds hear a `Lagged` when the change feed reconnects.
    lagged: broadcast::Sender<u64>,
    /// A stream's last entry delivered to this instance's subscribers.
    mark: Mutex<EntryId>,
    /// Local queues for this value's leases, by hash field (`""`: the value itself); idle ones
    /// are swept once there are more than [`IDLE_QUEUES`].
    queues: Mutex<std::collections::HashMap<String, Queue>>,
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
            key,
            lagged: broadcast::channel(16).0,
            mark: Mutex::new((0, 0)),
            queues: Mutex::new(std::collections::HashMap::new()),
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

    fn lease_key(&self, field: Option<&str>) -> String {
        match field {
            Some(id) => format!("{}:lease:{}:{id}", self.store.prefix(), self.name),
            None => format!("{}:lease:{}", self.store.prefix(), self.name),
        }
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

    /// This instance's queue for the value (its hash field `field`, when not empty).
    fn queue(&self, field: &str) -> Queue {
        let mut queues = lock(&self.queues);
        if queues.len() > IDLE_QUEUES && !queues.contains_key(field) {
            // Nobody holds or waits on a queue only the map references.
            queues.retain(|_, q| Arc::strong_count(q) > 1);
        }
        queues.entry(field.to_owned()).or_default().clone()
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
        self.script::<i64>(&SET, vec![self.key.clone()], vec![value, self.channel(), message])
            .map(drop)
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
            vec![self.key.clone()],
            vec![id, item, self.channel(), message],
        )
    }

    fn remove(&self, id: String, change: &Change) -> Backed<Option<String>> {
        let message = self.message(change);
        self.script(&HDEL, vec![self.key.clone()], vec![id, self.channel(), message])
    }

    /// Within [`OP_TIMEOUT`].
    fn lease(&self, field: Option<&str>) -> Backed<Lease> {
        static TOKENS: AtomicU64 = AtomicU64::new(0);
        let token = format!(
            "{}-{}-{:?}",
            std::process::id(),
            TOKENS.fetch_add(1, Ordering::Relaxed),
            Instant::now()
        );
        let (mut con, key, _) = self.parts();
        let (lease_key, field) = (self.lease_key(field), field.unwrap_or_default().to_owned());
        let queue = self.queue(&field);
        let held = token.clone();
        let got = self.store.block(async move {
            let deadline = Instant::now() + OP_TIMEOUT - Duration::from_millis(500);
            // Fair (first come, first served) among this instance's callers; without it every
            // caller polls Redis and the unlucky ones wait out the whole budget.
            let Ok(turn) = tokio::time::timeout_at(deadline.into(), queue.lock_owned()).await else {
                return Ok(None);
            };
            let mut pause = Duration::from_micros(100);
            loop {
                let (won, value): (i64, Option<String>) = LEASE
                    .key(&lease_key)
                    .key(&key)
                    .arg(&held)
                    .arg(LEASE_TTL.as_millis() as u64)
                    .arg(&field)
                    .invoke_async(&mut con)
                    .await?;
                if won == 1 {
                    return Ok(Some((value, turn)));
                }
                if Instant::now() >= deadline {
                    return Ok(None);
                }
                // Only other instances' turn-holders compete here: a short pause suffices.
                tokio::time::sleep(pause).await;
                pause = (pause * 2).min(Duration::from_millis(2));
            }
        })?;
        match got {
            Some((value, turn)) => Ok(Lease {
                value,
                hold: Box::new(Hold { token, _turn: turn }),
            }),
            None => Err(Unanswered(format!(
                "{} was being updated by other calls (through this instance or another) for over {} ms — this call did not complete; retry it",
                self.name,
                OP_TIMEOUT.as_millis()
            ))),
        }
    }

    fn commit(&self, hold: backing::Hold, field: Option<&str>, value: String, change: &Change) -> Backed<()> {
        let keys = vec![self.lease_key(field), self.key.clone()];
        let hold = Hold::of(hold);
        let args = vec![
            hold.as_ref().map(|h| h.token.clone()).unwrap_or_default(),
            field.unwrap_or_default().to_owned(),
            value,
            self.channel(),
            self.message(change),
        ];
        if self.script::<i64>(&COMMIT, keys, args)? == 1 {
            return Ok(());
        }
        Err(Unanswered(format!(
            "the update of {} held its store lease for over {} ms, so it was not applied; retry it",
            self.name,
            LEASE_TTL.as_millis()
        )))
    }

    fn release(&self, hold: backing::Hold, field: Option<&str>) {
        if let Some(hold) = Hold::of(hold) {
            let _ = self.script::<i64>(&RELEASE, vec![self.lease_key(field)], vec![hold.token.clone()]);
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
