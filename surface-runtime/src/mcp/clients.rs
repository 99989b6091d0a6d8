//! The MCP face's clients: fixed (serve fresh, in-process) or a bridge to a surface served
//! elsewhere over the one dialled link ([`crate::bundle::link`], [`Redial::OnClose`]), with
//! the sentences an agent reads when that connection fails.
//!
//! The connection's `on_close` discards it the instant it fires, so the next request dials
//! fresh; without one, a transport failure discards it and that one request fails with a
//! sentence saying so. A connection born dead is re-dialled at most [`BORN_DEAD_DIALS`] times
//! within [`BORN_DEAD_WINDOW`], then the link fails loudly. After the server closes, nothing
//! is dialled. A request cut off in flight is never replayed.

use crate::bundle::link::{Connection, Link, Redial};
use crate::bundle::{BundleClient, DialFactory};
use crate::failure::{Failure, FailureKind};
use std::sync::{Arc, Weak};
use std::time::Duration;
use tokio_util::sync::CancellationToken;

/// How many dials a born-dead connection gets.
pub const BORN_DEAD_DIALS: usize = 3;
/// The window those dials must fall in.
pub const BORN_DEAD_WINDOW: Duration = Duration::from_secs(10);

const STILL_RUNNING: &str = "This MCP server is still running and has discarded the dead connection";

/// The clients one generation dispatches over.
pub(crate) enum Clients {
    Fixed(BundleClient),
    Bridged {
        link: Arc<Link>,
        server_closed: CancellationToken,
    },
}

/// Which connection a request used, so a transport failure discards exactly that one.
pub(crate) struct Lease {
    pub bundle: BundleClient,
    connection: Option<Weak<Connection>>,
}

fn failure(message: String) -> Failure {
    Failure::new(
        FailureKind::Transport {
            outcome_unknown: false,
        },
        message,
    )
}

fn server_closed() -> Failure {
    failure("This MCP server is closed: it opens no connection after close().".into())
}

fn born_dead() -> Failure {
    failure(format!(
        "The connection to the served surface died as it was dialled, {BORN_DEAD_DIALS} times within {} s. {STILL_RUNNING} — check that the served process stays up, then retry.",
        BORN_DEAD_WINDOW.as_secs()
    ))
}

impl Clients {
    pub(crate) fn bridged(factory: DialFactory, closed: CancellationToken) -> Clients {
        let server = closed.clone();
        let dial = Box::new(move || {
            let (factory, server) = (factory.clone(), server.clone());
            Box::pin(async move {
                if server.is_cancelled() {
                    return Err(server_closed());
                }
                let mut owned = factory().await.map_err(|e| {
                    failure(format!(
                        "Dialling the served surface failed ({}). {STILL_RUNNING} — start the served process, then retry.",
                        e.message
                    ))
                })?;
                let dispose = owned.dispose.take();
                Ok(Connection::new(
                    owned.bundle.clone(),
                    owned.on_close.clone(),
                    dispose,
                ))
            }) as futures::future::BoxFuture<'static, _>
        });
        let redial = Redial::OnClose {
            dials: BORN_DEAD_DIALS,
            window: BORN_DEAD_WINDOW,
            born_dead,
        };
        Clients::Bridged {
            link: Link::new(redial, dial),
            server_closed: closed,
        }
    }

    /// Whether a dropped watch should re-attach by dialling again (never after close).
    pub(crate) fn redials(&self) -> bool {
        matches!(self, Clients::Bridged { server_closed, .. } if !server_closed.is_cancelled())
    }

    /// The live bundle, dialling when there is none.
    pub(crate) async fn lease(&self) -> Result<Lease, Failure> {
        match self {
            Clients::Fixed(b) => Ok(Lease {
                bundle: b.clone(),
                connection: None,
            }),
            Clients::Bridged {
                link,
                server_closed: closed,
            } => {
                if closed.is_cancelled() {
                    return Err(server_closed());
                }
                let c = link.get().await?;
                Ok(Lease {
                    bundle: c.bundle.clone(),
                    connection: Some(Arc::downgrade(&c)),
                })
            }
        }
    }

    /// Reframes a failed request: a transport death discards the connection it used and says
    /// so; a timeout says so and keeps the connection; an application error keeps the
    /// connection and passes through.
    pub(crate) async fn after(&self, lease: &Lease, f: Failure) -> Failure {
        let Clients::Bridged { link, .. } = self else {
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
        if let Some(c) = lease.connection.as_ref().and_then(Weak::upgrade) {
            link.discard(&c).await;
        }
        Failure { message, ..f }
    }
}
