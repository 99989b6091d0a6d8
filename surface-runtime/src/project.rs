//! Projected surfaces: a second surface whose members are derived from a live client of the
//! first — the way to curate a surface for an observer (drop the dangerous procedures, bound
//! the log, derive verdicts) and serve that instead.
//!
//! The projected surface B is an ordinary `#[surface]`: its derived members are declared
//! `#[cell(derived)]`, `#[stream(derived)]` or `#[event(derived)]`, which makes each one a
//! [`ReadOnly`] member — readable, watchable and served like any other, with no setter on the
//! member or on B's typed client (writing one is a compile error). A [`Source`] over a client
//! of A builds them: each is a map of one of A's members, filled from a read of A and then kept
//! current from A's change feed (no polling). What B does not declare, it does not have:
//! dropping a member or a procedure is not declaring it. Procedures B passes through are
//! ordinary procedures that call A through the source's client, relaying A's failures
//! unchanged ([`Relayed`]).
//!
//! The client of A is one shape wherever A lives: `OpsClient::direct(ops)` for a surface in
//! this process, or the client of a connection dialled over the wire face
//! ([`Source::dialled`], or [`Source::redialling`] to dial again whenever the connection
//! drops). Dropping B drops its derived members, which ends their watches on A; when A fails
//! (its connection drops), each derived member keeps its last value.
//!
//! ```
//! # use schemars::JsonSchema;
//! # use serde::{Deserialize, Serialize};
//! use std::collections::BTreeMap;
//! use surface_runtime::project::Source;
//! use surface_runtime::{Cell, Collection, Event, ReadOnly, Stream};
//! # use surface_runtime::*;
//! # use std::sync::Arc;
//! # // The surfaces below are what `#[surface]` declares; written out here because this crate's
//! # // own doc tests cannot use the macros.
//! # struct Ops { processes: Collection<u32, String> }
//! # impl SurfaceMembers for Ops {
//! #     const NAME: &'static str = "Ops"; const DOC: &'static str = "";
//! #     const MEMBERS: &'static [MemberSpec] = &[MemberSpec { name: "processes", kind: MemberKind::Collection, doc: "",
//! #         value: TypeSpec { rust: "String", schema: || serde_json::json!({}) },
//! #         key: Some(TypeSpec { rust: "u32", schema: || serde_json::json!({}) }) }];
//! #     type Client = OpsClient;
//! #     fn member(&self, name: &str) -> Option<&dyn LiveMember> { (name == "processes").then_some(&self.processes as _) }
//! # }
//! # impl SurfaceProcedures for Ops {
//! #     const PROCEDURES: &'static [ProcedureSpec] = &[]; type Namespaces = ();
//! #     fn namespaces(_: Arc<dyn Dispatch>) {}
//! #     fn call<'a>(&'a self, n: &'a str, _: serde_json::Value) -> futures::future::BoxFuture<'a, Result<serde_json::Value, Failure>> {
//! #         Box::pin(async move { Err(Failure::new(FailureKind::Unknown, n)) })
//! #     }
//! # }
//! # #[derive(Clone)] struct OpsClient(Arc<dyn Dispatch>);
//! # impl SurfaceClient for OpsClient { type Surface = Ops;
//! #     fn from_dispatch(d: Arc<dyn Dispatch>) -> Self { OpsClient(d) } fn dispatch(&self) -> &Arc<dyn Dispatch> { &self.0 } }
//! # impl OpsClient { fn processes(&self) -> CollectionClient<'_, u32, String> { __private::members::collection_client(&*self.0, "processes") } }
//! # #[tokio::main(flavor = "current_thread")] async fn main() -> Result<(), Failure> {
//! let ops = Arc::new(Ops { processes: Collection::from_iter([(1, "init".to_string())]) });
//! let source = Source::new(DirectDispatch::client(ops.clone()));
//!
//! // B's `#[cell(derived)] pub busy: usize`: how many processes A has, kept current.
//! let busy: ReadOnly<Cell<usize>> = source.cell_of(OpsClient::processes, |table: &BTreeMap<u32, String>| table.len()).await?;
//! assert_eq!(busy.value(), 1);
//! assert_eq!(ops.processes.watchers(), 1);   // B follows A's change feed
//!
//! let mut changes = busy.subscribe();
//! ops.processes.upsert(2, "shell".into());
//! assert_eq!(changes.recv().await.unwrap(), 2);
//!
//! drop(busy);                                  // dropping B's member ends its watch on A
//! # for _ in 0..100 { if ops.processes.watchers() == 0 { break } tokio::task::yield_now().await }
//! assert_eq!(ops.processes.watchers(), 0);
//! # Ok(()) }
//! ```

