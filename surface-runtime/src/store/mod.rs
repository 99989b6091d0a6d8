//! Where member values live: in this process (the default) or in Redis, so that several
//! instances serve one surface.
//!
//! A surface's members are built in memory, as always; [`RedisStore::attach`] then moves them
//! into Redis under a key prefix naming the surface (`surface:{<name>}:…`, the name a hash tag
//! so that all of one surface's keys share a Redis Cluster slot): a cell is a string key, a
//! collection a hash (field: the item's URI-shaped id), a stream a Redis stream trimmed to its
//! history limit, and an event only a publication. The first instance to attach seeds Redis with
//! its starting values; later ones find them there and keep what is stored.
//!
//! Every write runs as one Lua script that changes the value **and** publishes the change on the
//! surface's channel (`surface:{<name>}:changes`), so no instance can see a value without its
//! change or a change without its value. Each instance follows that channel and hands every
//! change to its own members' feeds: typed subscribers and every face (MCP `resources/updated`,
//! listen streams, wire watches) hear a change made through any instance, with the debounce they
//! already have. Read-modify-write (`Cell::update`, `Collection::update`) is optimistic: each
//! value (each item) has a version kept next to it in Redis, an instance remembers the last
//! value and version it saw, computes the update from that and writes it with one script that
//! writes only if the version is still the one seen — otherwise it answers the value and version
//! stored now, and the update runs again on them. One round trip per update when nobody else
//! wrote, no lease held across round trips, and no update lost. Callers of one instance updating
//! one value take turns in a local first-come-first-served queue, so they do not fail each
//! other's swaps, and a hot key (every `proc_spawn` updates the one `load` cell) serves its
//! callers in turn.
//!
//! Member methods stay synchronous: in Redis mode each one waits for its round trip (on a
//! multi-thread runtime inside `block_in_place`), bounded by [`OP_TIMEOUT`]. When Redis cannot
//! be reached, the operation falls back to the value last heard and the call it ran in fails:
//! [`DirectDispatch`](crate::DirectDispatch) turns the whole call into a failure saying the store
//! is unreachable (an `isError` result on the MCP face), and later operations in that call fail at
//! once instead of waiting again. The connection reconnects by itself; when the change feed
//! reconnects, every member's feed hears one `Lagged`, so each subscriber is told to re-read once.
//!
//! ```no_run
//! # use std::sync::Arc;
//! # fn demo<S: surface_runtime::SurfaceMembers>(surface: Arc<S>) -> Result<(), surface_runtime::store::StoreError> {
//! use surface_runtime::store::RedisStore;
//! let store = RedisStore::connect("redis://127.0.0.1:6379/", "ops")?;
//! store.attach(&surface)?; // before serving: from now on its members live in Redis
//! # Ok(()) }
//! ```
//!
//! The store is a backend behind the core's seam: [`Remote`] implements the members' `Backing`,
//! and [`RedisStore::attach`] takes any set of members the core offers. Only this module tree
//! names Redis, and it is compiled only with the feature.

#![cfg(feature = "redis")]

mod counted;
mod feed;
mod log;
mod remote;
#[cfg(feature = "http")]
pub(crate) mod sse;
#[cfg(feature = "http")]
mod tasks;

pub use log::{LogEntries, SharedLog};
pub use remote::Remote;
#[cfg(feature = "http")]
pub use sse::{LOCAL_HISTORY, LOCAL_STREAMS, LOCAL_TTL, SESSION_TTL, SSE_HISTORY, SSE_TTL};

use crate::member::Change;
use crate::member::{
    LiveMembers,
    backing::{Backend, Unanswered},
};
use crate::spec::MemberKind;
use crate::sync::{lock, read, write};
use std::fmt;
use std::future::Future;
use std::sync::{Arc, Mutex, RwLock, Weak};
use std::time::Duration;

