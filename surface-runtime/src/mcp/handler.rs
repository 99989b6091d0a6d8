//! The MCP face: one rmcp `ServerHandler` per connection over shared, atomically swapped state.
//!
//! [`Shared`] holds what every session reads: the current [`Generation`] (swapped whole by a
//! reroster), the tombstones of names past rosters served, and the live sessions to notify.
//! A [`Session`] answers one connection in either protocol era (rmcp picks the era from the
//! opening request) and owns its subscriptions: legacy `resources/subscribe` and 2026-07-28
//! `subscriptions/listen` streams, each URI watched by one debounced task.

use super::generation::{self, CompositionError, Fixed, Generation, ResourceEntry, ToolTarget};
use super::link::{Lease, Link};
use super::results::{self, branded};
use crate::bundle::DialFactory;
use crate::bundle::{BundleClient, Siblings};
use crate::failure::{Failure, FailureKind};
use crate::member::Change;
use crate::member::ChangeStream;
use crate::schema;
use crate::sync::{lock, read, write};
use crate::tool::ToolOutput;
use futures::future::BoxFuture;
use futures::{FutureExt, StreamExt};
use rmcp::model::*;
use rmcp::service::{NotificationContext, RequestContext, SubscriptionContext, SubscriptionSink};
use rmcp::{ErrorData, Peer, RoleServer, ServerHandler};
use std::collections::HashMap;
use std::sync::{Arc, Mutex, RwLock, Weak};
use std::time::Duration;
use tokio::task::JoinHandle;
use tokio_util::sync::CancellationToken;

/// How long changes to one URI are gathered into one `updated` notification.
pub(crate) const DEBOUNCE: Duration = Duration::from_millis(200);

/// How many URIs one session may watch at once by default (legacy subscriptions and the URIs
/// of its open listen streams together): each costs a task and a feed.
pub const MAX_SUBSCRIPTIONS: usize = 1024;

/// The server's `instructions`: none, a fixed text, or a function read at every `initialize`
/// and every `server/discover` (an empty result is no `instructions` key).
#[derive(Clone, Default)]
pub enum Instructions {
    /// No instructions.
    #[default]
    None,
    /// A fixed text.
    Text(String),
    /// Read at every `initialize` and `server/discover`.
    Dynamic(Arc<dyn Fn() -> String + Send + Sync>),
}

impl Instructions {
    /// Instructions read from `f` each time a host asks.
    pub fn dynamic(f: impl Fn() -> String + Send + Sync + 'static) -> Self {
        Instructions::Dynamic(Arc::new(f))
    }

    fn read(&self) -> Option<String> {
        let text = match self {
            Instructions::None => return None,
            Instructions::Text(t) => t.clone(),
            Instructions::Dynamic(f) => f(),
        };
        (!text.is_empty()).then_some(text)
    }
}

impl From<&str> for Instructions {
    fn from(s: &str) -> Self {
        Instructions::Text(s.to_owned())
    }
}

impl From<String> for Instructions {
    fn from(s: String) -> Self {
        Instructions::Text(s)
    }
}

/// Produces the live clients of the bundle; re-invoked after every reroster.
pub type ClientFactory = Arc<dyn Fn() -> BundleClient + Send + Sync>;

/// How a generation gets its clients.
#[derive(Clone)]
pub(crate) enum Factory {
    /// Serve fresh: in-process clients, nothing to dial or dispose.
    Bare(ClientFactory),
    /// Bridge: dial a served surface, memoise the connection, re-dial after a drop.
    Dial(DialFactory),
}

fn link(factory: &Factory, closed: &CancellationToken) -> Link {
    match factory {
        Factory::Bare(f) => Link::Fixed(f()),
        Factory::Dial(f) => Link::dialed(f.clone(), closed.clone()),
    }
}

/// A name an earlier roster served, and the sibling that served it.
struct Tombstone {
    sibling: String,
}

