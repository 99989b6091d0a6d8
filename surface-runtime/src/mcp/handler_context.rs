//! A request's context as the handler reads it: rmcp's `RequestContext`, whose peer is either
//! moved in from rmcp's loop or shared with the fast path's session.
//!
//! rmcp's context owns a clone of the session's peer: eight `Arc`s and a channel's sender, nine
//! atomic increments as it is made and nine decrements as it drops. A fast path holds that peer
//! once per session ([`SharedPeer`]), and a call answered there (most are) now shares it: one
//! increment. That clone was ~4 % of a stdio call's time (bench/NOTES.md). rmcp's loop hands the
//! handler its own context, which is taken over as it is, peer and all, with nothing cloned.

use rmcp::model::{ClientCapabilities, ProtocolVersion, RequestId, RequestMetaObject};
use rmcp::service::RequestContext;
use rmcp::{Peer, RoleServer};
use std::sync::Arc;
use tokio_util::sync::CancellationToken;

/// A peer a fast path holds for its session (`fast.rs`), shared by the calls it answers.
pub(crate) type SharedPeer = Arc<Peer<RoleServer>>;

/// The session's peer as a request holds it: rmcp's own (moved in from its loop's context, or
/// cloned), or the session's, shared with the fast path that answers the request.
pub(crate) enum CallPeer {
    /// A peer of the request's own (rmcp's loop, or a round outside the fast paths).
    Cloned(Peer<RoleServer>),
    /// The session's, as the fast path holds it.
    Shared(SharedPeer),
}

impl CallPeer {
    /// Another handle on the same peer, as cheap as this one's kind allows: a shared one is one
    /// atomic increment, an owned one rmcp's full clone.
    pub(crate) fn share(&self) -> CallPeer {
        match self {
            CallPeer::Cloned(peer) => CallPeer::Cloned(peer.clone()),
            CallPeer::Shared(peer) => CallPeer::Shared(peer.clone()),
        }
    }

    /// The peer as rmcp takes it, by value.
    pub(crate) fn into_peer(self) -> Peer<RoleServer> {
        match self {
            CallPeer::Cloned(peer) => peer,
            CallPeer::Shared(peer) => Peer::clone(&peer),
        }
    }
}

impl std::ops::Deref for CallPeer {
    type Target = Peer<RoleServer>;

    fn deref(&self) -> &Peer<RoleServer> {
        match self {
            CallPeer::Cloned(peer) => peer,
            CallPeer::Shared(peer) => peer,
        }
    }
}

/// What the handler knows of one request: rmcp's `RequestContext`, field for field, with the
/// session's peer held as [`CallPeer`].
pub(crate) struct HandlerContext {
    /// Cancelled when `notifications/cancelled` names the request (or its connection ends).
    pub(crate) ct: CancellationToken,
    pub(crate) id: RequestId,
    pub(crate) meta: RequestMetaObject,
    /// What the transport knows of the request (its HTTP head, the caller it identified).
    pub(crate) extensions: rmcp::model::Extensions,
    pub(crate) peer: CallPeer,
}

impl From<RequestContext<RoleServer>> for HandlerContext {
    /// rmcp's loop's context, taken over whole.
    fn from(context: RequestContext<RoleServer>) -> HandlerContext {
        HandlerContext {
            ct: context.ct,
            id: context.id,
            meta: context.meta,
            extensions: context.extensions,
            peer: CallPeer::Cloned(context.peer),
        }
    }
}

impl HandlerContext {
    /// A fast path's context for request `id` of the session whose peer is `peer`, under a
    /// token of its own, with an empty `_meta` and no extensions (as rmcp's `RequestContext::new`).
    pub(crate) fn shared(id: RequestId, peer: SharedPeer) -> HandlerContext {
        HandlerContext {
            ct: CancellationToken::new(),
            id,
            meta: RequestMetaObject::default(),
            extensions: rmcp::model::Extensions::default(),
            peer: CallPeer::Shared(peer),
        }
    }

    /// The context rmcp's dispatch takes (for a request the handler leaves to it).
    pub(crate) fn into_rmcp(self) -> RequestContext<RoleServer> {
        let mut context = RequestContext::new(self.id, self.peer.into_peer());
        context.ct = self.ct;
        context.meta = self.meta;
        context.extensions = self.extensions;
        context
    }

    /// rmcp's `RequestContext::protocol_version`: the request's own, else its session's.
    pub(crate) fn protocol_version(&self) -> Option<ProtocolVersion> {
        self.meta
            .protocol_version()
            .or_else(|| self.peer.peer_info().map(|info| info.protocol_version.clone()))
    }

    /// rmcp's `RequestContext::client_capabilities`: the request's `_meta`'s, else (only in a
    /// session rmcp falls back for) its session's. Whether it falls back is rmcp's to say, so
    /// that half is read through rmcp's own accessor, with an empty `_meta`; it is asked only
    /// off the hot path (a task tool's call, a view's, a list).
    pub(crate) fn client_capabilities(&self) -> Option<ClientCapabilities> {
        self.meta
            .client_capabilities()
            .or_else(|| RequestContext::new(self.id.clone(), Peer::clone(&self.peer)).client_capabilities())
    }
}
