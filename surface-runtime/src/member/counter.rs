//! A counter for state an app keeps outside its members (the next id to hand out).

use std::sync::atomic::{AtomicU64, Ordering};

#[cfg(feature = "redis")]
use std::sync::OnceLock;

/// Hands out increasing numbers, each once: in this process by default, or — bound to a store
/// with `RedisStore::bind_counter` (feature `redis`) — once across every instance serving the
/// surface, so two instances never allocate the same id.
///
/// ```
/// use surface_runtime::Counter;
/// let pids = Counter::new(3);
/// assert_eq!(pids.next(), 3);
/// assert_eq!(pids.next(), 4);
/// ```
#[derive(Debug)]
pub struct Counter {
    /// Where a store restarted without its data starts again.
    #[cfg(feature = "redis")]
    first: u64,
    next: AtomicU64,
    #[cfg(feature = "redis")]
    remote: OnceLock<crate::store::Remote>,
}

impl Counter {
    /// A counter whose first number is `first`.
    pub const fn new(first: u64) -> Self {
        Counter {
            #[cfg(feature = "redis")]
            first,
            next: AtomicU64::new(first),
            #[cfg(feature = "redis")]
            remote: OnceLock::new(),
        }
    }

    /// The next number; never the same twice. In a store that cannot be reached, the call it
    /// runs in fails (see `surface_runtime::store`) and the number answered is only local.
    pub fn next(&self) -> u64 {
        #[cfg(feature = "redis")]
        if let Some(remote) = self.remote.get()
            && let Ok(after) = remote.incr(self.first)
        {
            return after - 1;
        }
        self.next.fetch_add(1, Ordering::Relaxed)
    }

    #[cfg(feature = "redis")]
    pub(crate) fn bind_store(&self, remote: crate::store::Remote) -> Result<(), String> {
        remote
            .seed_value(self.next.load(Ordering::Relaxed).to_string())
            .map_err(|_| "the store did not answer")?;
        self.remote
            .set(remote)
            .map_err(|_| "it is in a store already".into())
    }
}

impl Default for Counter {
    fn default() -> Self {
        Counter::new(0)
    }
}
