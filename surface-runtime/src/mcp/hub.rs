//! One feed per served member, routed to its watchers by item id.
//!
//! A [`Hub`] is the one reader of a member's feed per served generation, whatever the number of
//! sessions and URIs: it looks each change's item id up in its routes and pokes only the
//! watchers of that item (and those of the whole member), so an upsert wakes the watchers it
//! concerns, not every watcher of the collection in every session (a broadcast send wakes every
//! waiting receiver). A poked route's watcher then debounces (see `Watch` in `watch.rs`).
//!
//! What a poke does is the watcher's (`watch.rs`): it marks its URI changed, and only the first
//! change of a window queues anything.
//!
//! The feed a hub reads is the member's coalesced one (`Dispatch::watch_touched`): a collection
//! names each item changed since the hub last read once, and records it under the write lock
//! its writer holds anyway, so a watched write costs its writer a push, not a channel send.
//!
//! A route whose every watcher was poked is marked [`Raised`] until one of them sends its
//! `updated` (and lowers the mark): a busy item's later changes in the same window then cost
//! the hub one read, not a poke per watching session.
//!
//! A hub reads a burst together: the change that wakes it is routed at once, and what follows
//! is read in rounds a millisecond apart (`gather`), so a writer's burst wakes the hub once. A
//! burst of more than the feed holds in one round reads as a lag, which pokes every watcher of
//! the member: a spurious `updated` at worst, never a missed one.

use super::clients::Clients;
use super::resources::ResourceEntry;
use crate::member::{Change, ChangeStream};
use crate::sync::lock;
use futures::future::BoxFuture;
use futures::{FutureExt, StreamExt};
use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, Weak};
use std::time::Duration;
use tokio::task::JoinHandle;

/// How long a dropped feed waits before it dials again.
const REATTACH: Duration = Duration::from_millis(250);

/// How long a hub lets the changes after the one that woke it gather before it reads them
/// (`gather`): short beside a watcher's debounce (`watch::DEBOUNCE`), which delays every
/// `updated` anyway.
const GATHER: Duration = Duration::from_millis(1);

/// The longest a hub waits between two rounds of [`gather`]: a quiet round doubles the wait
/// up to this.
const GATHER_MAX: Duration = Duration::from_millis(16);

/// How long a hub keeps reading in rounds after its last change before it waits to be woken.
/// A writer that writes in bursts closer than this then never wakes the hub from its own
/// thread: a wake-up of a parked runtime is a syscall there, and the worker it wakes may take
/// the writer's core for as long as the routing runs.
const LINGER: Duration = Duration::from_millis(100);

/// Which member a hub reads: its owning sibling (none for the core) and its name.
type HubKey = (Option<String>, &'static str);

/// What hubs read their feeds through: the served generation (generation.rs implements it),
/// so this module names no generation.
pub(crate) trait Source: Send + Sync + 'static {
    /// The hubs open on it, one per watched member.
    fn hubs(&self) -> &Hubs;
    /// The link its members are dispatched over.
    fn link(&self) -> &Clients;
}

/// The hubs of one generation, by member.
#[derive(Default)]
pub(crate) struct Hubs {
    open: Mutex<HashMap<HubKey, Weak<Hub>>>,
}

/// The one reader of a member's feed, and where each change goes.
pub(crate) struct Hub {
    routes: Mutex<Routes>,
    task: Mutex<Option<JoinHandle<()>>>,
}

#[derive(Default)]
struct Routes {
    next: u64,
    /// Watchers of one item, by the item's id as URIs spell it.
    by_id: HashMap<String, Watchers>,
    /// Watchers of the whole member (a cell, a stream, an event, a collection's list).
    whole: Watchers,
}

/// The watchers of one item (or of the whole member), and whether all of them are raised.
#[derive(Default)]
struct Watchers {
    raised: Arc<Raised>,
    list: Vec<Routed>,
}

impl Watchers {
    /// Pokes every watcher, unless all of them were poked and none has sent since.
    fn poke(&self) {
        // Raised before the pokes: a watcher that sends meanwhile lowers it after, and the
        // next change pokes them all again.
        if !self.raised.0.swap(true, Ordering::SeqCst) {
            for (_, watcher) in &self.list {
                watcher.poke();
            }
        }
    }

