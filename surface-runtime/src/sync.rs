//! Lock access that survives poisoning, in one spelling.
//!
//! A panic while a lock is held poisons it; every lock in this crate guards a value that stays
//! consistent between statements (a table, a map of watches, a member's value), so the value
//! is served as it was last written rather than letting one panicking handler take the whole
//! face down with it. [`OnDrop`] runs a connection's closer once, whoever drops it last.

use std::sync::{Mutex, MutexGuard, PoisonError, RwLock, RwLockReadGuard, RwLockWriteGuard};

/// Locks `m`, recovering it if a panic poisoned it.
pub(crate) fn lock<T: ?Sized>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(PoisonError::into_inner)
}

/// Read-locks `l`, recovering it if a panic poisoned it.
pub(crate) fn read<T: ?Sized>(l: &RwLock<T>) -> RwLockReadGuard<'_, T> {
    l.read().unwrap_or_else(PoisonError::into_inner)
}

/// Write-locks `l`, recovering it if a panic poisoned it.
pub(crate) fn write<T: ?Sized>(l: &RwLock<T>) -> RwLockWriteGuard<'_, T> {
    l.write().unwrap_or_else(PoisonError::into_inner)
}

/// The value of a lock this caller owns outright, recovering it if a panic poisoned it.
pub(crate) fn get_mut<T: ?Sized>(m: &mut Mutex<T>) -> &mut T {
    m.get_mut().unwrap_or_else(PoisonError::into_inner)
}

/// What closes a connection: run once.
pub(crate) type Dispose = Box<dyn FnOnce() + Send + Sync>;

/// Runs what it holds once, when dropped: the end of a connection nobody holds any more.
pub(crate) struct OnDrop(Mutex<Option<Dispose>>);

impl OnDrop {
    pub(crate) fn new(dispose: Option<Dispose>) -> Self {
        OnDrop(Mutex::new(dispose))
    }
}

impl Drop for OnDrop {
    fn drop(&mut self) {
        if let Some(dispose) = get_mut(&mut self.0).take() {
            dispose();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_poisoned_lock_serves_its_last_value() {
        let m = std::sync::Arc::new(Mutex::new(1));
        let poisoner = m.clone();
        let _ = std::thread::spawn(move || {
            let mut g = poisoner.lock().unwrap();
            *g = 2;
            panic!("poison it");
        })
        .join();
        assert!(m.is_poisoned());
        assert_eq!(*lock(&m), 2);
        let l = RwLock::new(3);
        *write(&l) += 1;
        assert_eq!(*read(&l), 4);
    }
}
