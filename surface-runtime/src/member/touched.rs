//! Which items of a collection changed since a reader last looked: the feed the MCP face's hubs
//! read.
//!
//! A hub only pokes the watchers of the items a change names (they re-read what they serve),
//! so it needs each changed item once, not every change in order. The writer records a change
//! for each open feed under the collection's write lock, which it holds anyway, so a watched
//! upsert costs a push onto a buffer the writer's core keeps, where a broadcast send would take
//! the channel's slot lock and store into a ring slot the reader's core touched last. The
//! reader drains its buffer whole and hands out each item once, with its last change.
//!
//! Every buffer is bounded ([`TOUCHED_CAPACITY`]): a reader that falls further behind is told it
//! lagged (`Change::Lagged`), as a broadcast receiver would be, and nothing is lost silently.

use super::change::Change;
use crate::sync::write;
use futures::Stream;
use std::collections::{BTreeMap, VecDeque};
use std::pin::Pin;
use std::sync::{Arc, RwLock};
use std::task::{Context, Poll, Waker};

/// How many changes one feed holds between two reads before it reads as lagged.
pub(super) const TOUCHED_CAPACITY: usize = 1024;

/// The open feeds of one collection and what each has not read yet.
#[derive(Debug)]
pub(super) struct Touched<C> {
    next: u64,
    feeds: Vec<Pending<C>>,
    /// The collection is gone: every feed ends once drained.
    closed: bool,
}

impl<C> Default for Touched<C> {
    fn default() -> Self {
        Touched {
            next: 0,
            feeds: Vec::new(),
            closed: false,
        }
    }
}

/// One feed's unread changes.
#[derive(Debug)]
struct Pending<C> {
    id: u64,
    changes: Vec<C>,
    /// Changes past the bound since the last read.
    lost: u64,
    /// The reader waiting for the next change, if it is waiting.
    waker: Option<Waker>,
}

/// The readers to wake once the collection's lock is let go (waking may be a syscall).
#[must_use = "wake them once the lock is let go"]
pub(super) struct Wake(Vec<Waker>);

impl Wake {
    pub(super) fn wake(self) {
        self.0.into_iter().for_each(Waker::wake);
    }
}

impl<C: Clone> Touched<C> {
    /// Records `change` for every open feed, answering who to wake.
    pub(super) fn record(&mut self, change: &C) -> Wake {
        let mut wake = Vec::new();
        for feed in &mut self.feeds {
            if feed.changes.len() < TOUCHED_CAPACITY {
                feed.changes.push(change.clone());
            } else {
                feed.lost += 1;
            }
            wake.extend(feed.waker.take());
        }
        Wake(wake)
    }

    /// How many feeds are open.
    pub(super) fn len(&self) -> usize {
        self.feeds.len()
    }
}

impl<C> Touched<C> {
    /// The collection is gone: wakes every reader, to end its feed.
    pub(super) fn close(&mut self) -> Wake {
        self.closed = true;
        Wake(self.feeds.iter_mut().filter_map(|f| f.waker.take()).collect())
    }
}

/// What holds a collection's [`Touched`] (its items, under the lock the writer holds).
pub(super) trait HoldsTouched<C>: Send + Sync + 'static {
    fn touched(&mut self) -> &mut Touched<C>;
}

/// A change that names the item it changed: what a feed coalesces by.
pub(super) trait Keyed: Clone + Send + Sync + 'static {
    /// The item's key.
    type Key: Ord + Clone;
    /// The key of the item this change changed.
    fn key(&self) -> &Self::Key;
}

/// Opens a feed on `held`'s collection: from now on, each item changed since the last read,
/// once, erased by `erase`.
pub(super) fn open<C: Keyed, H: HoldsTouched<C>>(
    held: Arc<RwLock<H>>,
    erase: fn(C) -> Change,
) -> TouchedFeed<C, H> {
    let id = {
        let mut h = write(&held);
        let t = h.touched();
        t.next += 1;
        t.feeds.push(Pending {
            id: t.next,
            changes: Vec::new(),
            lost: 0,
            waker: None,
        });
        t.next
    };
    TouchedFeed {
        held,
        id,
        erase,
        ready: VecDeque::new(),
        drained: Vec::new(),
    }
}

/// A reader of a collection's changed items (see the module's doc); leaving it closes its
/// buffer.
pub(super) struct TouchedFeed<C, H: HoldsTouched<C>> {
    held: Arc<RwLock<H>>,
    id: u64,
    erase: fn(C) -> Change,
    /// Read and coalesced, not yet handed out.
    ready: VecDeque<Change>,
    /// The buffer swapped in at each read, so that neither side allocates in a steady state.
    drained: Vec<C>,
}

impl<C: Keyed, H: HoldsTouched<C>> TouchedFeed<C, H> {
    /// Hands out each item of `drained` once, with its last change, in the order first changed.
    fn coalesce(&mut self, lost: u64) {
        if lost > 0 {
            self.ready.push_back(Change::Lagged(lost));
        }
        let mut first: BTreeMap<C::Key, usize> = BTreeMap::new();
        let mut last: Vec<C> = Vec::new();
        for change in self.drained.drain(..) {
            match first.get(change.key()) {
                Some(&at) => last[at] = change,
                None => {
                    first.insert(change.key().clone(), last.len());
                    last.push(change);
                }
            }
        }
        self.ready.extend(last.into_iter().map(self.erase));
    }
}

impl<C: Keyed, H: HoldsTouched<C>> Stream for TouchedFeed<C, H> {
    type Item = Change;

    fn poll_next(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Change>> {
        let this = self.get_mut();
        if let Some(change) = this.ready.pop_front() {
            return Poll::Ready(Some(change));
        }
        let lost = {
            let mut h = write(&this.held);
            let t = h.touched();
            let closed = t.closed;
            let Some(feed) = t.feeds.iter_mut().find(|f| f.id == this.id) else {
                return Poll::Ready(None);
            };
            if feed.changes.is_empty() && feed.lost == 0 {
                if closed {
                    return Poll::Ready(None);
                }
                if !feed.waker.as_ref().is_some_and(|w| w.will_wake(cx.waker())) {
                    feed.waker = Some(cx.waker().clone());
                }
                return Poll::Pending;
            }
            std::mem::swap(&mut feed.changes, &mut this.drained);
            std::mem::take(&mut feed.lost)
        };
        this.coalesce(lost);
        Poll::Ready(this.ready.pop_front())
    }
}

impl<C, H: HoldsTouched<C>> Drop for TouchedFeed<C, H> {
    fn drop(&mut self) {
        write(&self.held).touched().feeds.retain(|f| f.id != self.id);
    }
}

// `TouchedFeed` holds no self-reference: it is moved freely between polls.
impl<C, H: HoldsTouched<C>> Unpin for TouchedFeed<C, H> {}
