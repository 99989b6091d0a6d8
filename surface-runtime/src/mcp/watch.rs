//! One watched URI: a [`Watch`] owns what it follows (the URI resolved on one generation) and
//! the [`Outbox`] its `updated` notifications leave by. The member's feed itself is read once
//! per generation by its hub (`hub.rs`), which pokes a watch only when its item (or, for a
//! whole member, anything) changed.
//!
//! An outbox serves every URI of one session (legacy subscriptions) or of one listen stream,
//! with one task: a URI's first change since its last `updated` queues it, the first URI queued
//! opens a window of [`DEBOUNCE`], and at its end every URI queued gets one `updated`. A
//! session watching a hundred URIs of a busy collection so wakes one task and one timer per
//! window, not a hundred. A legacy HTTP session's window leaves as one chunk on its `GET`
//! stream when one is attached (`standalone.rs`), and otherwise through rmcp.

use super::generation::Generation;
use super::hub::{self, Raised, Route, Watcher};
use super::resources::ResourceEntry;
use super::standalone::{QuotedUri, StandaloneStream, updated_events};
use crate::sync::lock;
use futures::StreamExt;
use futures::future::BoxFuture;
use rmcp::model::ResourceUpdatedNotificationParam;
use rmcp::service::SubscriptionSink;
use rmcp::{Peer, RoleServer};
use std::sync::atomic::{AtomicBool, Ordering, fence};
use std::sync::{Arc, Mutex, OnceLock, Weak};
use std::time::Duration;
use tokio::sync::Notify;
use tokio::task::JoinHandle;

/// How long changes to one URI are gathered into one `updated` notification.
pub(crate) const DEBOUNCE: Duration = Duration::from_millis(200);

/// How many of a window's `updated` notifications are on their way at once. Sent one at a
/// time, each reached the session's stream alone and cost its connection a write (and its
/// client a read); several on their way reach it together and leave in one write. Bounded so
/// that one window does not fill the session's queue to its peer (rmcp's holds 64).
const IN_FLIGHT: usize = 16;

/// Where one session's (or one listen's) notifications go.
pub(crate) enum Notifier {
    /// A legacy `resources/subscribe`: notifications onto the session's standalone stream
    /// when the HTTP face attached one (`standalone.rs`), else to the session's peer.
    Legacy(Peer<RoleServer>, Arc<StandaloneStream>),
    /// A 2026-07-28 `subscriptions/listen` stream.
    Listen(SubscriptionSink),
}

impl Notifier {
    /// Sends one window's `updated` for `due` onto the session's standalone stream, if one is
    /// attached and takes them; false when they must go another way.
    async fn onto_standalone(&self, due: &[Arc<Changed>]) -> bool {
        let Notifier::Legacy(_, standalone) = self else {
            return false;
        };
        // Not queued, the chunk is not lost: its URIs go through rmcp.
        standalone
            .send(|| updated_events(due.iter().map(|changed| (changed.uri.as_str(), &changed.quoted))))
            .await
    }

    /// Sends `updated`; false when the channel is gone for good.
    async fn updated(&self, uri: &str) -> bool {
        match self {
            Notifier::Legacy(peer, _) => peer
                .notify_resource_updated(ResourceUpdatedNotificationParam::new(uri.to_owned()))
                .await
                .is_ok(),
            Notifier::Listen(sink) => sink.notify_resource_updated(uri.to_owned()).await.is_ok(),
        }
    }
}

/// What a watch follows: one URI, resolved on one generation to a member (and an item id).
#[derive(Clone)]
pub(crate) struct Target {
    pub(crate) uri: String,
    pub(crate) generation: Arc<Generation>,
    pub(crate) entry: ResourceEntry,
    pub(crate) item: Option<String>,
}

impl Target {
    /// `uri` on `generation`, if it serves it.
    pub(crate) fn resolve(generation: &Arc<Generation>, uri: &str) -> Option<Target> {
        let (entry, item) = generation.resolve_uri(uri)?;
        Some(Target {
            uri: uri.to_owned(),
            generation: generation.clone(),
            entry,
            item,
        })
    }

