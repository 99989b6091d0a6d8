//! The HTTP face's legacy sessions: rmcp's local session manager, shared across instances when
//! a backend offers to (the seam [`SessionSharing`], which the Redis store implements).
//!
//! Unshared, every call goes straight to the local manager. Shared, the backend holds the
//! sessions' state and their standalone streams' events, so another instance can restore a
//! session and a client can resume its stream there; this module only tells the backend when a
//! session is used or closed and where a resumption starts.

use super::http_call_streams::{CallStreams, Diverting};
use futures::Stream;
use rmcp::model::{ClientJsonRpcMessage, ServerJsonRpcMessage};
use rmcp::transport::streamable_http_server::RestoreOutcome;
use rmcp::transport::streamable_http_server::session::local::{
    LocalSessionManager, LocalSessionManagerError,
};
use rmcp::transport::streamable_http_server::session::{
    EventStore, ServerSseMessage, SessionId, SessionManager, SessionStore,
};
use std::sync::Arc;

/// Where legacy sessions and their events live when several instances serve one surface.
///
/// Hidden: the seam a backend implements (`HttpOptions::store`, feature `redis`).
#[doc(hidden)]
pub trait SessionSharing: Send + Sync + std::fmt::Debug {
    /// `local` with its events where every instance finds them, and the store rmcp restores
    /// sessions from.
    fn share(&self, local: LocalSessionManager) -> (Arc<LocalSessionManager>, Arc<dyn SessionStore>);
    /// The session `id` was used here.
    fn touch(&self, id: &SessionId);
    /// The session `id` closed here.
    fn closed(&self, id: &SessionId);
    /// The event id a resumption of `id` from `last_event_id` starts after.
    fn resume_from(&self, id: &SessionId, last_event_id: String) -> String;
    /// Records that the authenticated subject `owner` opened the session `id`, where every
    /// instance finds it (kept as long as the session's state).
    #[cfg_attr(not(feature = "auth"), allow(dead_code))] // read only by authentication
    fn bind<'a>(&'a self, id: &'a SessionId, owner: &'a Owner) -> Pending<'a, Result<(), String>>;
    /// Who opened the session `id`, as [`bind`](Self::bind) recorded it; none when no record
    /// is found (or the backend cannot answer).
    #[cfg_attr(not(feature = "auth"), allow(dead_code))] // read only by authentication
    fn owner<'a>(&'a self, id: &'a SessionId) -> Pending<'a, Option<Owner>>;
}

/// Who opened a legacy session on a protected endpoint: the issuer and subject of its token.
#[cfg_attr(not(feature = "auth"), allow(dead_code))] // read only by authentication
pub type Owner = (String, String);

pub use super::task_sharing::Pending;

/// The session manager the endpoint serves with: the local one, shared when a backend says so.
pub(crate) struct Sessions {
    local: Arc<LocalSessionManager>,
    shared: Option<Arc<dyn SessionSharing>>,
    /// The streams of calls the bypass answers, where their requests to the host go.
    calls: Arc<CallStreams>,
}

impl Sessions {
    pub(crate) fn local(local: Arc<LocalSessionManager>, calls: Arc<CallStreams>) -> Self {
        Sessions {
            local,
            shared: None,
            calls,
        }
    }

    pub(crate) fn shared(
        local: Arc<LocalSessionManager>,
        sharing: Arc<dyn SessionSharing>,
        calls: Arc<CallStreams>,
    ) -> Self {
        Sessions {
            local,
            shared: Some(sharing),
            calls,
        }
    }

    fn touch(&self, id: &SessionId) {
        if let Some(shared) = &self.shared {
            shared.touch(id);
        }
    }
}

impl SessionManager for Sessions {
    type Error = LocalSessionManagerError;
    type Transport = Diverting<<LocalSessionManager as SessionManager>::Transport>;

    async fn create_session(&self) -> Result<(SessionId, Self::Transport), Self::Error> {
        let (id, transport) = self.local.create_session().await?;
        let transport = Diverting::new(transport, id.clone(), self.calls.clone());
        Ok((id, transport))
    }

    async fn initialize_session(
        &self,
        id: &SessionId,
        message: ClientJsonRpcMessage,
    ) -> Result<ServerJsonRpcMessage, Self::Error> {
        self.local.initialize_session(id, message).await
    }

    async fn has_session(&self, id: &SessionId) -> Result<bool, Self::Error> {
        self.local.has_session(id).await
    }

    async fn close_session(&self, id: &SessionId) -> Result<(), Self::Error> {
        if let Some(shared) = &self.shared {
            shared.closed(id);
        }
        self.local.close_session(id).await
    }

    async fn create_stream(
        &self,
        id: &SessionId,
        message: ClientJsonRpcMessage,
    ) -> Result<impl Stream<Item = ServerSseMessage> + Send + Sync + 'static, Self::Error> {
        self.touch(id);
        self.local.create_stream(id, message).await
    }

    async fn accept_message(&self, id: &SessionId, message: ClientJsonRpcMessage) -> Result<(), Self::Error> {
        self.touch(id);
        self.local.accept_message(id, message).await
    }

    async fn create_standalone_stream(
        &self,
        id: &SessionId,
    ) -> Result<impl Stream<Item = ServerSseMessage> + Send + Sync + 'static, Self::Error> {
        self.touch(id);
        self.local.create_standalone_stream(id).await
    }

    async fn resume(
        &self,
        id: &SessionId,
        last_event_id: String,
    ) -> Result<impl Stream<Item = ServerSseMessage> + Send + Sync + 'static, Self::Error> {
        let last_event_id = match &self.shared {
            Some(shared) => {
                shared.touch(id);
                shared.resume_from(id, last_event_id)
            }
            None => last_event_id,
        };
        self.local.resume(id, last_event_id).await
    }

    async fn restore_session(&self, id: SessionId) -> Result<RestoreOutcome<Self::Transport>, Self::Error> {
        Ok(match self.local.restore_session(id.clone()).await? {
            RestoreOutcome::Restored(transport) => {
                RestoreOutcome::Restored(Diverting::new(transport, id, self.calls.clone()))
            }
            RestoreOutcome::AlreadyPresent => RestoreOutcome::AlreadyPresent,
            _ => RestoreOutcome::NotSupported,
        })
    }

    /// Shared: none — rmcp persists a stateless response stream through this store in a task
    /// that outlives the client's connection, so a `subscriptions/listen` would never end; local:
    /// the local manager's.
    fn event_store(&self) -> Option<Arc<dyn EventStore>> {
        match self.shared {
            Some(_) => None,
            None => self.local.event_store(),
        }
    }
}
