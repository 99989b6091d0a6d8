//! What every part of one store shares ([`Inner`]): its connection and the runtime that drives
//! it, the surface's key prefix and channel, the attached surface, the shared logs' followers,
//! and the versions it writes. Round trips start here: waited for on the caller's thread
//! ([`Inner::block`], [`Inner::wait`]) or awaited from another runtime ([`Inner::on_store`]).

use super::counted::Counted;
use super::driver::Driver;
use super::error::StoreError;
use super::layout;
use super::log_followers::Followers;
use super::round_trip::{self, Sent};
use crate::member::Change;
use crate::member::backing::Unanswered;
use crate::spec::MemberKind;
use crate::sync::{lock, read, write};
use std::collections::HashMap;
use std::future::Future;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, RwLock};

/// The surface's members, as the change feed reaches them.
pub(crate) type Deliver = Box<dyn Fn(&str, Change, Option<&str>) -> bool + Send + Sync>;

/// One attached surface: its members and how to hand them a change.
pub(crate) struct Attached {
    /// `(name, kind, data key)` of each member.
    pub(crate) members: Vec<(String, MemberKind, String)>,
    /// Hands `change` to the member `name`; false once the surface is gone.
    pub(crate) deliver: Deliver,
}

/// What the store's members, its feed, logs, sessions and tasks share.
pub(crate) struct Inner {
    url: String,
    prefix: String,
    channel: String,
    con: Counted,
    driver: Driver,
    attached: RwLock<Option<Attached>>,
    logs: Mutex<HashMap<String, Arc<Followers>>>,
    /// This store's part of every version it writes: unique among instances and stores.
    instance: String,
    /// The other part: how many versions it wrote before.
    versions: AtomicU64,
}

impl Inner {
    /// The store of the surface `surface` at `url`, connected through `con`, driven by `driver`.
    pub(crate) fn new(url: String, surface: &str, con: Counted, driver: Driver) -> Inner {
        let prefix = layout::prefix(surface);
        Inner {
            channel: layout::channel(&prefix),
            prefix,
            con,
            driver,
            attached: RwLock::new(None),
            logs: Mutex::new(HashMap::new()),
            url,
            instance: instance(),
            versions: AtomicU64::new(0),
        }
    }

    /// This instance's followers of the log `name`, made by `make` the first time.
    pub(crate) fn log_followers(&self, name: &str, make: impl FnOnce() -> Arc<Followers>) -> Arc<Followers> {
        lock(&self.logs)
            .entry(name.to_owned())
            .or_insert_with(make)
            .clone()
    }

    pub(crate) fn logs(&self) -> Vec<(String, Arc<Followers>)> {
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
        round_trip::wait(self.handle(), fut)
            .map_err(|e| StoreError::new(format!("the store is unreachable ({}): {e}", self.url)))
    }

    /// Runs `fut` on the store's runtime (where its connection lives), started before this
    /// returns, and waits for it without blocking the awaiting task, bounded by
    /// [`OP_TIMEOUT`](super::OP_TIMEOUT).
    #[cfg(feature = "http")]
    pub(crate) fn on_store<T: Send + 'static>(
        &self,
        fut: impl Future<Output = redis::RedisResult<T>> + Send + 'static,
    ) -> impl Future<Output = Result<T, String>> + Send + 'static {
        round_trip::spawned(self.handle(), &self.url, fut)
    }

    /// Where the store was connected (its URL, or its cluster's node URLs).
    pub(crate) fn url(&self) -> &str {
        &self.url
    }
    pub(crate) fn prefix(&self) -> &str {
        &self.prefix
    }
    pub(crate) fn channel(&self) -> &str {
        &self.channel
    }
    pub(crate) fn con(&self) -> Counted {
        self.con.clone()
    }
    /// The store's runtime, for the tasks that follow Redis (the change feed, resumed streams).
    pub(crate) fn handle(&self) -> &tokio::runtime::Handle {
        self.driver.handle()
    }
    /// This store's id among instances and stores.
    #[cfg(feature = "http")]
    pub(crate) fn instance(&self) -> &str {
        &self.instance
    }
    pub(crate) fn attached(&self) -> std::sync::RwLockReadGuard<'_, Option<Attached>> {
        read(&self.attached)
    }
    /// Attaches the surface `attached` describes (one per store).
    pub(crate) fn attach(&self, attached: Attached) {
        *write(&self.attached) = Some(attached);
    }

    /// Runs `fut` on the store's runtime and waits for it (bounded by
    /// [`OP_TIMEOUT`](super::OP_TIMEOUT)); a failure is the sentence the running call answers
    /// (the core records it against the call).
    pub(crate) fn block<T: Send + 'static>(
        &self,
        fut: impl Future<Output = redis::RedisResult<T>> + Send + 'static,
    ) -> Result<T, Unanswered> {
        self.answer(round_trip::send(self.handle(), fut))
    }

    /// Starts `fut` on the store's runtime without waiting: its command is on the connection,
    /// ahead of any this thread sends later, when this returns.
    pub(crate) fn send<T: Send + 'static>(
        &self,
        fut: impl Future<Output = redis::RedisResult<T>> + Send + 'static,
    ) -> Sent<T> {
        round_trip::send(self.handle(), fut)
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
            self.versions.fetch_add(1, Ordering::Relaxed)
        )
    }
}

/// An id no other store (in this process or another, now or later) has: the process, the
/// time and a count of the stores this process opened.
fn instance() -> String {
    static STORES: AtomicU64 = AtomicU64::new(0);
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap_or_default()
        .as_nanos();
    let n = STORES.fetch_add(1, Ordering::Relaxed);
    format!("{:x}.{now:x}.{n}", std::process::id())
}