    fn join(&mut self, token: u64, watcher: Arc<dyn Watcher>) {
        watcher.routed(self.raised.clone());
        self.list.push((token, watcher));
        // The newcomer has not been poked.
        self.raised.0.store(false, Ordering::SeqCst);
    }
}

/// Set when every watcher of a route has been poked; a watcher lowers it when it sends (and
/// so lowers its own mark), and the route's next change pokes them all again.
#[derive(Default)]
pub(crate) struct Raised(AtomicBool);

impl Raised {
    /// One of the route's watchers sent what it was poked for.
    pub(crate) fn lower(&self) {
        // Read first: a window's watchers of one item lower it together, and a read leaves
        // the line shared.
        if self.0.load(Ordering::SeqCst) {
            self.0.store(false, Ordering::SeqCst);
        }
    }
}

/// One route: its token (what its [`Route`] removes) and its watcher.
type Routed = (u64, Arc<dyn Watcher>);

/// What a hub tells of each change that concerns it (implemented in `watch.rs`). Called on the
/// hub's task for every such change, so it must be cheap and must not block.
pub(crate) trait Watcher: Send + Sync + 'static {
    /// Something this watcher follows changed.
    fn poke(&self);
    /// Joined a route: `raised` is to be lowered each time this watcher has sent what it was
    /// poked for, since the hub pokes a raised route's watchers no more.
    fn routed(&self, raised: Arc<Raised>);
}

/// A watcher's place in a hub's routes; leaving it (dropping) removes the route, and the last
/// route's leaving ends the hub.
pub(crate) struct Route {
    hub: Arc<Hub>,
    item: Option<String>,
    token: u64,
}

impl Drop for Route {
    fn drop(&mut self) {
        let mut routes = lock(&self.hub.routes);
        let watchers = match &self.item {
            Some(id) => routes.by_id.get_mut(id),
            None => Some(&mut routes.whole),
        };
        if let Some(watchers) = watchers {
            watchers.list.retain(|(t, _)| *t != self.token);
            if watchers.list.is_empty()
                && let Some(id) = &self.item
            {
                routes.by_id.remove(id);
            }
        }
    }
}

impl Drop for Hub {
    fn drop(&mut self) {
        if let Some(task) = lock(&self.task).take() {
            task.abort();
        }
    }
}

impl Hub {
    /// Routes one change: an item's change to that item's watchers and the whole member's;
    /// anything else (and a lag, which may have hidden any item's change) to every watcher.
    fn route(&self, change: &Change) {
        let routes = lock(&self.routes);
        match change {
            Change::Upserted { id } | Change::Removed { id } => {
                if let Some(watchers) = routes.by_id.get(id) {
                    watchers.poke();
                }
            }
            Change::Lagged(_) => routes.by_id.values().for_each(Watchers::poke),
            _ => {}
        }
        routes.whole.poke();
    }

    fn join(self: &Arc<Self>, item: Option<String>, watcher: Arc<dyn Watcher>) -> Route {
        let mut routes = lock(&self.routes);
        routes.next += 1;
        let token = routes.next;
        match &item {
            Some(id) => routes.by_id.entry(id.clone()).or_default().join(token, watcher),
            None => routes.whole.join(token, watcher),
        }
        Route {
            hub: self.clone(),
            item,
            token,
        }
    }
}