pub(crate) struct Shared {
    info: ServerConfig,
    instructions: Instructions,
    fixed: Fixed,
    factory: Factory,
    generation: RwLock<Arc<Generation>>,
    reroster: tokio::sync::Mutex<()>,
    tombstones: Mutex<HashMap<String, Tombstone>>,
    sessions: Mutex<Vec<Weak<SessionState>>>,
    max_subscriptions: usize,
    pub(crate) closed: CancellationToken,
}

impl Shared {
    pub(crate) fn boot(
        identity: Implementation,
        instructions: Instructions,
        fixed: Fixed,
        siblings: Siblings,
        factory: Factory,
        max_subscriptions: usize,
    ) -> Result<Arc<Shared>, CompositionError> {
        let closed = CancellationToken::new();
        let generation = generation::compose(&fixed, siblings, || link(&factory, &closed))?;
        // Logging (deprecated by rmcp for 2026-07-28) still serves legacy sessions.
        #[allow(deprecated)]
        let capabilities = ServerCapabilities::builder()
            .enable_tools()
            .enable_tool_list_changed()
            .enable_resources()
            .enable_resources_subscribe()
            .enable_resources_list_changed()
            .enable_logging()
            .enable_completions()
            .enable_prompts()
            .enable_prompts_list_changed()
            .build();
        Ok(Arc::new(Shared {
            info: ServerConfig::new(capabilities).with_server_info(identity),
            instructions,
            fixed,
            factory,
            generation: RwLock::new(Arc::new(generation)),
            reroster: tokio::sync::Mutex::new(()),
            tombstones: Mutex::new(HashMap::new()),
            sessions: Mutex::new(Vec::new()),
            max_subscriptions,
            closed,
        }))
    }

    /// The generation every request of this moment reads, whole.
    pub(crate) fn current(&self) -> Arc<Generation> {
        read(&self.generation).clone()
    }

    pub(crate) async fn reroster(&self, siblings: Siblings) -> Result<Vec<String>, CompositionError> {
        let _one_at_a_time = self.reroster.lock().await;
        let next = Arc::new(generation::compose(&self.fixed, siblings, || {
            link(&self.factory, &self.closed)
        })?);
        let previous = std::mem::replace(&mut *write(&self.generation), next.clone());
        self.retire(&previous, &next);
        for session in self.live_sessions() {
            session.follow(&next).await;
        }
        Ok(next.sibling_keys())
    }

    /// Records a tombstone for every sibling name the previous roster served and this one
    /// does not. Ownership is recorded here, never parsed back out of a name.
    fn retire(&self, previous: &Generation, next: &Generation) {
        let now = generation::served_names(next);
        let mut tombstones = lock(&self.tombstones);
        for (name, owner) in generation::served_names(previous) {
            if let Some(sibling) = owner
                && !now.contains_key(&name)
            {
                tombstones.insert(name, Tombstone { sibling });
            }
        }
    }

    /// The refusal for a retired name, chosen at answer time.
    fn tombstone(&self, what: &str, name: &str, generation: &Generation) -> Option<String> {
        let tombstones = lock(&self.tombstones);
        let stone = tombstones.get(name).or_else(|| {
            // An item URI retires with its collection's template (`prefix{id}suffix`).
            tombstones.iter().find_map(|(t, stone)| {
                let (prefix, suffix) = t.split_once("{id}")?;
                crate::resource::match_template(prefix, suffix, name).map(|_| stone)
            })
        })?;
        let why = if generation.siblings.contains_key(&stone.sibling) {
            format!("the sibling \"{}\" no longer exposes it", stone.sibling)
        } else {
            format!(
                "the sibling \"{}\" was dropped from this rooted bundle",
                stone.sibling
            )
        };
        Some(branded(&format!(
            "{what} \"{name}\" is no longer served — {why} — re-read the list"
        )))
    }