#[cfg(feature = "wire")]
use crate::bundle::link;
use crate::dispatch::{CellClient, CollectionClient, Dispatch, EventClient, StreamClient};
use crate::failure::{Failure, FailureKind, IntoFailure};
use crate::member::{
    Cell, Change, ChangeStream, Collection, Event, MemberKey, MemberValue, Stream, id_to_key,
};
use crate::surface::SurfaceClient;
use crate::sync::OnDrop;
use futures::{FutureExt, StreamExt};
use serde::de::DeserializeOwned;
use serde_json::Value;
use std::collections::BTreeMap;
use std::fmt;
use std::sync::Arc;

mod read_only;
pub use read_only::ReadOnly;

/// A failure of the source surface, relayed unchanged — message, detail and kind — by a
/// procedure of the projected surface that passes a call through (`?` converts).
///
/// ```
/// use surface_runtime::project::Relayed;
/// use surface_runtime::{Failure, FailureKind, IntoFailure};
/// fn passed() -> Result<u32, Relayed> {
///     let on_a: Result<u32, Failure> = Err(Failure::new(FailureKind::Refused, "no process 7"));
///     Ok(on_a?)
/// }
/// assert_eq!(passed().unwrap_err().into_failure().kind, FailureKind::Refused);
/// ```
#[derive(Clone, Debug, PartialEq)]
pub struct Relayed(pub Failure);

impl From<Failure> for Relayed {
    fn from(f: Failure) -> Self {
        Relayed(f)
    }
}

impl fmt::Display for Relayed {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0.message)
    }
}

// Not offered as the impl to write for another type (the trait's message says what is).
#[diagnostic::do_not_recommend]
impl IntoFailure for Relayed {
    // The served side's refusal, detail and all.
    const CARRIES_DETAIL: bool = true;
    fn into_failure(self) -> Failure {
        self.0
    }
}

/// A live client of the surface being projected (A), and the builder of derived members
/// over it. Cheap to clone; keep one in the projected surface (as private state) for the
/// procedures it passes through.
///
/// The client is A's typed client whatever A's place: `OpsClient::direct(ops)` in this
/// process, or a connection dialled over the wire face ([`Source::dialled`], which closes it
/// when the last clone of the source is dropped).
pub struct Source<C> {
    client: C,
    /// Closes a dialled connection when the last clone of the source is dropped.
    _dispose: Arc<OnDrop>,
}

impl<C: Clone> Clone for Source<C> {
    fn clone(&self) -> Self {
        Source {
            client: self.client.clone(),
            _dispose: self._dispose.clone(),
        }
    }
}

impl<C> fmt::Debug for Source<C> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Source").finish_non_exhaustive()
    }
}

/// A decoding failure of something the source answered.
fn undecodable(member: &str, e: serde_json::Error) -> Failure {
    Failure::new(
        FailureKind::Error,
        format!("what the source answered for \"{member}\" did not decode: {e}"),
    )
}

fn decode<T: DeserializeOwned>(member: &str, v: Value) -> Result<T, Failure> {
    serde_json::from_value(v).map_err(|e| undecodable(member, e))
}

/// Every item of collection `member` on the source, by key.
async fn read_items<K: MemberKey, V: MemberValue>(
    dispatch: &dyn Dispatch,
    member: &str,
) -> Result<BTreeMap<K, V>, Failure> {
    let keys: Vec<K> = decode(member, dispatch.read(member).await?)?;
    let mut items = BTreeMap::new();
    for key in keys {
        match dispatch.read_item(member, &crate::member::key_to_id(&key)).await {
            Ok(v) => {
                items.insert(key, decode(member, v)?);
            }
            // Removed between the two reads: its removal is on the feed too.
            Err(f) if f.kind == FailureKind::Unknown => {}
            Err(f) => return Err(f),
        }
    }
    Ok(items)
}