/// How long one store operation may take before the call it runs in fails (an update's wait
/// for its turn and its retries included): a Redis that hangs costs a call this long, never a hang.
pub const OP_TIMEOUT: Duration = Duration::from_secs(3);

/// Why a store could not be connected or a surface attached.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct StoreError(String);

impl StoreError {
    fn new(message: impl Into<String>) -> Self {
        StoreError(message.into())
    }
}

impl fmt::Display for StoreError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for StoreError {}

/// The surface's members, as the change feed reaches them.
type Deliver = Box<dyn Fn(&str, Change, Option<&str>) -> bool + Send + Sync>;

/// One attached surface: its members and how to hand them a change.
pub(crate) struct Attached {
    /// `(name, kind, data key)` of each member.
    pub(crate) members: Vec<(String, MemberKind, String)>,
    /// Hands `change` to the member `name`; false once the surface is gone.
    pub(crate) deliver: Deliver,
}

/// What the store's members and its feed share.
pub(crate) struct Inner {
    url: String,
    prefix: String,
    channel: String,
    con: counted::Counted,
    runtime: Mutex<Option<tokio::runtime::Runtime>>,
    handle: tokio::runtime::Handle,
    attached: RwLock<Option<Attached>>,
    logs: Mutex<std::collections::HashMap<String, Arc<log::Followers>>>,
    /// This store's part of every version it writes: unique among instances and stores.
    instance: String,
    /// The other part: how many versions it wrote before.
    versions: std::sync::atomic::AtomicU64,
}

impl Drop for Inner {
    fn drop(&mut self) {
        // Dropping a runtime inside another one panics; this one's tasks hold no state worth
        // waiting for (every write is acknowledged before its call answers).
        if let Some(rt) = crate::sync::get_mut(&mut self.runtime).take() {
            rt.shutdown_background();
        }
    }
}

/// Member values in Redis, shared by every instance serving the surface.
///
/// Cheap to clone; the connection and the change feed end when the last clone and every member
/// bound to it are gone.
#[derive(Clone)]
pub struct RedisStore {
    inner: Arc<Inner>,
}

impl fmt::Debug for RedisStore {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("RedisStore")
            .field("url", &self.inner.url)
            .field("prefix", &self.inner.prefix)
            .finish()
    }
}

impl RedisStore {
    /// Connects to the Redis at `url` (`redis://127.0.0.1:6379/`) for the surface `surface`
    /// (its keys are `surface:{<surface>}:…`), and starts following its change channel. Fails
    /// with one sentence naming `url` and the cause when `url` is not a Redis URL or Redis does
    /// not answer within [`OP_TIMEOUT`] (never a panic, inside a runtime or not).
    ///
    /// Callable from anywhere (inside or outside a runtime): the store runs its connection on
    /// a small runtime of its own.
    pub fn connect(url: &str, surface: &str) -> Result<RedisStore, StoreError> {
        let client = redis::Client::open(url)
            .map_err(|e| StoreError::new(format!("{url} is not a Redis URL: {e}")))?;
        let config = redis::aio::ConnectionManagerConfig::new()
            .set_connection_timeout(Some(Duration::from_secs(1)))
            .set_response_timeout(Some(Duration::from_secs(2)))
            .set_number_of_retries(2)
            .set_max_delay(Duration::from_millis(500));
        let connect = {
            let client = client.clone();
            async move {
                let con = client.get_connection_manager_with_config(config).await?;
                Ok(counted::Counted::One(con))
            }
        };
        RedisStore::open(url.to_owned(), vec![client], connect, surface)
    }