/// Joins the hub of `entry`'s member on `generation`, `watcher` following `item` (or the whole
/// member), opening the hub and its feed first when there is none. When this returns, an
/// in-process feed is open, so no change made after it is missed.
pub(crate) fn join<S: Source>(
    generation: Arc<S>,
    entry: ResourceEntry,
    item: Option<String>,
    watcher: Arc<dyn Watcher>,
) -> BoxFuture<'static, Route> {
    Box::pin(async move {
        let key = (entry.owner.clone(), entry.member);
        if let Some(hub) = lock(&generation.hubs().open).get(&key).and_then(Weak::upgrade) {
            return hub.join(item, watcher);
        }
        let feed = attach(generation.clone(), entry.clone()).await;
        // Another watcher may have opened it while this one attached: join that one.
        let mut open = lock(&generation.hubs().open);
        if let Some(hub) = open.get(&key).and_then(Weak::upgrade) {
            return hub.join(item, watcher);
        }
        open.retain(|_, h| h.strong_count() > 0);
        let hub = Arc::new(Hub {
            routes: Mutex::default(),
            task: Mutex::new(None),
        });
        open.insert(key, Arc::downgrade(&hub));
        drop(open);
        let route = hub.join(item, watcher);
        let task = tokio::spawn(feed_loop(Arc::downgrade(&hub), feed, generation, entry));
        *lock(&hub.task) = Some(task);
        route
    })
}

/// Reads the feed into the hub's routes; over a dialled link, a feed that ends (the connection
/// dropped) is re-attached on a fresh dial. Ends with the hub.
async fn feed_loop<S: Source>(
    hub: Weak<Hub>,
    mut first: Option<ChangeStream>,
    generation: Arc<S>,
    entry: ResourceEntry,
) {
    loop {
        let feed = match first.take() {
            Some(feed) => Some(feed),
            None => attach(generation.clone(), entry.clone()).await,
        };
        if let Some(mut changes) = feed {
            while let Some(change) = changes.next().await {
                let Some(live) = hub.upgrade() else { return };
                live.route(&change);
                drop(live);
                match gather(&hub, &mut changes).await {
                    Gathered::Quiet => {}
                    Gathered::FeedEnded => break,
                    Gathered::HubGone => return,
                }
            }
        }
        if !generation.link().redials() || hub.strong_count() == 0 {
            return;
        }
        tokio::time::sleep(REATTACH).await;
    }
}

/// After a change woke the hub, routes what follows it in rounds [`GATHER`] apart while
/// changes come, each quiet round doubling the wait (up to [`GATHER_MAX`]), and goes back to
/// waiting after [`LINGER`] without one. A burst of writes then wakes the hub once at most, not
/// once a write, and the hub reads the feed after the writer, not beside it.
async fn gather(hub: &Weak<Hub>, changes: &mut ChangeStream) -> Gathered {
    let mut wait = GATHER;
    let mut quiet = Duration::ZERO;
    loop {
        tokio::time::sleep(wait).await;
        // Held for the round only: a hub whose last route left meanwhile drops with it, and
        // its `Drop` ends this task at the next wait.
        let Some(live) = hub.upgrade() else {
            return Gathered::HubGone;
        };
        let mut routed = false;
        // What is ready now; a change that arrives meanwhile is read in this round too.
        loop {
            match changes.next().now_or_never() {
                Some(Some(change)) => {
                    live.route(&change);
                    routed = true;
                }
                Some(None) => return Gathered::FeedEnded,
                None => break,
            }
        }
        if routed {
            (wait, quiet) = (GATHER, Duration::ZERO);
        } else {
            quiet += wait;
            if quiet >= LINGER {
                return Gathered::Quiet;
            }
            wait = (wait * 2).min(GATHER_MAX);
        }
    }
}

/// How a round of [`gather`] ended.
enum Gathered {
    /// Nothing came in a whole round: wait for the next change.
    Quiet,
    /// The feed ended (a dialled connection dropped).
    FeedEnded,
    /// The hub's last route left.
    HubGone,
}