impl<C: SurfaceClient> Source<C> {
    /// A source over `client`, with nothing to close (a surface in this process, or a
    /// connection someone else owns).
    pub fn new(client: C) -> Self {
        Source::owned(client, || {})
    }

    /// A source over `client` that runs `dispose` when its last clone is dropped.
    pub fn owned(client: C, dispose: impl FnOnce() + Send + Sync + 'static) -> Self {
        Source {
            client,
            _dispose: Arc::new(OnDrop::new(Some(Box::new(dispose)))),
        }
    }

    /// A source over a connection dialled over the wire face
    /// (`wire::dial_unix_socket::<Ops>(path)`), closed when the last clone is dropped.
    #[cfg(feature = "wire")]
    pub fn dialled(connection: crate::wire::OwnedConnection<C>) -> Self {
        let (client, dispose, _closed) = connection.into_parts();
        Source::owned(client, dispose)
    }

    /// A source that dials its surface with `dial` now (failing as that dial fails), and
    /// again whenever the connection drops: reads and calls go to the live connection (the
    /// first after a drop dials), and each derived member's watch moves to the new connection
    /// by itself, re-reading what it may have missed — so a projection follows a source that
    /// restarts. Between a drop and the next connection, derived members keep their last
    /// values and calls fail with the dial's failure.
    ///
    /// ```no_run
    /// # use surface_runtime::{Surface, project::Source, wire::dial_unix_socket};
    /// # async fn f<S: Surface>() -> Result<(), surface_runtime::Failure> {
    /// let source = Source::<S::Client>::redialling(|| dial_unix_socket::<S>("/tmp/ops.sock")).await?;
    /// # Ok(()) }
    /// ```
    #[cfg(feature = "wire")]
    pub async fn redialling<F, Fut>(dial: F) -> Result<Self, Failure>
    where
        F: Fn() -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Result<crate::wire::OwnedConnection<C>, Failure>> + Send + 'static,
    {
        let connect = |connection: crate::wire::OwnedConnection<C>| {
            let (client, dispose, closed) = connection.into_parts();
            let core = Some(client.dispatch().clone());
            let bundle = crate::bundle::BundleClient::from_dispatches(core, BTreeMap::new());
            link::Connection::new(bundle, Some(closed), Some(dispose))
        };
        let first = connect(dial().await?);
        let spec = first.bundle.dispatch_for(None)?.spec();
        let again: link::Dial = Box::new(move || dial().map(move |c| c.map(connect)).boxed());
        let link = link::Link::over(link::Redial::Backoff, first, again);
        let dispatch = link::LinkedDispatch::new(spec, None, link);
        Ok(Source::new(C::from_dispatch(Arc::new(dispatch))))
    }

    /// The client of the source, for procedures that pass a call through.
    pub fn client(&self) -> &C {
        &self.client
    }

    fn dispatch(&self) -> Arc<dyn Dispatch> {
        self.client.dispatch().clone()
    }

