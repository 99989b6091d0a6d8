//! One watched URI: a [`Watch`] owns what it follows (the URI resolved on one generation) and
//! where its `updated` notifications go, and runs the debounced task between the two.

use super::generation::{Generation, ResourceEntry};
use crate::member::{Change, ChangeStream};
use futures::future::BoxFuture;
use futures::{FutureExt, StreamExt};
use rmcp::model::ResourceUpdatedNotificationParam;
use rmcp::service::SubscriptionSink;
use rmcp::{Peer, RoleServer};
use std::sync::Arc;
use std::time::Duration;
use tokio::task::JoinHandle;

/// How long changes to one URI are gathered into one `updated` notification.
pub(crate) const DEBOUNCE: Duration = Duration::from_millis(200);

/// How long a dropped watch waits before it dials again.
const REATTACH: Duration = Duration::from_millis(250);

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

    /// Opens the member's feed on the generation's link. An owned future, so that it can be
    /// started before a listen is acknowledged and finished after (see [`Opening`]).
    fn attach(&self) -> BoxFuture<'static, Option<ChangeStream>> {
        let (generation, entry) = (self.generation.clone(), self.entry.clone());
        Box::pin(async move {
            let lease = generation.link.lease().await.ok()?;
            let dispatch = lease.bundle.dispatch_for(entry.owner.as_deref()).ok()?;
            match dispatch.watch(entry.member).await {
                Ok(changes) => Some(changes),
                Err(f) => {
                    generation.link.after(&lease, f).await;
                    None
                }
            }
        })
    }
}

/// One subscribed URI and the task that watches it; dropping it ends the task.
pub(crate) struct Watch {
    target: Target,
    notifier: Notifier,
    task: JoinHandle<()>,
}

impl Drop for Watch {
    fn drop(&mut self) {
        self.task.abort();
    }
}

impl Watch {
    /// Opens the feed (before answering, so no change made after the subscription is
    /// acknowledged can be missed), then forwards it as debounced `updated` notifications.
    pub(crate) async fn open(target: Target, notifier: Notifier) -> Watch {
        let first = target.attach().await;
        Watch::run(first, target, notifier)
    }

    /// Forwards `first` (an attached feed, if attaching worked). Over a dialled link, a feed
    /// that ends (the connection dropped) is re-attached on a fresh dial.
    fn run(mut first: Option<ChangeStream>, target: Target, notifier: Notifier) -> Watch {
        let task = tokio::spawn({
            let (target, notifier) = (target.clone(), notifier.clone());
            async move {
                loop {
                    let feed = match first.take() {
                        Some(feed) => Some(feed),
                        None => target.attach().await,
                    };
                    if let Some(changes) = feed
                        && !forward(changes, &target, &notifier).await
                    {
                        return;
                    }
                    if !target.generation.link.redials() {
                        return;
                    }
                    tokio::time::sleep(REATTACH).await;
                }
            }
        });
        Watch {
            target,
            notifier,
            task,
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
    Open(Option<ChangeStream>),
    Opening(BoxFuture<'static, Option<ChangeStream>>),
}

impl Opening {
    /// Polls the attach once, now: an in-process feed is open when this returns, and a wire
    /// watch has sent its request; the rest is awaited by [`Opening::finish`].
    pub(crate) fn start(target: Target) -> Opening {
        let mut attaching = target.attach();
        let mut cx = std::task::Context::from_waker(futures::task::noop_waker_ref());
        let started = match attaching.as_mut().poll(&mut cx) {
            std::task::Poll::Ready(feed) => Started::Open(feed),
            std::task::Poll::Pending => Started::Opening(attaching),
        };
        Opening { target, started }
    }

    /// The URI this watch is for.
    pub(crate) fn uri(&self) -> &str {
        &self.target.uri
    }

    /// The watch, its feed attached.
    pub(crate) async fn finish(self, notifier: Notifier) -> Watch {
        let first = match self.started {
            Started::Open(feed) => feed,
            Started::Opening(attaching) => attaching.await,
        };
        Watch::run(first, self.target, notifier)
    }
}

/// Sends debounced `updated` for the relevant changes until the feed ends (answers true) or
/// the host is gone (false).
async fn forward(changes: ChangeStream, target: &Target, notifier: &Notifier) -> bool {
    let item = target.item.as_deref();
    let relevant = |c: &Change| match (c, item) {
        (Change::Upserted { id } | Change::Removed { id }, Some(want)) => id == want,
        (Change::Lagged(_), _) | (_, None) => true,
        _ => false,
    };
    let mut changes = changes.filter(move |c| std::future::ready(relevant(c)));
    while changes.next().await.is_some() {
        // Gather what arrives within the window into this one notification.
        tokio::time::sleep(DEBOUNCE).await;
        while let Some(Some(_)) = changes.next().now_or_never() {}
        if !notifier.updated(&target.uri).await {
            return false;
        }
    }
    true
}
