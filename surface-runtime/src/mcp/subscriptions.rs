//! One session's subscriptions: legacy `resources/subscribe` URIs and 2026-07-28
//! `subscriptions/listen` streams, each URI a [`Watch`], all under the session's limit, and
//! moved whole onto each new generation. A listen's `taskIds` hear `notifications/tasks`
//! (tasks.rs): rmcp's filter type has no such field, so the transport reads it off the raw
//! request ([`ListenTaskIds`], listen_ids.rs) and hands it on in the request's extensions.

use super::cancel::unless_cancelled;
use super::generation::Generation;
use super::listen_ids::ListenTaskIds;
use super::requests::Serving;
use super::results::branded;
use super::standalone::StandaloneStream;
use super::watch::{Notifier, Opening, Outbox, Target, Watch};
use crate::sync::lock;
use rmcp::model::{
    DetailedTask, GetMeta, Notification, RequestId, ServerNotification, SubscriptionFilter,
    TaskStatusNotificationParams,
};
use rmcp::service::{SubscriptionContext, SubscriptionSink};
use rmcp::{ErrorData, Peer, RoleServer};
use std::collections::{HashMap, HashSet};
use std::sync::{Arc, Mutex, OnceLock};

/// The ids noted on the listen `context` serves: by the stdio transport in the request's
/// extensions, by the HTTP one in its HTTP parts.
fn noted_task_ids(context: &SubscriptionContext) -> Vec<String> {
    let extensions = &context.request_context().extensions;
    let noted = extensions.get::<ListenTaskIds>();
    #[cfg(feature = "http")]
    let noted = noted.or_else(|| {
        extensions
            .get::<hyper::http::request::Parts>()
            .and_then(|parts| parts.extensions.get::<ListenTaskIds>())
    });
    noted.map(|ids| ids.0.clone()).unwrap_or_default()
}

/// One open listen stream and the URIs it watches.
struct Listen {
    sink: SubscriptionSink,
    watches: HashMap<String, Watch>,
    /// How many URIs it counts while its feeds open (`watches` still empty).
    reserved: usize,
}

/// A listen's place among the session's listens, let go however its request ends: answered,
/// refused, or its future dropped mid-way (a cancelled request).
struct Registered<'a> {
    listens: &'a Mutex<HashMap<RequestId, Listen>>,
    id: RequestId,
}

impl Drop for Registered<'_> {
    fn drop(&mut self) {
        lock(self.listens).remove(&self.id);
    }
}

/// Feeds started for a listen before rmcp acknowledged it, by the task serving that listen,
/// with how many distinct URIs that listen names (counted against the limit until the listen
/// itself is).
type Prestarted = Vec<(Option<tokio::task::Id>, usize, Vec<Opening>)>;

/// Every subscription of one session.
#[derive(Default)]
pub(crate) struct Subscriptions {
    legacy: Mutex<HashMap<String, Watch>>,
    /// Where the legacy subscriptions' `updated` notifications leave, from the first one on.
    legacy_outbox: OnceLock<Arc<Outbox>>,
    /// The session's standalone `GET` stream, when the HTTP face attached one.
    standalone: Arc<StandaloneStream>,
    listens: Mutex<HashMap<RequestId, Listen>>,
    /// Feeds started by `accepted_subscription_filter`, by the task of the listen request
    /// (rmcp calls the filter and then `listen` in the one task serving that request).
    prestarted: Mutex<Prestarted>,
}

impl Subscriptions {
    /// URIs watched now, over legacy subscriptions, every open listen, and every listen
    /// acknowledged whose feeds are still opening: a client may send its next listen as soon
    /// as it sees the acknowledgement, and that one must count what this one holds.
    fn watched(&self) -> usize {
        let legacy = lock(&self.legacy).len();
        let listens: usize = lock(&self.listens)
            .values()
            .map(|l| l.watches.len().max(l.reserved))
            .sum();
        let accepted: usize = lock(&self.prestarted).iter().map(|(_, n, _)| n).sum();
        legacy + listens + accepted
    }

    /// Refuses `more` URIs when they would take the session past `limit`.
    fn admit(&self, more: usize, limit: usize) -> Result<(), ErrorData> {
        if self.watched() + more > limit {
            return Err(too_many(limit));
        }
        Ok(())
    }