    fn live_sessions(&self) -> Vec<Arc<SessionState>> {
        let mut sessions = lock(&self.sessions);
        sessions.retain(|s| s.strong_count() > 0);
        sessions.iter().filter_map(Weak::upgrade).collect()
    }

    /// A connection served by rmcp's own transports (Streamable HTTP), which take a
    /// `ServerHandler`.
    pub(crate) fn open_handler(self: &Arc<Self>) -> Handler {
        self.open_session().handler
    }

    /// A connection served by our transport (stdio, `serve`): the handler behind the front
    /// that refuses an over-limit listen before rmcp acknowledges it.
    pub(crate) fn open_session(self: &Arc<Self>) -> Session {
        let state = Arc::new(SessionState::default());
        let mut sessions = lock(&self.sessions);
        // A stateless HTTP request opens a session of its own: drop the dead ones before the
        // list would grow, or each request leaves its emptied allocation behind a `Weak`.
        if sessions.len() == sessions.capacity() {
            sessions.retain(|s| s.strong_count() > 0);
        }
        sessions.push(Arc::downgrade(&state));
        drop(sessions);
        Session {
            handler: Handler {
                shared: self.clone(),
                state,
            },
        }
    }
}

/// Where one subscription's notifications go.
#[derive(Clone)]
enum Notifier {
    Legacy(Peer<RoleServer>),
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

/// One subscribed URI and the task that watches it.
struct Watch {
    notifier: Notifier,
    task: JoinHandle<()>,
}

impl Drop for Watch {
    fn drop(&mut self) {
        self.task.abort();
    }
}

struct Listen {
    sink: SubscriptionSink,
    watches: HashMap<String, Watch>,
}

#[derive(Default)]
pub(crate) struct SessionState {
    legacy_peer: Mutex<Option<Peer<RoleServer>>>,
    legacy: Mutex<HashMap<String, Watch>>,
    listens: Mutex<HashMap<RequestId, Listen>>,
    /// Feeds started by `accepted_subscription_filter`, by the task of the listen request
    /// (rmcp calls the filter and then `listen` in the one task serving that request).
    prestarted: Mutex<Vec<(Option<tokio::task::Id>, Prestarted)>>,
    /// The least severe log level this session hears (`logging/setLevel`).
    log: Arc<super::context::LogFilter>,
}

impl SessionState {
    /// URIs watched now, over legacy subscriptions and every open listen.
    fn watched(&self) -> usize {
        let legacy = lock(&self.legacy).len();
        let listens: usize = lock(&self.listens).values().map(|l| l.watches.len()).sum();
        legacy + listens
    }
}

impl SessionState {
    /// Moves this session onto a new generation: survivors' watches re-open on it, the rest
    /// end, and the host is told both lists changed.
    async fn follow(&self, generation: &Arc<Generation>) {
        /// Re-opens on `generation` every watch it can still serve; the rest end.
        async fn rewatch(
            old: HashMap<String, Watch>,
            generation: &Arc<Generation>,
        ) -> HashMap<String, Watch> {
            let mut watches = HashMap::new();
            for (uri, watch) in old {
                let notifier = watch.notifier.clone();
                drop(watch);
                if let Some((entry, item)) = generation.resolve_uri(&uri) {
                    let watch = open_watch(generation.clone(), entry, item, uri.clone(), notifier).await;
                    watches.insert(uri, watch);
                }
            }
            watches
        }
        let legacy = std::mem::take(&mut *lock(&self.legacy));
        let legacy = rewatch(legacy, generation).await;
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
            let watches = rewatch(old, generation).await;
            if let Some(listen) = lock(&self.listens).get_mut(&id) {
                listen.watches = watches;
                sinks.push(listen.sink.clone());
            }
        }
        let peer = lock(&self.legacy_peer).clone();
        if let Some(peer) = peer {
            let _ = peer.notify_tool_list_changed().await;
            let _ = peer.notify_resource_list_changed().await;
            let _ = peer.notify_prompt_list_changed().await;
        }
        for sink in sinks {
            if sink.accepted().tools_list_changed == Some(true) {
                let _ = sink.notify_tool_list_changed().await;
            }
            if sink.accepted().resources_list_changed == Some(true) {
                let _ = sink.notify_resource_list_changed().await;
            }
            if sink.accepted().prompts_list_changed == Some(true) {
                let _ = sink.notify_prompt_list_changed().await;
            }
        }
    }
}

