//! [`RedisStore`]: connecting to one Redis or a Redis Cluster, and moving a surface's members,
//! counters and shared logs into it. The parts it drives are files of their own: the change
//! feed (`feed.rs`), each member's place (`remote.rs`), the shared logs (`log.rs`).

use super::counted::Counted;
use super::driver::Driver;
use super::error::StoreError;
use super::feed;
use super::log::SharedLog;
use super::remote::Remote;
use super::round_trip;
use super::shared::{Attached, Deliver, Inner};
use crate::member::{LiveMembers, backing::Backend};
use std::fmt;
use std::future::Future;
use std::sync::{Arc, Weak};
use std::time::Duration;

/// Member values in Redis, shared by every instance serving the surface.
///
/// Cheap to clone; the connection and the change feed end when the last clone and every member
/// bound to it are gone.
#[derive(Clone)]
pub struct RedisStore {
    pub(super) inner: Arc<Inner>,
}

impl fmt::Debug for RedisStore {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("RedisStore")
            .field("url", &self.inner.url())
            .field("prefix", &self.inner.prefix())
            .finish()
    }
}

impl RedisStore {
    /// Connects to the Redis at `url` (`redis://127.0.0.1:6379/`) for the surface `surface`
    /// (its keys are `surface:{<surface>}:…`), and starts following its change channel. Fails
    /// with one sentence naming `url` and the cause when `url` is not a Redis URL or Redis does
    /// not answer within [`OP_TIMEOUT`](super::OP_TIMEOUT) (never a panic, inside a runtime or not).
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
                Ok(Counted::One(con))
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
            Ok(Counted::Cluster { con, replicas })
        };
        RedisStore::open(shown, clients, connect, surface)
    }

    /// Starts the store's runtime, connects with `connect` there and follows the change
    /// channel through `feed` (the first that answers).
    fn open(
        url: String,
        feed: Vec<redis::Client>,
        connect: impl Future<Output = redis::RedisResult<Counted>> + Send + 'static,
        surface: &str,
    ) -> Result<RedisStore, StoreError> {
        let driver =
            Driver::start().map_err(|e| StoreError::new(format!("cannot start the store's runtime: {e}")))?;
        let con = round_trip::wait(driver.handle(), connect)
            .map_err(|e| StoreError::new(format!("the store is unreachable ({url}): {e}")))?;
        let inner = Arc::new(Inner::new(url, surface, con, driver));
        feed::start(feed, &inner).map_err(|e| {
            StoreError::new(format!(
                "the store's change feed did not start ({}): {e}",
                inner.url()
            ))
        })?;
        Ok(RedisStore { inner })
    }

    /// The key prefix, `surface:{<name>}` (the name is a Redis Cluster hash tag).
    pub fn prefix(&self) -> &str {
        self.inner.prefix()
    }

    /// The channel every write publishes its change on.
    pub fn channel(&self) -> &str {
        self.inner.channel()
    }

    /// Moves `surface`'s members into the store: from now on their values live in Redis (seeded
    /// from the members' current values when Redis has none yet) and their feeds hear changes
    /// made through every instance. One surface per store; attach before serving.
    pub fn attach<S: LiveMembers>(&self, surface: &Arc<S>) -> Result<(), StoreError> {
        if self.inner.attached().is_some() {
            return Err(StoreError::new(format!(
                "a surface is already attached to the store under {}",
                self.inner.prefix()
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
        self.inner.attach(Attached { members, deliver });
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