    /// Moves every watch onto `generation` (the rest end); answers the open listen streams,
    /// to be told the lists changed.
    pub(crate) async fn follow(&self, generation: &Arc<Generation>) -> Vec<SubscriptionSink> {
        let legacy = std::mem::take(&mut *lock(&self.legacy));
        let legacy = follow_all(legacy, generation).await;
        lock(&self.legacy).extend(legacy);
        let ids: Vec<RequestId> = lock(&self.listens).keys().cloned().collect();
        let mut sinks = Vec::new();
        for id in ids {
            let Some(old) = lock(&self.listens)
                .get_mut(&id)
                .map(|l| std::mem::take(&mut l.watches))
            else {
                continue;
            };
            let watches = follow_all(old, generation).await;
            if let Some(listen) = lock(&self.listens).get_mut(&id) {
                listen.watches = watches;
                sinks.push(listen.sink.clone());
            }
        }
        sinks
    }

    /// Takes the feeds `accepted_subscription_filter` started in this task, whatever the
    /// fate of their URIs: a refused listen drops them, so no feed outlives its request.
    fn claim_prestarted(&self) -> Vec<Opening> {
        let task = tokio::task::try_id();
        let mut batches = lock(&self.prestarted);
        let mine = batches.iter().position(|(t, _, _)| task.is_some() && *t == task);
        mine.map(|i| batches.remove(i).2).unwrap_or_default()
    }
}

/// Re-opens on `generation` every watch it can still serve; the rest end.
async fn follow_all(old: HashMap<String, Watch>, generation: &Arc<Generation>) -> HashMap<String, Watch> {
    let mut watches = HashMap::new();
    for (uri, watch) in old {
        if let Some(watch) = watch.follow(generation).await {
            watches.insert(uri, watch);
        }
    }
    watches
}

fn too_many(limit: usize) -> ErrorData {
    ErrorData::invalid_request(
        branded(&format!(
            "this session already watches {limit} URIs, the most it may (the server's limit on subscriptions per session) — unsubscribe from some first"
        )),
        Some(serde_json::json!({ "limit": limit })),
    )
}

/// How many different URIs a listen names (a URI named twice is watched once).
fn distinct_uris(filter: &SubscriptionFilter) -> usize {
    let uris = filter.resource_subscriptions.iter().flatten();
    uris.collect::<HashSet<_>>().len()
}

impl Subscriptions {
    /// Refuses a listen that would take this session past its subscription limit. Called
    /// before rmcp acknowledges the listen (`Session::handle_request`): a refusal after the
    /// acknowledgement reaches the client as the end of a stream it was told had opened, or
    /// (when the error answer and the stream's end race) as no error at all.
    pub(crate) fn admit_listen(&self, filter: &SubscriptionFilter, limit: usize) -> Result<(), ErrorData> {
        self.admit(distinct_uris(filter), limit)
    }

    /// `resources/subscribe` (legacy): one URI, answered once its feed is open.
    pub(crate) async fn subscribe(
        &self,
        serving: &Serving<'_>,
        uri: String,
        peer: Peer<RoleServer>,
    ) -> Result<(), ErrorData> {
        let limit = serving.shared.settings.max_subscriptions;
        let held = || lock(&self.legacy).contains_key(&uri);
        if !held() {
            self.admit(1, limit)?;
        }
        let target = serving.resolve_watchable(&uri).await?;
        let outbox = self
            .legacy_outbox
            .get_or_init(|| Outbox::new(Notifier::Legacy(peer, self.standalone.clone())))
            .clone();
        let watch = Watch::open(target, outbox).await;
        // Checked again: subscriptions answered meanwhile count too.
        if !held() {
            self.admit(1, limit)?;
        }
        lock(&self.legacy).insert(uri, watch);
        Ok(())
    }

    /// The session's standalone stream, which its legacy `updated` notifications take when
    /// the HTTP face attached one.
    #[cfg_attr(not(feature = "http"), allow(dead_code))] // attached only by the HTTP face
    pub(crate) fn standalone(&self) -> &StandaloneStream {
        &self.standalone
    }

    /// Sends every legacy subscription an `updated` in its next window: a stream that ended
    /// may have taken some with it (`standalone.rs`).
    #[cfg_attr(not(feature = "http"), allow(dead_code))] // called only by the HTTP face
    pub(crate) fn reannounce(&self) {
        for watch in lock(&self.legacy).values() {
            watch.reannounce();
        }
    }

    /// `resources/unsubscribe` (legacy).
    pub(crate) fn unsubscribe(&self, uri: &str) {
        lock(&self.legacy).remove(uri);
    }

