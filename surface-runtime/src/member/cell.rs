//! A cell: one value.

use super::backing::{Backend, Bound, Swapped, install};
use super::{
    Change, ChangeStream, FEED_CAPACITY, LiveMember, MemberValue, Write, decode, feed, to_json, with_lag,
    wrong_write,
};
use crate::failure::Failure;
use crate::spec::MemberKind;
use crate::sync::{read, write};
use serde_json::Value;
use std::sync::{OnceLock, RwLock};
use tokio::sync::broadcast;

/// A cell: one value; every write is published.
///
/// ```
/// # #[tokio::main(flavor = "current_thread")] async fn main() {
/// use surface_runtime::Cell;
/// let load = Cell::new(2u32);
/// let mut watch = load.subscribe();
/// load.set(3);
/// assert_eq!(load.get(), 3);
/// assert_eq!(watch.recv().await.unwrap(), 3);
/// load.update(|n| *n += 1);
/// assert_eq!(load.get(), 4);
/// # }
/// ```
#[derive(Debug)]
pub struct Cell<T> {
    value: RwLock<T>,
    writes: broadcast::Sender<T>,
    /// Where the value lives when not here.
    backing: OnceLock<Bound<T>>,
}

impl<T: Clone> Cell<T> {
    /// A cell holding `value`.
    pub fn new(value: T) -> Self {
        Cell {
            value: RwLock::new(value),
            writes: broadcast::channel(FEED_CAPACITY).0,
            backing: OnceLock::new(),
        }
    }

    /// A copy of the current value.
    pub fn get(&self) -> T {
        if let Some(b) = self.backing.get()
            && let Some(Some(stored)) = b.run(|s| s.get())
            && let Some(value) = (b.decode)(&stored)
        {
            return value;
        }
        read(&self.value).clone()
    }

    /// Replaces the value and publishes it.
    pub fn set(&self, value: T) {
        if let Some(b) = self.backing.get() {
            // The local copy and the subscribers hear it back from the backing's feed.
            let json = b.json(&value);
            let stored = json.to_string();
            b.run(|s| s.set(stored, &Change::Set(json)));
            return;
        }
        let mut slot = write(&self.value);
        *slot = value;
        self.publish(&slot);
    }

    /// Changes the value in place and publishes the result; answers what `f` answers.
    ///
    /// In memory `f` runs once. In a store it may run again: the update is computed from the
    /// value this instance last knew and written only if no other write came first; otherwise
    /// `f` runs again on the value that did (optimistic concurrency, as
    /// [`AtomicU64::fetch_update`](std::sync::atomic::AtomicU64::fetch_update)), so updates
    /// made through several instances at once each see the one before. Keep `f` to computing
    /// the new value: it holds this instance's turn at the value, so a member read inside it
    /// (a store round trip) makes every other updater of the value wait that long.
    pub fn update<R>(&self, mut f: impl FnMut(&mut T) -> R) -> R {
        if let Some(b) = self.backing.get() {
            let Some(mut turn) = b.run(|s| s.turn(None)) else {
                // The call fails (the failure is recorded); `f` still answers, on the value heard.
                return f(&mut read(&self.value).clone());
            };
            let mut stored = turn.value.take();
            loop {
                let mut value = stored
                    .as_deref()
                    .and_then(b.decode)
                    .unwrap_or_else(|| read(&self.value).clone());
                let r = f(&mut value);
                let json = b.json(&value);
                let text = json.to_string();
                match b.run(|s| s.swap(&mut turn.hold, None, text, &Change::Set(json))) {
                    Some(Swapped::Moved(now)) => stored = now,
                    _ => return r,
                }
            }
        }
        let mut slot = write(&self.value);
        let r = f(&mut slot);
        self.publish(&slot);
        r
    }

    /// How many feeds watch it now (typed subscribers and faces' change feeds): a way to
    /// see that closed subscriptions let go.
    pub fn watchers(&self) -> usize {
        self.writes.receiver_count()
    }

    /// Every value written from now on.
    pub fn subscribe(&self) -> broadcast::Receiver<T> {
        self.writes.subscribe()
    }

    fn publish(&self, value: &T) {
        // Published under the write lock, so subscribers see writes in the order they happened.
        if self.writes.receiver_count() > 0 {
            let _ = self.writes.send(value.clone());
        }
    }
}

impl<T: Clone + Default> Default for Cell<T> {
    fn default() -> Self {
        Cell::new(T::default())
    }
}

impl<T: MemberValue> LiveMember for Cell<T> {
    fn kind(&self) -> MemberKind {
        MemberKind::Cell
    }
    fn read(&self) -> Value {
        if self.backing.get().is_some() {
            return to_json(&self.get());
        }
        to_json(&*read(&self.value))
    }
    fn write(&self, write: Write) -> Result<(), Failure> {
        match write {
            Write::Set(v) => {
                self.set(decode("value", v)?);
                Ok(())
            }
            other => Err(wrong_write(MemberKind::Cell, &other)),
        }
    }
    fn changes(&self) -> ChangeStream {
        let changes = feed(self.subscribe(), |v| Change::Set(to_json(&v)));
        with_lag(changes, self.backing.get().map(Bound::backing))
    }
    fn bind(&self, backing: Backend) -> Result<(), String> {
        let b = Bound::new(backing.0);
        let seed = b.stored(&*read(&self.value));
        b.run(|s| s.seed_value(seed)).ok_or("the store did not answer")?;
        if let Some(Some(stored)) = b.run(|s| s.get())
            && let Some(value) = (b.decode)(&stored)
        {
            *write(&self.value) = value;
        }
        install(&self.backing, b)
    }
    fn deliver(&self, change: Change, _entry: Option<&str>) {
        match change {
            Change::Set(v) => {
                if let Ok(v) = serde_json::from_value::<T>(v) {
                    let mut slot = write(&self.value);
                    *slot = v;
                    self.publish(&slot);
                }
            }
            Change::Lagged(_) => self
                .backing
                .get()
                .iter()
                .for_each(|b| b.backing().heard_lag(None)),
            _ => {}
        }
    }
}