    /// Connects to the Redis Cluster that `nodes` belong to (`redis://127.0.0.1:7000/`; one
    /// reachable node is enough, more let the store start while one is down) for the surface
    /// `surface`, as [`connect`](RedisStore::connect) does to one Redis.
    ///
    /// All of one surface's keys carry its name as a hash tag, so they share one slot and each
    /// write stays one script on the master that owns it; the store follows the cluster's slots
    /// (and their moves after a failover) by itself. A write is acknowledged only once
    /// `replicas` replicas of that master have it (`WAIT`, within a second, in the same round
    /// trip), so a replica promoted when its master dies has every acknowledged write; a write
    /// not confirmed in time fails its call (it may still be applied). `0` acknowledges on the
    /// master alone: faster, but a failover may then lose the last writes. Each write waits for
    /// its replica, so with `replicas > 0` a master serves writes one replication round trip at
    /// a time, and a shard left without a replica (its master died, its replica took over)
    /// refuses writes until a replica is back.
    pub fn connect_cluster(nodes: &[&str], surface: &str, replicas: usize) -> Result<RedisStore, StoreError> {
        let shown = nodes.join(",");
        let clients = nodes
            .iter()
            .map(|url| {
                redis::Client::open(*url)
                    .map_err(|e| StoreError::new(format!("{url} is not a Redis URL: {e}")))
            })
            .collect::<Result<Vec<_>, _>>()?;
        if clients.is_empty() {
            return Err(StoreError::new("a Redis Cluster needs at least one node URL"));
        }
        let cluster = redis::cluster::ClusterClient::builder(nodes.iter().copied())
            .connection_timeout(Duration::from_secs(1))
            .response_timeout(Duration::from_secs(2))
            .build()
            .map_err(|e| StoreError::new(format!("{shown} does not name a Redis Cluster: {e}")))?;
        let connect = async move {
            let con = cluster.get_async_connection().await?;
            Ok(counted::Counted::Cluster { con, replicas })
        };
        RedisStore::open(shown, clients, connect, surface)
    }

    /// Starts the store's runtime, connects with `connect` there and follows the change
    /// channel through `feed` (the first that answers).
    fn open(
        url: String,
        feed: Vec<redis::Client>,
        connect: impl Future<Output = redis::RedisResult<counted::Counted>> + Send + 'static,
        surface: &str,
    ) -> Result<RedisStore, StoreError> {
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .thread_name("surface-store")
            .enable_all()
            .build()
            .map_err(|e| StoreError::new(format!("cannot start the store's runtime: {e}")))?;
        let handle = runtime.handle().clone();
        let con = match wait(&handle, connect) {
            Ok(con) => con,
            Err(e) => {
                // Dropped here, inside a caller's runtime, it would panic (as `Inner` says).
                runtime.shutdown_background();
                return Err(StoreError::new(format!("the store is unreachable ({url}): {e}")));
            }
        };
        // The surface's name is a hash tag: every key of one surface lands in one cluster slot, so
        // each script's keys stay together on a Redis Cluster (one Redis ignores the braces).
        let prefix = format!("surface:{{{surface}}}");
        let inner = Arc::new(Inner {
            channel: format!("{prefix}:changes"),
            prefix,
            con,
            runtime: Mutex::new(Some(runtime)),
            handle,
            attached: RwLock::new(None),
            logs: Mutex::new(std::collections::HashMap::new()),
            url,
            instance: instance(),
            versions: std::sync::atomic::AtomicU64::new(0),
        });
        feed::start(feed, &inner).map_err(|e| {
            StoreError::new(format!(
                "the store's change feed did not start ({}): {e}",
                inner.url
            ))
        })?;
        Ok(RedisStore { inner })
    }

    /// The key prefix, `surface:{<name>}` (the name is a Redis Cluster hash tag).
    pub fn prefix(&self) -> &str {
        &self.inner.prefix
    }

    /// The channel every write publishes its change on.
    pub fn channel(&self) -> &str {
        &self.inner.channel
    }