    /// Opens the feeds of a listen's URIs before rmcp acknowledges it: a change made after
    /// the client saw the acknowledgement must not be missed. Accepts the filter whole but for
    /// URIs outside the connection's scopes (stdio given scopes; HTTP refuses those with 403
    /// before), which do not exist for it.
    pub(crate) fn accept_filter(
        &self,
        serving: &Serving<'_>,
        requested: &SubscriptionFilter,
    ) -> SubscriptionFilter {
        let generation = serving.shared.current();
        let mut accepted = requested.clone();
        if let Some(uris) = &mut accepted.resource_subscriptions {
            uris.retain(|uri| generation.reaches_uri(uri, serving.principal.map(|p| &**p)));
        }
        let batch: Vec<Opening> = accepted
            .resource_subscriptions
            .iter()
            .flatten()
            .filter_map(|uri| Target::resolve(&generation, uri).map(Opening::start))
            .collect();
        let uris = distinct_uris(&accepted);
        lock(&self.prestarted).push((tokio::task::try_id(), uris, batch));
        accepted
    }

    /// One `subscriptions/listen` stream, from its acknowledgement until it is cancelled or
    /// the server closes.
    pub(crate) async fn listen(
        &self,
        serving: &Serving<'_>,
        context: SubscriptionContext,
    ) -> Result<(), ErrorData> {
        let sink = context.sink().clone();
        let id = sink.id().clone();
        let wanted: Vec<&String> = context
            .accepted()
            .resource_subscriptions
            .iter()
            .flatten()
            .collect();
        let limit = serving.shared.settings.max_subscriptions;
        let listens = &self.listens;
        // Counted from here, its URIs reserved while its feeds open, then its accepted batch
        // let go: never uncounted in between.
        let reserved = distinct_uris(context.accepted());
        let placeholder = Listen {
            sink: sink.clone(),
            watches: HashMap::new(),
            reserved,
        };
        lock(listens).insert(id.clone(), placeholder);
        let _registered = Registered {
            listens,
            id: id.clone(),
        };
        let mut prestarted = self.claim_prestarted();
        // Judged before the acknowledgement too (`Session::handle_request`); judged again here
        // (this listen included) for the listens and subscriptions answered meanwhile.
        if self.watched() > limit {
            return Err(too_many(limit));
        }
        let outbox = Outbox::new(Notifier::Listen(sink.clone()));
        let opening = async {
            let mut watches = HashMap::new();
            for uri in wanted {
                let found = prestarted.iter().position(|o| o.uri() == uri);
                let watch = match found {
                    Some(i) => {
                        let opening = prestarted.swap_remove(i);
                        serving.resolve_watchable(uri).await?;
                        opening.finish(outbox.clone()).await
                    }
                    None => Watch::open(serving.resolve_watchable(uri).await?, outbox.clone()).await,
                };
                watches.insert(uri.clone(), watch);
            }
            Ok::<_, ErrorData>(watches)
        };
        // Cancelled while its feeds open (a cold dial can take seconds), the listen ends there
        // and lets go of its place at once, not when the feeds are open.
        let Some(watches) = unless_cancelled(&context.request_context().ct, opening).await else {
            return Ok(());
        };
        let watches = watches?;
        let (feed, mut tasks) = tokio::sync::mpsc::channel(super::tasks::NOTIFY_BUFFER);
        let task_ids = noted_task_ids(&context);
        if !task_ids.is_empty() {
            let caller = serving.principal(&context.request_context().extensions);
            serving.shared.tasks.watch(&task_ids, caller.as_deref(), &feed);
        }
        // Only the watched tasks hold the feed: with none left, `recv` ends and so does that arm.
        drop(feed);
        let peer = context.request_context().peer.clone();
        if let Some(listen) = lock(listens).get_mut(&id) {
            listen.watches = watches;
            listen.reserved = 0;
        }
        loop {
            tokio::select! {
                _ = context.cancelled() => break,
                _ = serving.shared.closed.cancelled() => break,
                // A graceful shutdown: rmcp answers the listen with its final result.
                _ = serving.draining.cancelled() => break,
                Some(task) = tasks.recv() => {
                    let _ = peer.send_notification(task_notification(task, &id)).await;
                }
            }
        }
        Ok(())
    }
}

/// `notifications/tasks` for `task` on the listen stream `id` (rmcp's sink refuses to send it:
/// the same notification, marked with the subscription's id as the sink marks its own).
fn task_notification(task: DetailedTask, id: &RequestId) -> ServerNotification {
    let mut notification = ServerNotification::TaskStatusNotification(Notification::new(
        TaskStatusNotificationParams::new(task),
    ));
    notification.get_meta_mut().set_subscription_id(id.clone());
    notification
}