/// Opens the feed of one URI on one generation (before answering, so no change made after
/// the subscription is acknowledged can be missed), then forwards it as debounced `updated`
/// notifications. Over a dialled link, a feed that ends (the connection dropped) is
/// re-attached on a fresh dial.
async fn open_watch(
    generation: Arc<Generation>,
    entry: ResourceEntry,
    item: Option<String>,
    uri: String,
    notifier: Notifier,
) -> Watch {
    let first = attach(generation.clone(), entry.clone()).await;
    watch_from(first, generation, entry, item, uri, notifier)
}

/// Forwards `first` (an attached feed, if attaching worked) and re-attaches as the link allows.
fn watch_from(
    mut first: Option<ChangeStream>,
    generation: Arc<Generation>,
    entry: ResourceEntry,
    item: Option<String>,
    uri: String,
    notifier: Notifier,
) -> Watch {
    let task = tokio::spawn({
        let notifier = notifier.clone();
        async move {
            loop {
                let feed = match first.take() {
                    Some(feed) => Some(feed),
                    None => attach(generation.clone(), entry.clone()).await,
                };
                if let Some(changes) = feed
                    && !forward(changes, item.as_deref(), &uri, &notifier).await
                {
                    return;
                }
                if !generation.link.redials() {
                    return;
                }
                tokio::time::sleep(REATTACH).await;
            }
        }
    });
    Watch { notifier, task }
}

/// Opens the member's feed on the generation's link. An owned future, so that it can be started
/// before a listen is acknowledged and finished after (see `accepted_subscription_filter`).
fn attach(generation: Arc<Generation>, entry: ResourceEntry) -> BoxFuture<'static, Option<ChangeStream>> {
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

/// Polls `attach` once, now: an in-process feed is open when this returns, and a wire watch
/// has sent its request; the rest is awaited later.
fn start(mut attaching: BoxFuture<'static, Option<ChangeStream>>) -> Started {
    let mut cx = std::task::Context::from_waker(futures::task::noop_waker_ref());
    match attaching.as_mut().poll(&mut cx) {
        std::task::Poll::Ready(feed) => Started::Open(feed),
        std::task::Poll::Pending => Started::Opening(attaching),
    }
}

enum Started {
    Open(Option<ChangeStream>),
    Opening(BoxFuture<'static, Option<ChangeStream>>),
}

impl Started {
    async fn finish(self) -> Option<ChangeStream> {
        match self {
            Started::Open(feed) => feed,
            Started::Opening(attaching) => attaching.await,
        }
    }
}

/// Feeds started for a listen before rmcp acknowledged it, by URI.
type Prestarted = Vec<(String, Arc<Generation>, ResourceEntry, Option<String>, Started)>;

/// How long a dropped watch waits before it dials again.
const REATTACH: Duration = Duration::from_millis(250);

/// Sends debounced `updated` for the relevant changes until the feed ends (answers true) or
/// the host is gone (false).
async fn forward(changes: ChangeStream, item: Option<&str>, uri: &str, notifier: &Notifier) -> bool {
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
        if !notifier.updated(uri).await {
            return false;
        }
    }
    true
}

/// One connection's handler: rmcp's dispatch over [`Handler`], with the refusals that must
/// come before rmcp acknowledges anything.
#[derive(Clone)]
pub(crate) struct Session {
    handler: Handler,
}

/// The rmcp `ServerHandler` of one connection.
#[derive(Clone)]
pub(crate) struct Handler {
    shared: Arc<Shared>,
    state: Arc<SessionState>,
}