    /// Moves `surface`'s members into the store: from now on their values live in Redis (seeded
    /// from the members' current values when Redis has none yet) and their feeds hear changes
    /// made through every instance. One surface per store; attach before serving.
    pub fn attach<S: LiveMembers>(&self, surface: &Arc<S>) -> Result<(), StoreError> {
        if read(&self.inner.attached).is_some() {
            return Err(StoreError::new(format!(
                "a surface is already attached to the store under {}",
                self.inner.prefix
            )));
        }
        let mut members = Vec::new();
        for spec in S::specs() {
            let Some(live) = surface.live(spec.name) else {
                continue;
            };
            let remote = Remote::new(self.inner.clone(), spec.name, spec.kind);
            let key = remote.key().to_owned();
            live.bind(Backend(Box::new(remote))).map_err(|e| {
                StoreError::new(format!("member {} could not move into the store: {e}", spec.name))
            })?;
            members.push((spec.name.to_owned(), spec.kind, key));
        }
        let weak: Weak<S> = Arc::downgrade(surface);
        let deliver: Deliver = Box::new(move |name, change, entry| match weak.upgrade() {
            Some(s) => {
                if let Some(m) = s.live(name) {
                    m.deliver(change, entry);
                }
                true
            }
            None => false,
        });
        *write(&self.inner.attached) = Some(Attached { members, deliver });
        Ok(())
    }

    /// Binds `counter` to the store under `name` (its own namespace, apart from members): from
    /// now on [`Counter::next`](crate::Counter::next) allocates from Redis, so no two instances
    /// hand out the same number. The counter's current value seeds Redis when it has none.
    pub fn bind_counter(&self, name: &str, counter: &crate::Counter) -> Result<(), StoreError> {
        let remote = Remote::counter(self.inner.clone(), name);
        counter
            .bind(Backend(Box::new(remote)))
            .map_err(|e| StoreError::new(format!("counter {name} could not move into the store: {e}")))
    }
}

impl RedisStore {
    /// The shared log `name` of this surface (see [`SharedLog`]): entries every instance reads
    /// in one order.
    pub fn log(&self, name: &str) -> Result<SharedLog, StoreError> {
        SharedLog::open(self.inner.clone(), name)
    }
}

impl Inner {
    /// This instance's followers of the log `name`, made by `make` the first time.
    pub(crate) fn log_followers(
        &self,
        name: &str,
        make: impl FnOnce() -> Arc<log::Followers>,
    ) -> Arc<log::Followers> {
        lock(&self.logs)
            .entry(name.to_owned())
            .or_insert_with(make)
            .clone()
    }

    pub(crate) fn logs(&self) -> Vec<(String, Arc<log::Followers>)> {
        lock(&self.logs)
            .iter()
            .map(|(k, v)| (k.clone(), v.clone()))
            .collect()
    }

    /// Runs `fut` on the store's runtime and waits for it, outside any call's fault slot.
    pub(crate) fn wait<T: Send + 'static>(
        &self,
        fut: impl Future<Output = redis::RedisResult<T>> + Send + 'static,
    ) -> Result<T, StoreError> {
        wait(&self.handle, fut)
            .map_err(|e| StoreError::new(format!("the store is unreachable ({}): {e}", self.url)))
    }

    pub(crate) fn prefix(&self) -> &str {
        &self.prefix
    }
    pub(crate) fn channel(&self) -> &str {
        &self.channel
    }
    pub(crate) fn con(&self) -> counted::Counted {
        self.con.clone()
    }
    pub(crate) fn attached(&self) -> std::sync::RwLockReadGuard<'_, Option<Attached>> {
        read(&self.attached)
    }

    /// Runs `fut` on the store's runtime and waits for it (bounded by [`OP_TIMEOUT`]); a
    /// failure is the sentence the running call answers (the core records it against the call).
    pub(crate) fn block<T: Send + 'static>(
        &self,
        fut: impl Future<Output = redis::RedisResult<T>> + Send + 'static,
    ) -> Result<T, Unanswered> {
        self.answer(send(&self.handle, fut))
    }

    /// Starts `fut` on the store's runtime without waiting: its command is on the connection,
    /// ahead of any this thread sends later, when this returns.
    pub(crate) fn send<T: Send + 'static>(
        &self,
        fut: impl Future<Output = redis::RedisResult<T>> + Send + 'static,
    ) -> Sent<T> {
        send(&self.handle, fut)
    }

    /// Waits for what [`send`](Inner::send) started, as [`block`](Inner::block) does.
    pub(crate) fn answer<T>(&self, sent: Sent<T>) -> Result<T, Unanswered> {
        sent.answer().map_err(|e| {
            Unanswered(format!(
                "the store is unreachable ({}): {e} — this call did not complete, and the writes it made before the failure may have been applied; check the state before retrying",
                self.url
            ))
        })
    }

    /// A version no other write of any instance uses.
    pub(crate) fn version(&self) -> String {
        format!(
            "{}.{}",
            self.instance,
            self.versions.fetch_add(1, std::sync::atomic::Ordering::Relaxed)
        )
    }
}