/// Opens the member's feed on the generation's link.
async fn attach<S: Source>(generation: Arc<S>, entry: ResourceEntry) -> Option<ChangeStream> {
    let lease = generation.link().lease().await.ok()?;
    let dispatch = lease.bundle.dispatch_for(entry.owner.as_deref()).ok()?;
    match dispatch.watch_touched(entry.member).await {
        Ok(changes) => Some(changes),
        Err(f) => {
            generation.link().after(&lease, f).await;
            None
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::{AtomicUsize, Ordering};

    /// Counts its pokes; [`Count::sent`] stands for the window that sends them.
    #[derive(Default)]
    struct Count(AtomicUsize, std::sync::OnceLock<Arc<Raised>>);

    impl Watcher for Count {
        fn poke(&self) {
            self.0.fetch_add(1, Ordering::SeqCst);
        }

        fn routed(&self, raised: Arc<Raised>) {
            self.1.set(raised).ok().unwrap();
        }
    }

    impl Count {
        fn sent(&self) {
            self.1.get().unwrap().lower();
        }

        fn pokes(&self) -> usize {
            self.0.load(Ordering::SeqCst)
        }
    }

    /// A feed to send changes into, as a member's feed would carry them.
    struct Feed(futures::channel::mpsc::UnboundedSender<Change>);

    impl Feed {
        fn open() -> (Feed, ChangeStream) {
            let (tx, rx) = futures::channel::mpsc::unbounded();
            (Feed(tx), rx.boxed())
        }

        fn send(&self, change: Change) {
            self.0.unbounded_send(change).unwrap();
        }

        fn upsert(&self, id: &str) {
            self.send(Change::Upserted { id: id.to_owned() });
        }
    }

    /// A hub with one watcher of item `a` and one of item `b`.
    fn hub() -> (Arc<Hub>, Arc<Count>, Arc<Count>, [Route; 2]) {
        let hub = Arc::new(Hub {
            routes: Mutex::default(),
            task: Mutex::new(None),
        });
        let (a, b) = (Arc::new(Count::default()), Arc::new(Count::default()));
        let routes = [
            hub.join(Some("a".into()), a.clone()),
            hub.join(Some("b".into()), b.clone()),
        ];
        (hub, a, b, routes)
    }

    #[tokio::test]
    async fn a_burst_after_the_first_change_is_routed_whole_in_the_gather() {
        let (hub, a, b, _routes) = hub();
        let (feed, mut changes) = Feed::open();
        feed.upsert("a");
        let first = changes.next().await.unwrap();
        hub.route(&first);
        // The rest of the burst comes while the hub gathers: none of it is lost.
        for _ in 0..3 {
            feed.upsert("b");
        }
        let gathered = gather(&Arc::downgrade(&hub), &mut changes).await;
        assert!(matches!(gathered, Gathered::Quiet));
        assert_eq!(a.pokes(), 1);
        // `b` was poked once: it has not sent since, so its later changes need no poke.
        assert_eq!(b.pokes(), 1);
        // A lag may have hidden any item's change: everyone who sent since hears of it.
        b.sent();
        feed.send(Change::Lagged(9));
        assert!(matches!(
            gather(&Arc::downgrade(&hub), &mut changes).await,
            Gathered::Quiet
        ));
        assert_eq!((a.pokes(), b.pokes()), (1, 2));
    }

    #[test]
    fn a_raised_route_is_poked_again_once_a_watcher_sent_or_another_joined() {
        let (hub, a, _b, _routes) = hub();
        let change = Change::Upserted { id: "a".into() };
        hub.route(&change);
        hub.route(&change);
        assert_eq!(a.pokes(), 1, "raised: the second change finds it poked");
        a.sent();
        hub.route(&change);
        assert_eq!(a.pokes(), 2, "lowered by the send: poked again");
        // A newcomer was never poked: the route's next change pokes everyone again.
        let newcomer = Arc::new(Count::default());
        let _route = hub.join(Some("a".into()), newcomer.clone());
        hub.route(&change);
        assert_eq!((a.pokes(), newcomer.pokes()), (3, 1));
    }

    #[tokio::test]
    async fn a_gather_tells_an_ended_feed_and_a_gone_hub() {
        let (hub, _a, b, routes) = hub();
        let (feed, mut changes) = Feed::open();
        feed.upsert("b");
        drop(feed);
        let ended = gather(&Arc::downgrade(&hub), &mut changes).await;
        assert!(matches!(ended, Gathered::FeedEnded));
        // What came before the end was still routed.
        assert_eq!(b.pokes(), 1);

        let (feed, mut changes) = Feed::open();
        let weak = Arc::downgrade(&hub);
        drop(routes);
        drop(hub);
        feed.upsert("b");
        assert!(matches!(gather(&weak, &mut changes).await, Gathered::HubGone));
    }
}
