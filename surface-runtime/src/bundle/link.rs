//! The one dialled link: a connection to a surface served elsewhere, dialled on first use,
//! shared by every caller (two simultaneous first callers make one dial) and closed when it is
//! replaced or the link is dropped. What happens after it ends is the link's [`Redial`]:
//!
//! - [`Redial::Once`] — one dial, on first use; its answer, connection or failure, stands (one
//!   command-line invocation);
//! - [`Redial::OnClose`] — the connection's close signal discards it at once, so the next
//!   request dials afresh; one closed as it is dialled ("born dead") is re-dialled a bounded
//!   number of times within a window, then the link fails loudly (the MCP face's bridge);
//! - [`Redial::Backoff`] — the next request after a close dials again, and a watch follows its
//!   member onto the next connection, dialling with growing pauses until one opens, then says
//!   [`Change::Lagged`] so its reader re-reads (a projection's source).
//!
//! A request cut off in flight is never replayed: the failure is the caller's to word.
//! [`LinkedDispatch`] is a [`Dispatch`] over a link: every request goes to the live connection.

// Each face uses its own policy; a build without some face leaves its policy unused.
#![cfg_attr(not(all(feature = "mcp", feature = "cli")), allow(dead_code))]

use super::BundleClient;
use crate::dispatch::{CloseSignal, Dispatch};
use crate::failure::{Failure, FailureKind};
use crate::member::{Change, ChangeStream, Write};
use crate::spec::SurfaceSpec;
use crate::sync::{OnDrop, lock};
use futures::future::BoxFuture;
use futures::{FutureExt, StreamExt};
use serde_json::Value;
use std::sync::{Arc, Mutex, OnceLock};
use std::time::{Duration, Instant};

pub(crate) use crate::sync::Dispose;

/// One live connection: the clients it serves, the signal of its end (if the transport gives
/// one), and what closes it, run when the last holder drops it.
pub(crate) struct Connection {
    pub(crate) bundle: BundleClient,
    closed: Option<CloseSignal>,
    _dispose: OnDrop,
}

impl Connection {
    pub(crate) fn new(bundle: BundleClient, closed: Option<CloseSignal>, dispose: Option<Dispose>) -> Self {
        Connection {
            bundle,
            closed,
            _dispose: OnDrop::new(dispose),
        }
    }

    fn is_closed(&self) -> bool {
        self.closed.as_ref().is_some_and(CloseSignal::is_closed)
    }
}

/// Opens a connection.
pub(crate) type Dial = Box<dyn Fn() -> BoxFuture<'static, Result<Connection, Failure>> + Send + Sync>;

/// What a link does after its connection ends (see the module).
#[derive(Clone, Copy, Debug)]
pub(crate) enum Redial {
    /// One dial; its answer stands.
    Once,
    /// Discarded the instant it closes; a born-dead connection re-dialled at most `dials`
    /// times within `window`, then `born_dead` is the failure.
    OnClose {
        dials: usize,
        window: Duration,
        born_dead: fn() -> Failure,
    },
    /// Re-dialled by the next request after a close; watches follow with growing pauses.
    Backoff,
}

/// The first pause before a watch dials again, doubled after each failed dial up to
/// [`MAX_PAUSE`] ([`Redial::Backoff`]).
const FIRST_PAUSE: Duration = Duration::from_millis(100);
/// The longest pause between two dials of a watch.
const MAX_PAUSE: Duration = Duration::from_secs(2);

enum Slot {
    Empty,
    Live(Arc<Connection>),
    /// [`Redial::Once`]'s failed dial, answered to every later caller.
    Failed(Failure),
}

/// One dialled link (see the module).
pub(crate) struct Link {
    dial: Dial,
    redial: Redial,
    /// What the link holds; never locked across an await, so the live connection is had
    /// with one uncontended lock a request.
    slot: Mutex<Slot>,
    /// Held while dialling: one dial however many ask at once.
    dialling: tokio::sync::Mutex<()>,
    /// The first transport failure any request through the link met, whatever its caller
    /// then made of it.
    lost: OnceLock<Failure>,
}