    /// Joins the hub of the member's feed on the generation (opening it when this is its first
    /// watcher), `changed` marked at each change. An owned future, so that it can be started
    /// before a listen is acknowledged and finished after (see [`Opening`]).
    fn join(&self, changed: &Arc<Changed>) -> BoxFuture<'static, Route> {
        let watcher: Arc<dyn Watcher> = changed.clone();
        hub::join(
            self.generation.clone(),
            self.entry.clone(),
            self.item.clone(),
            watcher,
        )
    }
}

/// Where the `updated` notifications of one session's (or one listen's) watches leave: one
/// task gathering each window's changed URIs. Dropping it (with the last watch and the
/// session's own handle) ends the task.
pub(crate) struct Outbox {
    queue: Arc<Queue>,
    task: JoinHandle<()>,
}

impl Drop for Outbox {
    fn drop(&mut self) {
        self.task.abort();
    }
}

impl Outbox {
    /// An outbox sending to `notifier`, its task started.
    pub(crate) fn new(notifier: Notifier) -> Arc<Outbox> {
        let queue = Arc::new(Queue::default());
        let task = tokio::spawn(deliver(queue.clone(), notifier));
        Arc::new(Outbox { queue, task })
    }
}

/// The URIs changed in the open window. Bounded by the outbox's watches: a URI is queued only
/// when its `changed` flag goes up, and queued again only after a window took it down.
#[derive(Default)]
struct Queue {
    changed: Mutex<Vec<Arc<Changed>>>,
    opened: Notify,
}

impl Queue {
    fn push(&self, changed: Arc<Changed>) {
        let mut queued = lock(&self.changed);
        let first = queued.is_empty();
        queued.push(changed);
        drop(queued);
        if first {
            // Stored as a permit when the task is not waiting yet: the window still opens.
            self.opened.notify_one();
        }
    }
}

/// Sends one `updated` per window for each URI changed in it, until the notifier is gone.
async fn deliver(queue: Arc<Queue>, notifier: Notifier) {
    loop {
        queue.opened.notified().await;
        // Gather what arrives within the window into one notification per URI.
        tokio::time::sleep(DEBOUNCE).await;
        let window = std::mem::take(&mut *lock(&queue.changed));
        // Lowered as each is sent, so a change from then on is sent in the next window; a URI
        // queued twice (see `Changed::attach`) finds it lowered and is skipped.
        let due: Vec<Arc<Changed>> = window
            .into_iter()
            .filter(|changed| !changed.ended.load(Ordering::Acquire) && changed.lower())
            .collect();
        if due.is_empty() || notifier.onto_standalone(&due).await {
            continue;
        }
        let mut sent = std::pin::pin!(
            futures::stream::iter(due)
                .map(|changed| {
                    let notifier = &notifier;
                    async move { notifier.updated(&changed.uri).await }
                })
                .buffer_unordered(IN_FLIGHT)
        );
        while let Some(delivered) = sent.next().await {
            if !delivered {
                return;
            }
        }
    }
}

/// One watched URI's mark: raised by the hub at a change, lowered by the window that sends
/// its `updated`.
struct Changed {
    uri: String,
    /// `uri` escaped for a standalone stream's chunks.
    quoted: QuotedUri,
    flag: AtomicBool,
    /// Its watch is gone: a window that still holds it sends nothing for it.
    ended: AtomicBool,
    /// Its outbox's queue, once the watch runs (a listen's feeds open before it has one).
    queue: OnceLock<Weak<Queue>>,
    /// Its route's mark in the hub, lowered with `flag`.
    raised: OnceLock<Arc<Raised>>,
    me: Weak<Changed>,
}

impl Watcher for Changed {
    fn poke(&self) {
        // Most pokes find the flag up (a busy item is changed many times in one window): a
        // read, unlike the swap, does not take the flag's cache line from the core that reads
        // it next.
        if self.flag.load(Ordering::SeqCst) {
            return;
        }
        if !self.flag.swap(true, Ordering::SeqCst) {
            // Pairs with the fence in `attach`: one of the two sees the other and queues it.
            fence(Ordering::SeqCst);
            self.enqueue();
        }
    }

    fn routed(&self, raised: Arc<Raised>) {
        // A watch joins one route, once.
        let _ = self.raised.set(raised);
    }
}

