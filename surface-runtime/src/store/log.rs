//! A shared log: JSON entries every instance reads in one order — for state an app keeps
//! outside members that must change the same way everywhere (a rooted bundle's roster).
//!
//! Appending is one script (`RPUSH` and a publication on the surface's channel); each instance's
//! feed hands the new entry to the log's followers. An entry's generation is its position (1 for
//! the first), the same on every instance. After a feed reconnection, the entries appended
//! meanwhile are read from Redis and handed on in order, so a follower never misses one.

use super::error::StoreError;
use super::layout;
use super::log_followers::{Followers, LogEntries};
use super::shared::Inner;
use redis::Script;
use serde_json::Value;
use std::sync::{Arc, LazyLock};

/// Appends `ARGV[1]` to the list `KEYS[1]` and publishes it with its generation.
static APPEND: LazyLock<Script> = LazyLock::new(|| {
    Script::new(
        "local n = redis.call('RPUSH', KEYS[1], ARGV[1]) \
         redis.call('PUBLISH', ARGV[2], '{\"log\":' .. ARGV[3] .. ',\"generation\":' .. n .. ',\"entry\":' .. ARGV[1] .. '}') \
         return n",
    )
});

/// A shared log in the store (see the module docs). Cheap to clone.
#[derive(Clone)]
pub struct SharedLog {
    store: Arc<Inner>,
    name: String,
    followers: Arc<Followers>,
}

impl std::fmt::Debug for SharedLog {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SharedLog")
            .field("key", &self.followers.key)
            .finish()
    }
}

impl SharedLog {
    pub(super) fn open(store: Arc<Inner>, name: &str) -> Result<SharedLog, StoreError> {
        let key = layout::log(store.prefix(), name);
        let followers = store.log_followers(name, || Arc::new(Followers::new(key)));
        let log = SharedLog {
            store,
            name: name.to_owned(),
            followers,
        };
        // What is stored now is the history; what comes later arrives on the feed.
        let mut con = log.store.con();
        let key = log.followers.key.clone();
        let len: u64 = log
            .store
            .wait(async move { redis::cmd("LLEN").arg(key).query_async(&mut con).await })?;
        log.followers.reached(len);
        Ok(log)
    }

    /// Appends `entry`; answers its generation.
    pub fn append(&self, entry: &Value) -> Result<u64, StoreError> {
        let mut con = self.store.con();
        let (key, channel) = (self.followers.key.clone(), self.store.channel().to_owned());
        let (entry, name) = (entry.to_string(), Value::String(self.name.clone()).to_string());
        self.store.wait(async move {
            APPEND
                .key(key)
                .arg(entry)
                .arg(channel)
                .arg(name)
                .invoke_async(&mut con)
                .await
        })
    }

    /// Every entry so far, oldest first, and a receiver of `(generation, entry)` for each later
    /// one — taken together, so none is missed or seen twice.
    pub fn follow(&self) -> Result<(Vec<Value>, LogEntries), StoreError> {
        let (upto, receiver) = self.followers.subscribe();
        if upto == 0 {
            return Ok((Vec::new(), receiver));
        }
        let mut con = self.store.con();
        let key = self.followers.key.clone();
        let stored: Vec<String> = self.store.wait(async move {
            redis::cmd("LRANGE")
                .arg(key)
                .arg(0)
                .arg(upto as i64 - 1)
                .query_async(&mut con)
                .await
        })?;
        let history = stored
            .iter()
            .filter_map(|s| serde_json::from_str(s).ok())
            .collect();
        Ok((history, receiver))
    }
}
