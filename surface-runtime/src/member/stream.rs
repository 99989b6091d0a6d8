//! A stream: a snapshot, then each new chunk.

use super::backing::{Backend, Bound, Entries, install};
use super::{
    Change, ChangeStream, FEED_CAPACITY, LiveMember, MemberValue, Write, decode, feed, to_json, with_lag,
    wrong_write,
};
use crate::failure::Failure;
use crate::spec::MemberKind;
use crate::sync::lock;
use serde_json::Value;
use std::collections::VecDeque;
use std::sync::{Mutex, OnceLock};
use tokio::sync::broadcast;

/// How many chunks a [`Stream`] keeps by default: the snapshot is the last this many.
pub const STREAM_HISTORY: usize = 1024;

/// A stream: a snapshot of the chunks so far, then each new chunk. It keeps the last
/// [`STREAM_HISTORY`] chunks (or as many as [`Stream::with_history`] says), so a long-lived
/// stream's memory stays bounded; the snapshot is the retained tail.
///
/// ```
/// # #[tokio::main(flavor = "current_thread")] async fn main() {
/// use surface_runtime::Stream;
/// let log: Stream<String> = Stream::new();
/// log.push("booted".into());
/// let (snapshot, mut chunks) = log.open();
/// assert_eq!(snapshot, vec!["booted".to_string()]);
/// log.push("spawned".into());
/// assert_eq!(chunks.recv().await.unwrap(), "spawned");
///
/// let recent: Stream<u32> = Stream::with_history(2);
/// (1..=5).for_each(|n| recent.push(n));
/// assert_eq!(recent.snapshot(), vec![4, 5]);
/// # }
/// ```
#[derive(Debug)]
pub struct Stream<C> {
    history: Mutex<VecDeque<C>>,
    keep: usize,
    chunks: broadcast::Sender<C>,
    /// Where the chunks live when not here.
    backing: OnceLock<Bound<C>>,
}

impl<C: Clone> Stream<C> {
    /// An empty stream keeping the last [`STREAM_HISTORY`] chunks.
    pub fn new() -> Self {
        Stream::with_history(STREAM_HISTORY)
    }

    /// An empty stream keeping the last `keep` chunks (`0`: none, every snapshot is empty;
    /// `usize::MAX`: all of them, memory growing with every chunk).
    pub fn with_history(keep: usize) -> Self {
        Stream {
            history: Mutex::new(VecDeque::new()),
            keep,
            chunks: broadcast::channel(FEED_CAPACITY).0,
            backing: OnceLock::new(),
        }
    }

    /// How many chunks this stream keeps.
    pub fn history_limit(&self) -> usize {
        self.keep
    }

    /// Appends a chunk and publishes it; the oldest kept chunk goes when the history is full.
    pub fn push(&self, chunk: C) {
        if let Some(b) = self.backing.get() {
            let stored = b.stored(&chunk);
            b.run(|s| s.push(self.keep, stored));
            return;
        }
        let mut history = lock(&self.history);
        if self.chunks.receiver_count() > 0 {
            let _ = self.chunks.send(chunk.clone());
        }
        if self.keep == 0 {
            return;
        }
        if history.len() >= self.keep {
            history.pop_front();
        }
        history.push_back(chunk);
    }

    /// How many feeds watch it now (typed subscribers and faces' change feeds): a way to
    /// see that closed subscriptions let go.
    pub fn watchers(&self) -> usize {
        self.chunks.receiver_count()
    }

    /// The chunks kept, oldest first.
    pub fn snapshot(&self) -> Vec<C> {
        if let Some(b) = self.backing.get()
            && let Some(stored) = b.run(|s| s.chunks())
        {
            return stored.iter().filter_map(|s| (b.decode)(s)).collect();
        }
        lock(&self.history).iter().cloned().collect()
    }

    /// The snapshot and a receiver of every later chunk, taken together so none is missed or
    /// seen twice.
    ///
    /// In a store, the snapshot is what is stored up to the last chunk this instance has
    /// delivered; every later one arrives on the receiver.
    pub fn open(&self) -> (Vec<C>, broadcast::Receiver<C>) {
        if let Some(b) = self.backing.get() {
            let mut chunks = None;
            let stored = b.run(|s| s.open(&mut || chunks = Some(self.chunks.subscribe())));
            let chunks = chunks.unwrap_or_else(|| self.chunks.subscribe());
            let snapshot = match stored {
                Some(stored) => stored.iter().filter_map(|s| (b.decode)(s)).collect(),
                None => lock(&self.history).iter().cloned().collect(),
            };
            return (snapshot, chunks);
        }
        let history = lock(&self.history);
        (history.iter().cloned().collect(), self.chunks.subscribe())
    }
}

impl<C: Clone> Default for Stream<C> {
    fn default() -> Self {
        Stream::new()
    }
}

impl<C: MemberValue> LiveMember for Stream<C> {
    fn kind(&self) -> MemberKind {
        MemberKind::Stream
    }
    fn read(&self) -> Value {
        if self.backing.get().is_some() {
            return to_json(&self.snapshot());
        }
        to_json(&*lock(&self.history))
    }
    fn write(&self, write: Write) -> Result<(), Failure> {
        match write {
            Write::Push(v) => {
                self.push(decode("chunk", v)?);
                Ok(())
            }
            other => Err(wrong_write(MemberKind::Stream, &other)),
        }
    }
    fn changes(&self) -> ChangeStream {
        let changes = feed(self.chunks.subscribe(), |c| Change::Chunk(to_json(&c)));
        with_lag(changes, self.backing.get().map(Bound::backing))
    }
    fn bind(&self, backing: Backend) -> Result<(), String> {
        let b = Bound::new(backing.0);
        if self.keep > 0 {
            let seed = lock(&self.history)
                .iter()
                .map(|c| (String::new(), to_json(c).to_string()))
                .collect();
            b.run(|s| s.seed_entries(Entries::Stream, seed))
                .ok_or("the store did not answer")?;
        }
        b.run(|s| s.mark_last()).ok_or("the store did not answer")?;
        install(&self.backing, b)
    }
    fn deliver(&self, change: Change, entry: Option<&str>) {
        let Some(b) = self.backing.get() else { return };
        match change {
            Change::Chunk(v) => {
                let mut chunk = Some(v);
                // At the delivery point: a chunk already in the snapshot of whoever opened the
                // stream since is not delivered again.
                b.backing().heard_chunk(entry, &mut || {
                    if let Some(Ok(chunk)) = chunk.take().map(serde_json::from_value::<C>)
                        && self.chunks.receiver_count() > 0
                    {
                        let _ = self.chunks.send(chunk);
                    }
                });
            }
            Change::Lagged(_) => b.backing().heard_lag(entry),
            _ => {}
        }
    }
}