/// An id no other store (in this process or another, now or later) has: the process, the
/// time and a count of the stores this process opened.
fn instance() -> String {
    static STORES: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap_or_default()
        .as_nanos();
    let n = STORES.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    format!("{:x}.{now:x}.{n}", std::process::id())
}

/// What a request answers: a Redis answer, or nothing within [`OP_TIMEOUT`].
type Answer<T> = Result<redis::RedisResult<T>, tokio::time::error::Elapsed>;

/// A request on its way: its command is on the connection; its answer may still be to come.
pub(crate) enum Sent<T> {
    Answered(Answer<T>),
    Waiting {
        task: std::pin::Pin<Box<dyn Future<Output = Answer<T>> + Send>>,
        handle: tokio::runtime::Handle,
    },
}

impl<T> Sent<T> {
    /// Waits for the answer on this thread (bounded by [`OP_TIMEOUT`]), in `block_in_place`
    /// when this thread is a multi-thread runtime's worker. The answer wakes this thread
    /// itself: no task of the store's runtime stands between.
    fn answer(self) -> Result<T, String> {
        let got = match self {
            Sent::Answered(got) => got,
            Sent::Waiting { task, handle } => {
                let receive = move || {
                    let _inside = handle.enter();
                    futures::executor::block_on(task)
                };
                match tokio::runtime::Handle::try_current() {
                    Ok(h) if h.runtime_flavor() == tokio::runtime::RuntimeFlavor::MultiThread => {
                        tokio::task::block_in_place(receive)
                    }
                    _ => receive(),
                }
            }
        };
        match got {
            Ok(Ok(v)) => Ok(v),
            Ok(Err(e)) => Err(e.to_string()),
            Err(_) => Err(format!("no answer within {} ms", OP_TIMEOUT.as_millis())),
        }
    }
}

/// Starts `fut` in `handle`'s runtime context. It is polled once here, so its command is on
/// the connection before this thread starts another: one thread's requests reach Redis in the
/// order it made them (an update's successor builds on a swap still in flight).
fn send<T: Send + 'static>(
    handle: &tokio::runtime::Handle,
    fut: impl Future<Output = redis::RedisResult<T>> + Send + 'static,
) -> Sent<T> {
    let _inside = handle.enter();
    let mut task: std::pin::Pin<Box<dyn Future<Output = Answer<T>> + Send>> =
        Box::pin(tokio::time::timeout(OP_TIMEOUT, fut));
    // Pending, `answer` polls it again, with a waker that counts.
    match task
        .as_mut()
        .poll(&mut std::task::Context::from_waker(std::task::Waker::noop()))
    {
        std::task::Poll::Ready(got) => Sent::Answered(got),
        std::task::Poll::Pending => Sent::Waiting {
            task,
            handle: handle.clone(),
        },
    }
}

/// Runs `fut` on `handle`'s runtime and waits for its answer on this thread.
fn wait<T: Send + 'static>(
    handle: &tokio::runtime::Handle,
    fut: impl Future<Output = redis::RedisResult<T>> + Send + 'static,
) -> Result<T, String> {
    send(handle, fut).answer()
}
