//! The link from a served generation to its live clients: fixed (serve fresh, in-process) or
//! dialled (bridge a surface served elsewhere).
//!
//! A dialled link memoises one connection shared by every caller (two simultaneous first calls
//! make one dial). The connection's `on_close` discards it the instant it fires, so the next
//! request dials fresh; without one, a transport failure discards it and that one request
//! fails with a sentence saying so. A connection born dead is re-dialled at most
//! [`BORN_DEAD_DIALS`] times within [`BORN_DEAD_WINDOW`], then the link fails loudly. After the
//! server closes, nothing is dialled. A request cut off in flight is never replayed.

use crate::bundle::{BundleClient, DialFactory};
use crate::dispatch::CloseSignal;
use crate::failure::{Failure, FailureKind};
use std::sync::{Arc, Mutex, Weak};
use std::time::{Duration, Instant};
use tokio_util::sync::CancellationToken;

/// How many dials a born-dead connection gets.
pub const BORN_DEAD_DIALS: usize = 3;
/// The window those dials must fall in.
pub const BORN_DEAD_WINDOW: Duration = Duration::from_secs(10);

const STILL_RUNNING: &str = "This MCP server is still running and has discarded the dead connection";

struct Live {
    bundle: BundleClient,
    dispose: Mutex<Option<Box<dyn FnOnce() + Send + Sync>>>,
    on_close: Option<CloseSignal>,
}

impl Drop for Live {
    fn drop(&mut self) {
        if let Some(d) = crate::sync::get_mut(&mut self.dispose).take() {
            d();
        }
    }
}

pub(crate) struct Dialer {
    factory: DialFactory,
    slot: tokio::sync::Mutex<Option<Arc<Live>>>,
    server_closed: CancellationToken,
}

/// The clients one generation dispatches over.
pub(crate) enum Link {
    Fixed(BundleClient),
    Dialed(Arc<Dialer>),
}

/// Which connection a request used, so a transport failure discards exactly that one.
pub(crate) struct Lease {
    pub bundle: BundleClient,
    live: Option<Weak<Live>>,
}

fn failure(message: String) -> Failure {
    Failure::new(
        FailureKind::Transport {
            outcome_unknown: false,
        },
        message,
    )
}

impl Link {
    pub(crate) fn dialed(factory: DialFactory, server_closed: CancellationToken) -> Link {
        Link::Dialed(Arc::new(Dialer {
            factory,
            slot: tokio::sync::Mutex::new(None),
            server_closed,
        }))
    }

    /// Whether a dropped watch should re-attach by dialling again (never after close).
    pub(crate) fn redials(&self) -> bool {
        matches!(self, Link::Dialed(d) if !d.server_closed.is_cancelled())
    }

    /// The live bundle, dialling when there is none.
    pub(crate) async fn lease(&self) -> Result<Lease, Failure> {
        match self {
            Link::Fixed(b) => Ok(Lease {
                bundle: b.clone(),
                live: None,
            }),
            Link::Dialed(d) => d.lease().await,
        }
    }

    /// Reframes a failed request: a transport death discards the connection it used and says
    /// so; a timeout says so and keeps the connection; an application error keeps the
    /// connection and passes through.
    pub(crate) async fn after(&self, lease: &Lease, f: Failure) -> Failure {
        let Link::Dialed(d) = self else {
            return f;
        };
        let message = match &f.kind {
            FailureKind::Transport {
                outcome_unknown: true,
            } => format!(
                "The connection to the served surface dropped while this request was in flight ({}), so its outcome is unknown: the served side may have acted and only the answer been lost. {STILL_RUNNING} — check the state before retrying; nothing was replayed.",
                f.message
            ),
            FailureKind::Transport {
                outcome_unknown: false,
            } => format!(
                "The connection to the served surface had closed ({}). {STILL_RUNNING} — retry: the next request dials afresh.",
                f.message
            ),
            // The connection stays: other requests on it may be answered, and a new one would
            // reach the same served process. Its death, if it comes, is announced by on_close.
            FailureKind::TimedOut { .. } => {
                return Failure {
                    message: format!(
                        "The served surface did not answer this request in time ({}), so its outcome is unknown: the served side may still act on it. This MCP server is still running and keeps the connection for other requests — check the state before retrying.",
                        f.message
                    ),
                    ..f
                };
            }
            _ => return f,
        };
        if let Some(live) = lease.live.as_ref().and_then(Weak::upgrade) {
            d.discard(&live).await;
        }
        Failure { message, ..f }
    }
}

impl Dialer {
    async fn lease(self: &Arc<Self>) -> Result<Lease, Failure> {
        if self.server_closed.is_cancelled() {
            return Err(failure(
                "This MCP server is closed: it opens no connection after close().".into(),
            ));
        }
        // Concurrent first callers queue here, so they share one dial.
        let mut slot = self.slot.lock().await;
        if let Some(live) = slot.as_ref() {
            return Ok(Lease {
                bundle: live.bundle.clone(),
                live: Some(Arc::downgrade(live)),
            });
        }
        let started = Instant::now();
        for _ in 0..BORN_DEAD_DIALS {
            if self.server_closed.is_cancelled() {
                return Err(failure(
                    "This MCP server is closed: it opens no connection after close().".into(),
                ));
            }
            let owned = (self.factory)().await.map_err(|e| {
                failure(format!(
                    "Dialling the served surface failed ({}). {STILL_RUNNING} — start the served process, then retry.",
                    e.message
                ))
            })?;
            let live = Arc::new(Live {
                bundle: owned.bundle,
                dispose: Mutex::new(owned.dispose),
                on_close: owned.on_close,
            });
            // A close announced during registration (at once or on the next tick) is a
            // connection born dead: dial again rather than hand out a corpse.
            tokio::task::yield_now().await;
            if live.on_close.as_ref().is_some_and(CloseSignal::is_closed) {
                drop(live);
                if started.elapsed() > BORN_DEAD_WINDOW {
                    break;
                }
                continue;
            }
            if let Some(signal) = live.on_close.clone() {
                let (dialer, weak) = (Arc::downgrade(self), Arc::downgrade(&live));
                tokio::spawn(async move {
                    signal.closed().await;
                    if let (Some(dialer), Some(live)) = (dialer.upgrade(), weak.upgrade()) {
                        dialer.discard(&live).await;
                    }
                });
            }
            *slot = Some(live.clone());
            return Ok(Lease {
                bundle: live.bundle.clone(),
                live: Some(Arc::downgrade(&live)),
            });
        }
        Err(failure(format!(
            "The connection to the served surface died as it was dialled, {BORN_DEAD_DIALS} times within {} s. {STILL_RUNNING} — check that the served process stays up, then retry.",
            BORN_DEAD_WINDOW.as_secs()
        )))
    }

    /// Drops `live` from the slot if it is still the one there (by identity).
    async fn discard(&self, live: &Arc<Live>) {
        let mut slot = self.slot.lock().await;
        if slot.as_ref().is_some_and(|held| Arc::ptr_eq(held, live)) {
            *slot = None;
        }
    }
}
