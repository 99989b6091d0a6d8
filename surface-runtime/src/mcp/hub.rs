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

use super::clients::Clients;
use super::resources::ResourceEntry;
use crate::member::{Change, ChangeStream};
use crate::sync::lock;
use futures::StreamExt;
use futures::future::BoxFuture;
use std::collections::HashMap;
use std::sync::{Arc, Mutex, Weak};
use std::time::Duration;
use tokio::task::JoinHandle;

/// How long a dropped feed waits before it dials again.
const REATTACH: Duration = Duration::from_millis(250);

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
    by_id: HashMap<String, Vec<Routed>>,
    /// Watchers of the whole member (a cell, a stream, an event, a collection's list).
    whole: Vec<Routed>,
}

/// One route: its token (what its [`Route`] removes) and its watcher.
type Routed = (u64, Arc<dyn Watcher>);

/// What a hub tells of each change that concerns it (implemented in `watch.rs`). Called on the
/// hub's task for every such change, so it must be cheap and must not block.
pub(crate) trait Watcher: Send + Sync + 'static {
    /// Something this watcher follows changed.
    fn poke(&self);
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
        let list = match &self.item {
            Some(id) => routes.by_id.get_mut(id),
            None => Some(&mut routes.whole),
        };
        if let Some(list) = list {
            list.retain(|(t, _)| *t != self.token);
            if list.is_empty()
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
                for (_, p) in routes.by_id.get(id).into_iter().flatten() {
                    p.poke();
                }
            }
            Change::Lagged(_) => {
                for (_, p) in routes.by_id.values().flatten() {
                    p.poke();
                }
            }
            _ => {}
        }
        for (_, p) in &routes.whole {
            p.poke();
        }
    }

    fn join(self: &Arc<Self>, item: Option<String>, watcher: Arc<dyn Watcher>) -> Route {
        let mut routes = lock(&self.routes);
        routes.next += 1;
        let token = routes.next;
        match &item {
            Some(id) => routes.by_id.entry(id.clone()).or_default().push((token, watcher)),
            None => routes.whole.push((token, watcher)),
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
                let Some(hub) = hub.upgrade() else { return };
                hub.route(&change);
            }
        }
        if !generation.link().redials() || hub.strong_count() == 0 {
            return;
        }
        tokio::time::sleep(REATTACH).await;
    }
}

/// Opens the member's feed on the generation's link.
async fn attach<S: Source>(generation: Arc<S>, entry: ResourceEntry) -> Option<ChangeStream> {
    let lease = generation.link().lease().await.ok()?;
    let dispatch = lease.bundle.dispatch_for(entry.owner.as_deref()).ok()?;
    match dispatch.watch(entry.member).await {
        Ok(changes) => Some(changes),
        Err(f) => {
            generation.link().after(&lease, f).await;
            None
        }
    }
}
