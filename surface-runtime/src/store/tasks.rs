//! MCP tasks across instances (features `redis` and `http`): the Redis side of the core's
//! [`TaskSharing`] seam (`mcp/task_sharing.rs` says what the core does with it).
//!
//! Three kinds of key, all under the surface's hash-tagged prefix (one cluster slot):
//!
//! - `…:task:<id>`: a hash of the task's mirrored state (`r`), its number (`v`) and whether it
//!   is terminal (`t`), expiring with the task's time to live. One script writes it, refusing a
//!   state older than the stored one or any state after a terminal one, and renews the writer's
//!   lease in the same step;
//! - `…:task-lease:<instance>`: present while the instance is alive and runs tasks (expires
//!   [`TASK_LEASE`] after its last renewal);
//! - `…:task-orders:<instance>`: a list of `tasks/update` and `tasks/cancel` handed to the
//!   instance, which takes them (at most [`TASK_ORDERS`] at a time, the list trimmed to that many)
//!   every [`TASK_ORDERS_POLL`] while it runs tasks; it expires with the lease's span twice over,
//!   so the orders of an instance that ended do not stay.

use super::layout;
use super::shared::Inner;
#[cfg(doc)]
use crate::mcp::TASK_ORDERS_POLL;
use crate::mcp::task_sharing::{Pending, TaskSharing};
use crate::mcp::{TASK_LEASE, TASK_ORDERS};
use redis::Script;
use std::sync::{Arc, LazyLock};
use std::time::Duration;

/// Stores a task's state `ARGV[3]` numbered `ARGV[1]` (terminal when `ARGV[2]` is `1`), kept `ARGV[4]`
/// ms, unless the stored one is terminal or numbered as much; renews the lease `KEYS[2]` for
/// `ARGV[5]` ms. Answers 1 when stored.
static SAVE: LazyLock<Script> = LazyLock::new(|| {
    Script::new(
        "local v = redis.call('HGET', KEYS[1], 'v') \
         if v and (redis.call('HGET', KEYS[1], 't') == '1' or tonumber(v) >= tonumber(ARGV[1])) then \
           return 0 end \
         redis.call('HSET', KEYS[1], 'v', ARGV[1], 't', ARGV[2], 'r', ARGV[3]) \
         redis.call('PEXPIRE', KEYS[1], ARGV[4]) \
         redis.call('SET', KEYS[2], '1', 'PX', ARGV[5]) return 1",
    )
});

fn millis(d: Duration) -> u64 {
    u64::try_from(d.as_millis()).unwrap_or(u64::MAX)
}

/// Tasks' states in Redis, for every instance serving the surface.
pub(crate) struct SharedTasks {
    store: Arc<Inner>,
}

impl std::fmt::Debug for SharedTasks {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SharedTasks")
            .field("prefix", &self.store.prefix())
            .field("instance", &self.store.instance())
            .finish()
    }
}

impl SharedTasks {
    pub(crate) fn new(store: Arc<Inner>) -> SharedTasks {
        SharedTasks { store }
    }

    fn task_key(&self, id: &str) -> String {
        layout::task(self.store.prefix(), id)
    }

    fn lease_key(&self, instance: &str) -> String {
        layout::task_lease(self.store.prefix(), instance)
    }

    fn orders_key(&self, instance: &str) -> String {
        layout::task_orders(self.store.prefix(), instance)
    }
}

impl TaskSharing for SharedTasks {
    fn instance(&self) -> &str {
        self.store.instance()
    }

    fn save(
        &self,
        id: &str,
        version: u64,
        terminal: bool,
        record: String,
        keep: Duration,
    ) -> Pending<'static, Result<bool, String>> {
        let mut con = self.store.con();
        let (task, lease) = (self.task_key(id), self.lease_key(self.instance()));
        Box::pin(self.store.on_store(async move {
            let stored: u8 = SAVE
                .key(task)
                .key(lease)
                .arg(version)
                .arg(if terminal { "1" } else { "0" })
                .arg(record)
                .arg(millis(keep).max(1))
                .arg(millis(TASK_LEASE))
                .invoke_async(&mut con)
                .await?;
            Ok(stored == 1)
        }))
    }

    fn load(&self, id: &str) -> Pending<'static, Result<Option<(u64, String)>, String>> {
        let mut con = self.store.con();
        let key = self.task_key(id);
        Box::pin(self.store.on_store(async move {
            let (version, record): (Option<u64>, Option<String>) = redis::cmd("HMGET")
                .arg(key)
                .arg("v")
                .arg("r")
                .query_async(&mut con)
                .await?;
            Ok(version.zip(record))
        }))
    }

    fn send(&self, instance: &str, order: String) -> Pending<'static, Result<(), String>> {
        let mut con = self.store.con();
        let key = self.orders_key(instance);
        let mut send = redis::pipe();
        send.cmd("RPUSH")
            .arg(&key)
            .arg(order)
            .ignore()
            .cmd("LTRIM")
            .arg(&key)
            .arg(-(TASK_ORDERS as i64))
            .arg(-1)
            .ignore()
            .cmd("PEXPIRE")
            .arg(&key)
            .arg(millis(TASK_LEASE * 2))
            .ignore();
        Box::pin(
            self.store
                .on_store(async move { send.query_async::<()>(&mut con).await }),
        )
    }

    fn take(&self) -> Pending<'static, Result<Vec<String>, String>> {
        let mut con = self.store.con();
        let mut take = redis::pipe();
        take.cmd("SET")
            .arg(self.lease_key(self.instance()))
            .arg("1")
            .arg("PX")
            .arg(millis(TASK_LEASE))
            .ignore()
            .cmd("LPOP")
            .arg(self.orders_key(self.instance()))
            .arg(TASK_ORDERS);
        Box::pin(self.store.on_store(async move {
            let (orders,): (Option<Vec<String>>,) = take.query_async(&mut con).await?;
            Ok(orders.unwrap_or_default())
        }))
    }

    fn alive(&self, instance: &str) -> Pending<'static, Result<bool, String>> {
        let mut con = self.store.con();
        let key = self.lease_key(instance);
        Box::pin(
            self.store
                .on_store(async move { redis::cmd("EXISTS").arg(key).query_async(&mut con).await }),
        )
    }
}
