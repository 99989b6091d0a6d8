//! One watched URI: a [`Watch`] owns what it follows (the URI resolved on one generation) and
//! where its `updated` notifications go, and runs the debounced task between the two. The
//! member's feed itself is read once per generation by its hub (`hub.rs`), which pokes a watch
//! only when its item (or, for a whole member, anything) changed.

use super::generation::Generation;
use super::hub::{self, Route};
use super::resources::ResourceEntry;
use futures::future::BoxFuture;
use rmcp::model::ResourceUpdatedNotificationParam;
use rmcp::service::SubscriptionSink;
use rmcp::{Peer, RoleServer};
use std::sync::Arc;
use std::time::Duration;
use tokio::task::JoinHandle;

/// How long changes to one URI are gathered into one `updated` notification.
pub(crate) const DEBOUNCE: Duration = Duration::from_millis(200);

/// Where one subscription's notifications go.
#[derive(Clone)]
pub(crate) enum Notifier {
    /// A legacy `resources/subscribe`: notifications to the session's peer.
    Legacy(Peer<RoleServer>),
    /// A 2026-07-28 `subscriptions/listen` stream.
    Listen(SubscriptionSink),
}

impl Notifier {
    /// Sends `updated`; false when the channel is gone for good.
    async fn updated(&self, uri: &str) -> bool {
        match self {
            Notifier::Legacy(peer) => peer
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
    /// watcher). An owned future, so that it can be started before a listen is acknowledged
    /// and finished after (see [`Opening`]).
    fn join(&self) -> BoxFuture<'static, Route> {
        hub::join(self.generation.clone(), self.entry.clone(), self.item.clone())
    }
}

/// One subscribed URI and the task that watches it; dropping it ends the task.
pub(crate) struct Watch {
    target: Target,
    notifier: Notifier,
    task: JoinHandle<()>,
    /// Counted in the subscriptions gauge while it lives.
    _watched: super::observe::Gauged,
}

impl Drop for Watch {
    fn drop(&mut self) {
        self.task.abort();
    }
}

impl Watch {
    /// Joins the member's feed (before answering, so no change made after the subscription is
    /// acknowledged can be missed), then sends debounced `updated` notifications.
    pub(crate) async fn open(target: Target, notifier: Notifier) -> Watch {
        let route = target.join().await;
        Watch::run(route, target, notifier)
    }

    /// Sends one `updated` per window of changes the hub routes here, until the host is gone.
    /// (Over a dialled link the hub re-attaches a dropped feed; the route stays.)
    fn run(route: Route, target: Target, notifier: Notifier) -> Watch {
        let task = tokio::spawn({
            let (uri, notifier) = (target.uri.clone(), notifier.clone());
            async move {
                loop {
                    route.poke.first().await;
                    // Gather what arrives within the window into this one notification.
                    tokio::time::sleep(DEBOUNCE).await;
                    route.poke.close_window();
                    if !notifier.updated(&uri).await {
                        return;
                    }
                }
            }
        });
        Watch {
            target,
            notifier,
            task,
            _watched: super::observe::Gauged::watch(),
        }
    }

    /// This watch moved onto `next`: re-opened there with the same notifier, or ended (None)
    /// when `next` no longer serves its URI.
    pub(crate) async fn follow(self, next: &Arc<Generation>) -> Option<Watch> {
        let (uri, notifier) = (self.target.uri.clone(), self.notifier.clone());
        drop(self);
        let target = Target::resolve(next, &uri)?;
        Some(Watch::open(target, notifier).await)
    }
}

/// A watch whose feed was started before rmcp acknowledged its listen, to be finished after.
pub(crate) struct Opening {
    target: Target,
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
        let mut joining = target.join();
        let mut cx = std::task::Context::from_waker(futures::task::noop_waker_ref());
        let started = match joining.as_mut().poll(&mut cx) {
            std::task::Poll::Ready(route) => Started::Open(route),
            std::task::Poll::Pending => Started::Opening(joining),
        };
        Opening { target, started }
    }

    /// The URI this watch is for.
    pub(crate) fn uri(&self) -> &str {
        &self.target.uri
    }

    /// The watch, its feed attached.
    pub(crate) async fn finish(self, notifier: Notifier) -> Watch {
        let route = match self.started {
            Started::Open(route) => route,
            Started::Opening(joining) => joining.await,
        };
        Watch::run(route, self.target, notifier)
    }
}