    /// A derived cell: `map` of the source's cell (`OpsClient::load`, or `|a| a.load()`), read
    /// now and set again at each of its changes.
    pub async fn cell<T, U>(
        &self,
        member: impl for<'a> FnOnce(&'a C) -> CellClient<'a, T>,
        map: impl Fn(T) -> U + Send + Sync + 'static,
    ) -> Result<ReadOnly<Cell<U>>, Failure>
    where
        T: MemberValue,
        U: MemberValue,
    {
        let name = member(&self.client).member();
        let dispatch = self.dispatch();
        // Watched before it is read, so no change falls between the two.
        let mut changes = dispatch.watch(name).await?;
        let first: T = decode(name, dispatch.read(name).await?)?;
        let target = Arc::new(Cell::new(map(first)));
        let cell = target.clone();
        Ok(follow(target, async move {
            while let Some(change) = changes.next().await {
                let value = match change {
                    Change::Set(v) => v,
                    // Changes were missed: the value itself is what matters, so re-read it.
                    Change::Lagged(_) => match dispatch.read(name).await {
                        Ok(v) => v,
                        Err(_) => continue,
                    },
                    _ => continue,
                };
                if let Ok(v) = serde_json::from_value::<T>(value) {
                    cell.set(map(v));
                }
            }
        }))
    }

    /// A derived cell: `map` of the whole of the source's collection (`OpsClient::processes`),
    /// computed now and again at each upsert and delete (reading only the item that changed).
    pub async fn cell_of<K, V, U>(
        &self,
        member: impl for<'a> FnOnce(&'a C) -> CollectionClient<'a, K, V>,
        map: impl Fn(&BTreeMap<K, V>) -> U + Send + Sync + 'static,
    ) -> Result<ReadOnly<Cell<U>>, Failure>
    where
        K: MemberKey,
        V: MemberValue,
        U: MemberValue,
    {
        let name = member(&self.client).member();
        let dispatch = self.dispatch();
        let mut changes = dispatch.watch(name).await?;
        let mut items: BTreeMap<K, V> = read_items(&*dispatch, name).await?;
        let target = Arc::new(Cell::new(map(&items)));
        let cell = target.clone();
        Ok(follow(target, async move {
            while let Some(change) = changes.next().await {
                match change {
                    Change::Upserted { id } => {
                        let Ok(key) = id_to_key::<K>(&id) else { continue };
                        match dispatch.read_item(name, &id).await {
                            Ok(v) => match serde_json::from_value::<V>(v) {
                                Ok(v) => {
                                    items.insert(key, v);
                                }
                                Err(_) => continue,
                            },
                            // Gone again by the time it was read: its removal follows.
                            Err(f) if f.kind == FailureKind::Unknown => {
                                items.remove(&key);
                            }
                            // The source failed: keep the last value.
                            Err(_) => continue,
                        }
                    }
                    Change::Removed { id } => {
                        let Ok(key) = id_to_key::<K>(&id) else { continue };
                        items.remove(&key);
                    }
                    Change::Lagged(_) => match read_items(&*dispatch, name).await {
                        Ok(all) => items = all,
                        Err(_) => continue,
                    },
                    _ => continue,
                }
                cell.set(map(&items));
            }
        }))
    }

    /// A derived collection: each item of the source's collection (`OpsClient::processes`)
    /// mapped with its key, under the same key; each upsert reads only the item that changed.
    pub async fn collection<K, V, W>(
        &self,
        member: impl for<'a> FnOnce(&'a C) -> CollectionClient<'a, K, V>,
        map: impl Fn(&K, V) -> W + Send + Sync + 'static,
    ) -> Result<ReadOnly<Collection<K, W>>, Failure>
    where
        K: MemberKey,
        V: MemberValue,
        W: MemberValue,
    {
        let name = member(&self.client).member();
        let dispatch = self.dispatch();
        let mut changes = dispatch.watch(name).await?;
        let items: BTreeMap<K, V> = read_items(&*dispatch, name).await?;
        let target: Arc<Collection<K, W>> =
            Arc::new(items.into_iter().map(|(k, v)| (k.clone(), map(&k, v))).collect());
        let collection = target.clone();
        Ok(follow(target, async move {
            while let Some(change) = changes.next().await {
                match change {
                    Change::Upserted { id } => {
                        let Ok(key) = id_to_key::<K>(&id) else { continue };
                        match dispatch.read_item(name, &id).await {
                            Ok(v) => {
                                if let Ok(v) = serde_json::from_value::<V>(v) {
                                    let item = map(&key, v);
                                    collection.upsert(key, item);
                                }
                            }
                            Err(f) if f.kind == FailureKind::Unknown => {
                                collection.remove(&key);
                            }
                            Err(_) => {}
                        }
                    }
                    Change::Removed { id } => {
                        if let Ok(key) = id_to_key::<K>(&id) {
                            collection.remove(&key);
                        }
                    }
                    Change::Lagged(_) => {
                        let Ok(all) = read_items::<K, V>(&*dispatch, name).await else {
                            continue;
                        };
                        for key in collection.keys() {
                            if !all.contains_key(&key) {
                                collection.remove(&key);
                            }
                        }
                        for (key, v) in all {
                            let item = map(&key, v);
                            collection.upsert(key, item);
                        }
                    }
                    _ => {}
                }
            }
        }))
    }

    /// A derived stream: the source's stream (`OpsClient::log`) mapped chunk by chunk, keeping
    /// the last `keep` chunks — its snapshot is the tail of the source's, then each new chunk.
    pub async fn stream<C1, D>(
        &self,
        member: impl for<'a> FnOnce(&'a C) -> StreamClient<'a, C1>,
        keep: usize,
        map: impl Fn(C1) -> D + Send + Sync + 'static,
    ) -> Result<ReadOnly<Stream<D>>, Failure>
    where
        C1: MemberValue,
        D: MemberValue,
    {
        let name = member(&self.client).member();
        let dispatch = self.dispatch();
        let mut changes = dispatch.watch(name).await?;
        let snapshot: Vec<Value> = decode(name, dispatch.read(name).await?)?;
        // Chunks pushed between the watch and the read are on the feed and may also end the
        // snapshot: those already buffered that repeat the snapshot's tail are dropped, so the
        // stream is its snapshot then each later chunk, once.
        let mut early = Vec::new();
        while let Some(Some(change)) = changes.next().now_or_never() {
            if let Change::Chunk(v) = change {
                early.push(v);
            }
        }
        let overlap = overlap(&snapshot, &early);
        let target = Arc::new(Stream::with_history(keep));
        let chunks = snapshot.len().saturating_sub(keep);
        for v in snapshot
            .into_iter()
            .skip(chunks)
            .chain(early.into_iter().skip(overlap))
        {
            target.push(map(decode(name, v)?));
        }
        let stream = target.clone();
        // A lag lost chunks for good: a stream cannot re-read what it missed without repeating
        // what it has, so it goes on from the next one.
        Ok(follow(
            target,
            each(changes, move |change| {
                if let Change::Chunk(v) = change
                    && let Ok(chunk) = serde_json::from_value::<C1>(v)
                {
                    stream.push(map(chunk));
                }
            }),
        ))
    }

    /// A derived event: each occurrence of the source's event (`OpsClient::autosave`), mapped.
    pub async fn event<T, U>(
        &self,
        member: impl for<'a> FnOnce(&'a C) -> EventClient<'a, T>,
        map: impl Fn(T) -> U + Send + Sync + 'static,
    ) -> Result<ReadOnly<Event<U>>, Failure>
    where
        T: MemberValue,
        U: MemberValue,
    {
        let name = member(&self.client).member();
        let changes = self.dispatch().watch(name).await?;
        let target = Arc::new(Event::new());
        let event = target.clone();
        Ok(follow(
            target,
            each(changes, move |change| {
                if let Change::Published(v) = change
                    && let Ok(v) = serde_json::from_value::<T>(v)
                {
                    event.publish(map(v));
                }
            }),
        ))
    }
}

/// How many of the chunks `early` (on the feed, from before the snapshot was read) the
/// snapshot already ends with: the longest run at their start that is the snapshot's tail.
fn overlap<T: PartialEq>(snapshot: &[T], early: &[T]) -> usize {
    (0..=early.len().min(snapshot.len()))
        .rev()
        .find(|&n| early[..n] == snapshot[snapshot.len() - n..])
        .unwrap_or(0)
}

/// Each change of `changes`, handed to `apply`, until the feed ends.
async fn each(mut changes: ChangeStream, mut apply: impl FnMut(Change)) {
    while let Some(change) = changes.next().await {
        apply(change);
    }
}

/// `target`, read-only, fed by `feeder` (a task that ends with the feed, and is aborted when
/// the member is dropped).
fn follow<M>(target: Arc<M>, feeder: impl Future<Output = ()> + Send + 'static) -> ReadOnly<M> {
    ReadOnly::fed(target, tokio::spawn(feeder))
}

#[cfg(test)]
mod tests;