impl Link {
    pub(crate) fn new(redial: Redial, dial: Dial) -> Arc<Link> {
        Link::holding(redial, Slot::Empty, dial)
    }

    /// A link already holding `first` (dialled by its owner, who wanted that dial's failure).
    pub(crate) fn over(redial: Redial, first: Connection, dial: Dial) -> Arc<Link> {
        Link::holding(redial, Slot::Live(Arc::new(first)), dial)
    }

    fn holding(redial: Redial, slot: Slot, dial: Dial) -> Arc<Link> {
        Arc::new(Link {
            dial,
            redial,
            slot: Mutex::new(slot),
            dialling: tokio::sync::Mutex::new(()),
            lost: OnceLock::new(),
        })
    }

    /// The connection held, or the failure that stands, when there is one to answer with.
    fn held(&self) -> Option<Result<Arc<Connection>, Failure>> {
        match &*lock(&self.slot) {
            Slot::Live(c) if !(matches!(self.redial, Redial::Backoff) && c.is_closed()) => {
                Some(Ok(c.clone()))
            }
            Slot::Failed(f) => Some(Err(f.clone())),
            _ => None,
        }
    }

    /// Holds `next` in the slot, dropping what it held after the lock is let go.
    fn hold(&self, next: Slot) {
        let previous = std::mem::replace(&mut *lock(&self.slot), next);
        drop(previous);
    }

    /// The live connection, dialling when there is none (one dial however many ask at once).
    pub(crate) async fn get(self: &Arc<Self>) -> Result<Arc<Connection>, Failure> {
        if let Some(held) = self.held() {
            return held;
        }
        let _dialling = self.dialling.lock().await;
        // Another caller may have dialled while this one waited.
        if let Some(held) = self.held() {
            return held;
        }
        // A closed connection is closed before the next is dialled.
        self.hold(Slot::Empty);
        match self.redial {
            Redial::Once => {
                let answer = (self.dial)().await.map(Arc::new);
                self.hold(match &answer {
                    Ok(c) => Slot::Live(c.clone()),
                    Err(f) => Slot::Failed(f.clone()),
                });
                answer
            }
            Redial::Backoff => {
                let c = Arc::new((self.dial)().await?);
                self.hold(Slot::Live(c.clone()));
                Ok(c)
            }
            Redial::OnClose {
                dials,
                window,
                born_dead,
            } => {
                let started = Instant::now();
                for _ in 0..dials {
                    let c = Arc::new((self.dial)().await?);
                    // A close announced during registration (at once or on the next tick) is
                    // a connection born dead: dial again rather than hand out a corpse.
                    tokio::task::yield_now().await;
                    if c.is_closed() {
                        drop(c);
                        if started.elapsed() > window {
                            break;
                        }
                        continue;
                    }
                    if let Some(signal) = c.closed.clone() {
                        let (link, weak) = (Arc::downgrade(self), Arc::downgrade(&c));
                        tokio::spawn(async move {
                            signal.closed().await;
                            if let (Some(link), Some(c)) = (link.upgrade(), weak.upgrade()) {
                                link.discard(&c).await;
                            }
                        });
                    }
                    self.hold(Slot::Live(c.clone()));
                    return Ok(c);
                }
                Err(born_dead())
            }
        }
    }

    /// Drops `c` from the link if it is still the one held (by identity), so the next request
    /// dials afresh.
    pub(crate) async fn discard(&self, c: &Arc<Connection>) {
        let mut slot = lock(&self.slot);
        if matches!(&*slot, Slot::Live(held) if Arc::ptr_eq(held, c)) {
            let held = std::mem::replace(&mut *slot, Slot::Empty);
            drop(slot);
            drop(held);
        }
    }