fn unknown_resource(uri: &str) -> ErrorData {
    ErrorData::resource_not_found(
        branded(&format!("unknown resource \"{uri}\"")),
        Some(serde_json::json!({ "uri": uri })),
    )
}

fn too_many(limit: usize) -> ErrorData {
    ErrorData::invalid_request(
        branded(&format!(
            "this session already watches {limit} URIs, the most it may (the server's limit on subscriptions per session) — unsubscribe from some first"
        )),
        Some(serde_json::json!({ "limit": limit })),
    )
}

fn read_error(uri: &str, f: Failure) -> ErrorData {
    let message = branded(&format!("{uri}: {}", f.message));
    match f.kind {
        FailureKind::Unknown => {
            ErrorData::resource_not_found(message, Some(serde_json::json!({ "uri": uri })))
        }
        FailureKind::InvalidInput { .. } => ErrorData::invalid_params(message, None),
        _ => ErrorData::internal_error(message, None),
    }
}

impl Handler {
    fn resolve(&self, uri: &str) -> Result<(Arc<Generation>, ResourceEntry, Option<String>), ErrorData> {
        let generation = self.shared.current();
        match generation.resolve_uri(uri) {
            Some((entry, item)) => Ok((generation, entry, item)),
            None => Err(match self.shared.tombstone("resource", uri, &generation) {
                Some(message) => ErrorData::invalid_params(message, None),
                None => unknown_resource(uri),
            }),
        }
    }

    /// Resolves `uri` for a subscription: the same refusals as `resources/read` (an unknown
    /// URI; an item id its collection's key type does not spell canonically), but an absent
    /// item is a valid address (a subscription hears it appear) and a link that is down does
    /// not refuse (the watch re-attaches).
    async fn resolve_watchable(
        &self,
        uri: &str,
    ) -> Result<(Arc<Generation>, ResourceEntry, Option<String>), ErrorData> {
        let (generation, entry, item) = self.resolve(uri)?;
        if let Some(id) = &item
            && let Ok(lease) = generation.link.lease().await
            && let Ok(dispatch) = lease.bundle.dispatch_for(entry.owner.as_deref())
            && let Err(f) = dispatch.read_item(entry.member, id).await
            && matches!(f.kind, FailureKind::InvalidInput { .. })
        {
            return Err(read_error(uri, f));
        }
        Ok((generation, entry, item))
    }

    async fn run_tool(
        &self,
        generation: &Generation,
        target: &ToolTarget,
        input: serde_json::Value,
        cancel: CancellationToken,
    ) -> Result<ToolOutput, Failure> {
        let lease = generation.link.lease().await?;
        let answer = Self::dispatch_tool(&lease, target, input, cancel).await;
        match answer {
            Ok(output) => Ok(output),
            Err(f) => Err(generation.link.after(&lease, f).await),
        }
    }

    async fn dispatch_tool(
        lease: &Lease,
        target: &ToolTarget,
        input: serde_json::Value,
        cancel: CancellationToken,
    ) -> Result<ToolOutput, Failure> {
        target.run(&lease.bundle, input, cancel).await
    }
}

impl Handler {
    /// Refuses a listen that would take this session past its subscription limit. Called
    /// before rmcp acknowledges the listen: a refusal after the acknowledgement reaches the
    /// client as the end of a stream it was told had opened, or (when the error answer and the
    /// stream's end race) as no error at all.
    fn admit_listen(&self, filter: &SubscriptionFilter) -> Result<(), ErrorData> {
        let limit = self.shared.max_subscriptions;
        if self.state.watched() + distinct_uris(filter) > limit {
            return Err(too_many(limit));
        }
        Ok(())
    }
}

/// How many different URIs a listen names (a URI named twice is watched once).
fn distinct_uris(filter: &SubscriptionFilter) -> usize {
    let uris = filter.resource_subscriptions.iter().flatten();
    uris.collect::<std::collections::HashSet<_>>().len()
}

