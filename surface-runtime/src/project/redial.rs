//! A dispatch that dials its surface again whenever the connection drops: what
//! [`Source::redialling`](super::Source::redialling) puts under the source's typed client.
//!
//! A watch outlives the connection it was opened on: when that connection's feed ends, the
//! watch dials again (backing off, until it is dropped), opens the feed on the new connection
//! and yields one [`Change::Lagged`], which tells whoever reads it to re-read — the derived
//! members already do, so a projection resynchronises with a restarted source by itself.

use crate::dispatch::{CloseSignal, Dispatch};
use crate::failure::Failure;
use crate::member::{Change, ChangeStream, Write};
use crate::spec::SurfaceSpec;
use futures::future::BoxFuture;
use futures::{FutureExt, StreamExt};
use serde_json::Value;
use std::sync::Arc;
use std::time::Duration;

/// One dialled connection: its dispatch, its close signal and how to close it.
pub(super) struct Connected {
    pub(super) dispatch: Arc<dyn Dispatch>,
    pub(super) closed: CloseSignal,
    pub(super) dispose: Box<dyn FnOnce() + Send + Sync>,
}

/// Dials a new connection.
pub(super) type Dial = Box<dyn Fn() -> BoxFuture<'static, Result<Connected, Failure>> + Send + Sync>;

/// The first pause before dialling again, doubled after each failed dial up to [`MAX_PAUSE`].
const FIRST_PAUSE: Duration = Duration::from_millis(100);
/// The longest pause between two dials.
const MAX_PAUSE: Duration = Duration::from_secs(2);

struct Inner {
    spec: &'static SurfaceSpec,
    dial: Dial,
    current: tokio::sync::Mutex<Option<Connected>>,
}

impl Drop for Inner {
    fn drop(&mut self) {
        if let Some(c) = self.current.get_mut().take() {
            (c.dispose)();
        }
    }
}

/// A [`Dispatch`] over whichever connection is live, dialling a new one when it is not.
#[derive(Clone)]
pub(super) struct Redial(Arc<Inner>);

impl Redial {
    /// Over `first`, dialling with `dial` after it drops.
    pub(super) fn new(spec: &'static SurfaceSpec, first: Connected, dial: Dial) -> Redial {
        Redial(Arc::new(Inner {
            spec,
            dial,
            current: tokio::sync::Mutex::new(Some(first)),
        }))
    }

    /// The live connection's dispatch: the current one, or a new one if it has closed (one
    /// dial however many callers ask at once).
    async fn live(&self) -> Result<Arc<dyn Dispatch>, Failure> {
        let mut slot = self.0.current.lock().await;
        if let Some(c) = &*slot
            && !c.closed.is_closed()
        {
            return Ok(c.dispatch.clone());
        }
        if let Some(old) = slot.take() {
            (old.dispose)();
        }
        let c = (self.0.dial)().await?;
        let dispatch = c.dispatch.clone();
        *slot = Some(c);
        Ok(dispatch)
    }

    /// A feed of `member` on a live connection, dialling (with pauses) until one opens.
    async fn reopen(&self, member: &str) -> ChangeStream {
        let mut pause = FIRST_PAUSE;
        loop {
            if let Ok(dispatch) = self.live().await
                && let Ok(changes) = dispatch.watch(member).await
            {
                return changes;
            }
            tokio::time::sleep(pause).await;
            pause = (pause * 2).min(MAX_PAUSE);
        }
    }
}

impl Dispatch for Redial {
    fn spec(&self) -> &'static SurfaceSpec {
        self.0.spec
    }
    fn read<'a>(&'a self, member: &'a str) -> BoxFuture<'a, Result<Value, Failure>> {
        async move { self.live().await?.read(member).await }.boxed()
    }
    fn read_item<'a>(&'a self, member: &'a str, id: &'a str) -> BoxFuture<'a, Result<Value, Failure>> {
        async move { self.live().await?.read_item(member, id).await }.boxed()
    }
    fn write<'a>(&'a self, member: &'a str, write: Write) -> BoxFuture<'a, Result<(), Failure>> {
        async move { self.live().await?.write(member, write).await }.boxed()
    }
    fn watch<'a>(&'a self, member: &'a str) -> BoxFuture<'a, Result<ChangeStream, Failure>> {
        async move {
            let first = self.live().await?.watch(member).await?;
            let (this, member) = (self.clone(), member.to_owned());
            let changes =
                futures::stream::unfold((first, this, member), |(mut changes, this, member)| async move {
                    match changes.next().await {
                        Some(change) => Some((change, (changes, this, member))),
                        // The connection went: follow the member on the next one, and say that
                        // whatever happened in between was missed.
                        None => {
                            let changes = this.reopen(&member).await;
                            Some((Change::Lagged(0), (changes, this, member)))
                        }
                    }
                });
            Ok(changes.boxed())
        }
        .boxed()
    }
    fn call<'a>(&'a self, procedure: &'a str, input: Value) -> BoxFuture<'a, Result<Value, Failure>> {
        async move { self.live().await?.call(procedure, input).await }.boxed()
    }
}