    /// `answer`, noting a failure to reach the served side.
    fn heard<T>(&self, answer: Result<T, Failure>) -> Result<T, Failure> {
        if let Err(f) = &answer
            && matches!(f.kind, FailureKind::Transport { .. })
        {
            let _ = self.lost.set(f.clone());
        }
        answer
    }

    /// The first transport failure a request through the link met, if any.
    pub(crate) fn lost(&self) -> Option<&Failure> {
        self.lost.get()
    }

    /// A feed of `member` of `owner`'s surface on a live connection, dialling with growing
    /// pauses until one opens.
    async fn reopen(self: &Arc<Self>, owner: Option<&str>, member: &str) -> ChangeStream {
        let mut pause = FIRST_PAUSE;
        loop {
            if let Ok(c) = self.get().await
                && let Ok(dispatch) = c.bundle.dispatch_for(owner)
                && let Ok(changes) = dispatch.watch(member).await
            {
                return changes;
            }
            tokio::time::sleep(pause).await;
            pause = (pause * 2).min(MAX_PAUSE);
        }
    }
}

/// A [`Dispatch`] of one surface of the bundle (`owner`: a sibling key, `None` for the core)
/// over whichever connection of `link` is live, dialling when there is none.
pub(crate) struct LinkedDispatch {
    spec: &'static SurfaceSpec,
    owner: Option<String>,
    link: Arc<Link>,
}

impl LinkedDispatch {
    pub(crate) fn new(spec: &'static SurfaceSpec, owner: Option<String>, link: Arc<Link>) -> Self {
        LinkedDispatch { spec, owner, link }
    }

    async fn dispatch(&self) -> Result<Arc<dyn Dispatch>, Failure> {
        self.link
            .get()
            .await?
            .bundle
            .dispatch_for(self.owner.as_deref())
            .cloned()
    }
}

impl Dispatch for LinkedDispatch {
    fn spec(&self) -> &'static SurfaceSpec {
        self.spec
    }
    fn read<'a>(&'a self, member: &'a str) -> BoxFuture<'a, Result<Value, Failure>> {
        async move {
            let answer = async { self.dispatch().await?.read(member).await };
            self.link.heard(answer.await)
        }
        .boxed()
    }
    fn read_item<'a>(&'a self, member: &'a str, id: &'a str) -> BoxFuture<'a, Result<Value, Failure>> {
        async move {
            let answer = async { self.dispatch().await?.read_item(member, id).await };
            self.link.heard(answer.await)
        }
        .boxed()
    }
    fn write<'a>(&'a self, member: &'a str, write: Write) -> BoxFuture<'a, Result<(), Failure>> {
        async move {
            let answer = async { self.dispatch().await?.write(member, write).await };
            self.link.heard(answer.await)
        }
        .boxed()
    }
    fn watch<'a>(&'a self, member: &'a str) -> BoxFuture<'a, Result<ChangeStream, Failure>> {
        async move {
            let answer = async { self.dispatch().await?.watch(member).await };
            let first = self.link.heard(answer.await)?;
            if !matches!(self.link.redial, Redial::Backoff) {
                return Ok(first);
            }
            let state = (first, self.link.clone(), self.owner.clone(), member.to_owned());
            let changes = futures::stream::unfold(state, |(mut changes, link, owner, member)| async move {
                match changes.next().await {
                    Some(change) => Some((change, (changes, link, owner, member))),
                    // The connection went: follow the member on the next one, and say that
                    // whatever happened in between was missed.
                    None => {
                        let changes = link.reopen(owner.as_deref(), &member).await;
                        Some((Change::Lagged(0), (changes, link, owner, member)))
                    }
                }
            });
            Ok(changes.boxed())
        }
        .boxed()
    }
    fn call<'a>(&'a self, procedure: &'a str, input: Value) -> BoxFuture<'a, Result<Value, Failure>> {
        async move {
            let answer = async { self.dispatch().await?.call(procedure, input).await };
            self.link.heard(answer.await)
        }
        .boxed()
    }
}