impl rmcp::Service<RoleServer> for Session {
    async fn handle_request(
        &self,
        request: ClientRequest,
        context: RequestContext<RoleServer>,
    ) -> Result<ServerResult, ErrorData> {
        // A listen only exists in the 2026-07-28 era; rmcp answers one sent in a legacy
        // session itself ("method not found"), so the limit is judged only where it applies.
        let modern = context.protocol_version().is_some_and(|v| !v.has_initialize());
        if let ClientRequest::SubscriptionsListenRequest(listen) = &request
            && modern
        {
            self.handler.admit_listen(&listen.params.notifications)?;
        }
        rmcp::Service::handle_request(&self.handler, request, context).await
    }

    async fn handle_notification(
        &self,
        notification: ClientNotification,
        context: NotificationContext<RoleServer>,
    ) -> Result<(), ErrorData> {
        rmcp::Service::handle_notification(&self.handler, notification, context).await
    }

    fn get_info(&self) -> ServerConfig {
        ServerHandler::get_info(&self.handler)
    }

    fn supported_protocol_versions(&self) -> std::borrow::Cow<'static, [ProtocolVersion]> {
        ServerHandler::supported_protocol_versions(&self.handler)
    }
}

impl ServerHandler for Handler {
    fn get_info(&self) -> ServerConfig {
        self.shared.info.clone()
    }

