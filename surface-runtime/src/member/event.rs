//! An event: occurrences, published to whoever listens.

use super::backing::{Backend, Bound, install};
use super::{
    Change, ChangeStream, FEED_CAPACITY, LiveMember, MemberValue, Write, decode, feed, to_json, with_lag,
    wrong_write,
};
use crate::failure::Failure;
use crate::spec::MemberKind;
use serde_json::Value;
use std::sync::OnceLock;
use tokio::sync::broadcast;

/// An event: occurrences published to whoever listens.
///
/// ```
/// # #[tokio::main(flavor = "current_thread")] async fn main() {
/// use surface_runtime::Event;
/// let saved: Event<u64> = Event::new();
/// let mut rx = saved.subscribe();
/// saved.publish(7);
/// assert_eq!(rx.recv().await.unwrap(), 7);
/// # }
/// ```
#[derive(Debug)]
pub struct Event<T> {
    occurrences: broadcast::Sender<T>,
    /// Where occurrences are published when not only here.
    backing: OnceLock<Bound<T>>,
}

impl<T: Clone> Event<T> {
    /// An event nobody has published yet.
    pub fn new() -> Self {
        Event {
            occurrences: broadcast::channel(FEED_CAPACITY).0,
            backing: OnceLock::new(),
        }
    }

    /// Publishes one occurrence to every current subscriber.
    pub fn publish(&self, value: T) {
        if let Some(b) = self.backing.get() {
            let change = Change::Published(b.json(&value));
            b.run(|s| s.publish(&change));
            return;
        }
        let _ = self.occurrences.send(value);
    }

    /// How many feeds watch it now (typed subscribers and faces' change feeds): a way to
    /// see that closed subscriptions let go.
    pub fn watchers(&self) -> usize {
        self.occurrences.receiver_count()
    }

    /// Every occurrence from now on.
    pub fn subscribe(&self) -> broadcast::Receiver<T> {
        self.occurrences.subscribe()
    }
}

impl<T: Clone> Default for Event<T> {
    fn default() -> Self {
        Event::new()
    }
}

impl<T: MemberValue> LiveMember for Event<T> {
    fn kind(&self) -> MemberKind {
        MemberKind::Event
    }
    fn read(&self) -> Value {
        // An event has no stored state: reading one answers null at once.
        Value::Null
    }
    fn write(&self, write: Write) -> Result<(), Failure> {
        match write {
            Write::Publish(v) => {
                self.publish(decode("event", v)?);
                Ok(())
            }
            other => Err(wrong_write(MemberKind::Event, &other)),
        }
    }
    fn changes(&self) -> ChangeStream {
        let changes = feed(self.subscribe(), |v| Change::Published(to_json(&v)));
        with_lag(changes, self.backing.get().map(Bound::backing))
    }
    fn bind(&self, backing: Backend) -> Result<(), String> {
        install(&self.backing, Bound::new(backing.0))
    }
    fn deliver(&self, change: Change, _entry: Option<&str>) {
        match change {
            Change::Published(v) => {
                if let Ok(v) = serde_json::from_value::<T>(v) {
                    let _ = self.occurrences.send(v);
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
