//! A counter for state an app keeps outside its members (the next id to hand out).

use super::backing::{self, Backend, Backing};
use std::sync::OnceLock;
use std::sync::atomic::{AtomicU64, Ordering};

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
    first: u64,
    next: AtomicU64,
    /// Where the count lives when not here.
    backing: OnceLock<Box<dyn Backing>>,
}

impl Counter {
    /// A counter whose first number is `first`.
    pub const fn new(first: u64) -> Self {
        Counter {
            first,
            next: AtomicU64::new(first),
            backing: OnceLock::new(),
        }
    }

    /// The next number; never the same twice. In a store that cannot be reached, the call it
    /// runs in fails (see `surface_runtime::store`) and the number answered is only local.
    pub fn next(&self) -> u64 {
        if let Some(b) = self.backing.get()
            && let Some(after) = backing::run(&**b, |s| s.incr(self.first))
        {
            return after - 1;
        }
        self.next.fetch_add(1, Ordering::Relaxed)
    }

    /// Moves the count into `backing` (what a backend's `bind_counter` calls).
    #[doc(hidden)]
    pub fn bind(&self, backing: Backend) -> Result<(), String> {
        let Backend(backing) = backing;
        let seed = self.next.load(Ordering::Relaxed).to_string();
        backing::run(&*backing, |s| s.seed_value(seed)).ok_or("the store did not answer")?;
        self.backing
            .set(backing)
            .map_err(|_| "it is in a store already".into())
    }
}

impl Default for Counter {
    fn default() -> Self {
        Counter::new(0)
    }
}