    async fn initialize(
        &self,
        request: InitializeRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<InitializeResult, ErrorData> {
        context.peer.set_peer_info(request.clone());
        let mut result = self.negotiate_initialize(&request)?;
        result.instructions = self.shared.instructions.read();
        *lock(&self.state.legacy_peer) = Some(context.peer.clone());
        Ok(result)
    }

    async fn discover(&self, _context: RequestContext<RoleServer>) -> Result<DiscoverResult, ErrorData> {
        let mut result = DiscoverResult::from_server_info(
            self.supported_protocol_versions().into_owned(),
            self.get_info(),
        );
        result.instructions = self.shared.instructions.read();
        Ok(result)
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        Ok(ListToolsResult::with_all_items(
            self.shared.current().tool_list.to_vec(),
        ))
    }

    async fn list_resources(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListResourcesResult, ErrorData> {
        Ok(ListResourcesResult::with_all_items(
            self.shared.current().resource_list.to_vec(),
        ))
    }

    async fn list_resource_templates(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListResourceTemplatesResult, ErrorData> {
        Ok(ListResourceTemplatesResult::with_all_items(
            self.shared.current().template_list.to_vec(),
        ))
    }

    async fn read_resource(
        &self,
        request: ReadResourceRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<ReadResourceResponse, ErrorData> {
        let uri = request.uri;
        let (generation, entry, item) = self.resolve(&uri)?;
        let lease = generation.link.lease().await.map_err(|f| read_error(&uri, f))?;
        let answer = match lease.bundle.dispatch_for(entry.owner.as_deref()) {
            Ok(dispatch) => match &item {
                None => dispatch.read(entry.member).await,
                Some(id) => dispatch.read_item(entry.member, id).await,
            },
            Err(f) => Err(f),
        };
        let value = match answer {
            Ok(v) => v,
            Err(f) => return Err(read_error(&uri, generation.link.after(&lease, f).await)),
        };
        let contents =
            super::content::contents(entry.body, uri.clone(), value).map_err(|f| read_error(&uri, f))?;
        Ok(ReadResourceResult::new(vec![contents]).into())
    }

    #[allow(deprecated)]
    async fn subscribe(
        &self,
        request: SubscribeRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<(), ErrorData> {
        let uri = request.uri;
        let limit = self.shared.max_subscriptions;
        let held = |state: &SessionState| lock(&state.legacy).contains_key(&uri);
        if !held(&self.state) && self.state.watched() >= limit {
            return Err(too_many(limit));
        }
        let (generation, entry, item) = self.resolve_watchable(&uri).await?;
        let notifier = Notifier::Legacy(context.peer.clone());
        let watch = open_watch(generation, entry, item, uri.clone(), notifier).await;
        // Checked again: subscriptions answered meanwhile count too.
        if !held(&self.state) && self.state.watched() >= limit {
            return Err(too_many(limit));
        }
        lock(&self.state.legacy).insert(uri, watch);
        Ok(())
    }

    #[allow(deprecated)]
    async fn unsubscribe(
        &self,
        request: UnsubscribeRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<(), ErrorData> {
        lock(&self.state.legacy).remove(&request.uri);
        Ok(())
    }

    fn accepted_subscription_filter(&self, requested: &SubscriptionFilter) -> Option<SubscriptionFilter> {
        // rmcp acknowledges a listen before `listen` runs, and a change made after the client
        // saw the acknowledgement must not be missed: open the feeds here, before it is sent.
        let generation = self.shared.current();
        let batch: Prestarted = requested
            .resource_subscriptions
            .iter()
            .flatten()
            .filter_map(|uri| {
                let (entry, item) = generation.resolve_uri(uri)?;
                let started = start(attach(generation.clone(), entry.clone()));
                Some((uri.clone(), generation.clone(), entry, item, started))
            })
            .collect();
        lock(&self.state.prestarted).push((tokio::task::try_id(), batch));
        Some(requested.clone())
    }

    async fn listen(&self, context: SubscriptionContext) -> Result<(), ErrorData> {
        let sink = context.sink().clone();
        let id = sink.id().clone();
        let wanted: Vec<&String> = context
            .accepted()
            .resource_subscriptions
            .iter()
            .flatten()
            .collect();
        let mut prestarted: Prestarted = {
            // Claim the batch started in this task, whatever the fate of its URIs: a refused
            // listen drops it, so no feed outlives the request that opened it.
            let task = tokio::task::try_id();
            let mut batches = lock(&self.state.prestarted);
            let mine = batches.iter().position(|(t, _)| task.is_some() && *t == task);
            mine.map(|i| batches.remove(i).1).unwrap_or_default()
        };
        // Judged before the acknowledgement too (`Session::handle_request`); judged again
        // here for the listens and subscriptions answered meanwhile.
        self.admit_listen(context.accepted())?;
        let mut watches = HashMap::new();
        for uri in wanted {
            let notifier = Notifier::Listen(sink.clone());
            let found = prestarted.iter().position(|(u, ..)| u == uri);
            let watch = match found {
                Some(i) => {
                    let (uri, generation, entry, item, started) = prestarted.swap_remove(i);
                    self.resolve_watchable(&uri).await?;
                    let first = started.finish().await;
                    watch_from(first, generation, entry, item, uri, notifier)
                }
                None => {
                    let (generation, entry, item) = self.resolve_watchable(uri).await?;
                    open_watch(generation, entry, item, uri.clone(), notifier).await
                }
            };
            watches.insert(uri.clone(), watch);
        }
        lock(&self.state.listens).insert(id.clone(), Listen { sink, watches });
        tokio::select! {
            _ = context.cancelled() => {}
            _ = self.shared.closed.cancelled() => {}
        }
        lock(&self.state.listens).remove(&id);
        Ok(())
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        let generation = self.shared.current();
        let name = request.name.as_ref();
        let Some(entry) = generation.tools.get(name) else {
            return match self.shared.tombstone("tool", name, &generation) {
                Some(message) => Ok(results::failure(Failure::new(FailureKind::Unknown, message)).into()),
                None => Err(ErrorData::invalid_params(
                    branded(&format!("unknown tool \"{name}\"")),
                    None,
                )),
            };
        };
        let arguments = serde_json::Value::Object(request.arguments.clone().unwrap_or_default());
        let round = super::asking::Round::open(
            &context,
            "tools/call",
            name,
            &arguments,
            request.input_responses,
            request.request_state,
        )?;
        let answer = match schema::unwrap_input(&entry.input, request.arguments) {
            Ok(input) => {
                let call = super::context::for_request(&context, self.state.log.clone(), round.asks());
                let run = call.scope(self.run_tool(&generation, &entry.target, input, context.ct.clone()));
                match round.run(run).await {
                    Ok(answer) => answer,
                    Err(halt) => return halt.into(),
                }
            }
            Err(e) => Err(Failure::new(
                FailureKind::InvalidInput {
                    field: e.field.clone(),
                },
                format!("invalid argument `{}`: {}", e.field, e.message),
            )),
        };
        Ok(match answer {
            Ok(output) => results::success(output),
            Err(failure) => results::failure(failure),
        }
        .into())
    }

    async fn complete(
        &self,
        request: CompleteRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<CompleteResult, ErrorData> {
        super::completion::complete(&self.shared.current(), &request)
            .await
            .map_err(|f| ErrorData::internal_error(branded(&f.message), None))
    }

    async fn list_prompts(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListPromptsResult, ErrorData> {
        Ok(ListPromptsResult::with_all_items(
            self.shared.current().prompt_list.to_vec(),
        ))
    }

    async fn get_prompt(
        &self,
        request: GetPromptRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<GetPromptResponse, ErrorData> {
        let generation = self.shared.current();
        let Some(entry) = generation.prompts.get(&request.name) else {
            return Err(super::prompts::unknown(&request.name));
        };
        let lease = generation
            .link
            .lease()
            .await
            .map_err(|f| read_error(&request.name, f))?;
        let arguments = serde_json::to_value(&request.arguments).unwrap_or_default();
        let round = super::asking::Round::open(
            &context,
            "prompts/get",
            &request.name,
            &arguments,
            request.input_responses,
            request.request_state,
        )?;
        let call = super::context::for_request(&context, self.state.log.clone(), round.asks());
        let render = call.scope(super::prompts::render(entry, &lease.bundle, request.arguments));
        match round.run(render).await {
            Ok(Ok(result)) => Ok(result.into()),
            Ok(Err(f)) => Err(read_error(&request.name, generation.link.after(&lease, f).await)),
            Err(halt) => halt.into(),
        }
    }

    #[allow(deprecated)]
    async fn set_level(
        &self,
        request: SetLevelRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<(), ErrorData> {
        self.state.log.set(request.level);
        Ok(())
    }

    async fn on_custom_request(
        &self,
        request: CustomRequest,
        context: RequestContext<RoleServer>,
    ) -> Result<CustomResult, ErrorData> {
        // Removed at 2026-07-28: a request of that era naming them is "not found" (HTTP 404),
        // whatever its params.
        const REMOVED_IN_2026: &[&str] = &["resources/subscribe", "resources/unsubscribe"];
        let modern = context
            .meta
            .protocol_version()
            .is_some_and(|v| v.as_str() >= ProtocolVersion::V_2026_07_28.as_str());
        if modern && REMOVED_IN_2026.contains(&request.method.as_str()) {
            return Err(ErrorData::new(ErrorCode::METHOD_NOT_FOUND, request.method, None));
        }
        // A known method whose params did not parse lands here too: say so, not "not found".
        const KNOWN: &[&str] = &[
            "tools/call",
            "tools/list",
            "resources/read",
            "resources/list",
            "resources/templates/list",
            "resources/subscribe",
            "resources/unsubscribe",
            "subscriptions/listen",
        ];
        if KNOWN.contains(&request.method.as_str()) {
            return Err(ErrorData::invalid_params(
                branded(&format!("malformed params for {}", request.method)),
                None,
            ));
        }
        Err(ErrorData::new(ErrorCode::METHOD_NOT_FOUND, request.method, None))
    }
}