impl Changed {
    fn new(uri: &str) -> Arc<Changed> {
        Arc::new_cyclic(|me| Changed {
            uri: uri.to_owned(),
            quoted: QuotedUri::default(),
            flag: AtomicBool::new(false),
            ended: AtomicBool::new(false),
            queue: OnceLock::new(),
            raised: OnceLock::new(),
            me: me.clone(),
        })
    }

    /// Takes the mark down as its window sends it; false when it was not up (queued twice).
    fn lower(&self) -> bool {
        let was_up = self.flag.swap(false, Ordering::SeqCst);
        // After the flag: the hub, finding its route lowered, pokes this watch again.
        if was_up && let Some(raised) = self.raised.get() {
            raised.lower();
        }
        was_up
    }

    fn enqueue(&self) {
        let queue = self.queue.get().and_then(Weak::upgrade);
        if let (Some(queue), Some(me)) = (queue, self.me.upgrade()) {
            queue.push(me);
        }
    }

    /// Starts sending through `outbox`; a change made before (a listen's feed opens before it
    /// is acknowledged) is queued now.
    fn attach(&self, outbox: &Outbox) {
        let _ = self.queue.set(Arc::downgrade(&outbox.queue));
        fence(Ordering::SeqCst);
        if self.flag.load(Ordering::SeqCst) {
            self.enqueue();
        }
    }
}

/// One subscribed URI; dropping it leaves the member's hub and sends nothing more for it.
pub(crate) struct Watch {
    target: Target,
    outbox: Arc<Outbox>,
    changed: Arc<Changed>,
    _route: Route,
    /// Counted in the subscriptions gauge while it lives.
    _watched: super::observe::Gauged,
}

impl Drop for Watch {
    fn drop(&mut self) {
        self.changed.ended.store(true, Ordering::Release);
    }
}

impl Watch {
    /// Joins the member's feed (before answering, so no change made after the subscription is
    /// acknowledged can be missed); its `updated` notifications leave by `outbox`.
    pub(crate) async fn open(target: Target, outbox: Arc<Outbox>) -> Watch {
        let changed = Changed::new(&target.uri);
        let route = target.join(&changed).await;
        Watch::run(route, changed, target, outbox)
    }

    fn run(route: Route, changed: Arc<Changed>, target: Target, outbox: Arc<Outbox>) -> Watch {
        changed.attach(&outbox);
        Watch {
            target,
            outbox,
            changed,
            _route: route,
            _watched: super::observe::Gauged::watch(),
        }
    }

    /// Sends this URI's `updated` in the outbox's next window, as if its item changed.
    pub(crate) fn reannounce(&self) {
        self.changed.poke();
    }

    /// This watch moved onto `next`: re-opened there on the same outbox, or ended (None) when
    /// `next` no longer serves its URI.
    pub(crate) async fn follow(self, next: &Arc<Generation>) -> Option<Watch> {
        let (uri, outbox) = (self.target.uri.clone(), self.outbox.clone());
        drop(self);
        let target = Target::resolve(next, &uri)?;
        Some(Watch::open(target, outbox).await)
    }
}

/// A watch whose feed was started before rmcp acknowledged its listen, to be finished after.
pub(crate) struct Opening {
    target: Target,
    changed: Arc<Changed>,
    started: Started,
}

enum Started {
    Open(Route),
    Opening(BoxFuture<'static, Route>),
}

impl Opening {
    /// Polls the join once, now: an in-process feed is open when this returns, and a wire
    /// watch has sent its request; the rest is awaited by [`Opening::finish`].
    pub(crate) fn start(target: Target) -> Opening {
        let changed = Changed::new(&target.uri);
        let mut joining = target.join(&changed);
        let mut cx = std::task::Context::from_waker(futures::task::noop_waker_ref());
        let started = match joining.as_mut().poll(&mut cx) {
            std::task::Poll::Ready(route) => Started::Open(route),
            std::task::Poll::Pending => Started::Opening(joining),
        };
        Opening {
            target,
            changed,
            started,
        }
    }

    /// The URI this watch is for.
    pub(crate) fn uri(&self) -> &str {
        &self.target.uri
    }

    /// The watch, its feed attached, sending through `outbox`.
    pub(crate) async fn finish(self, outbox: Arc<Outbox>) -> Watch {
        let route = match self.started {
            Started::Open(route) => route,
            Started::Opening(joining) => joining.await,
        };
        Watch::run(route, self.changed, self.target, outbox)
    }
}
