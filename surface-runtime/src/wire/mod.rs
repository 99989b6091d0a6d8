//! The wire face: serve a surface over a unix socket (or a child's stdio), and dial one.
//!
//! The server takes the same [`crate::Expose`] map as the MCP face: what it does not name is
//! unreachable over the wire too. The dialer hands back an [`OwnedConnection`] whose `client`
//! is the surface's generated typed client over a [`SocketDispatch`]. Framing is
//! newline-delimited JSON, bounded to [`MAX_FRAME`] bytes; see [`protocol`].

mod client;
pub mod protocol;
mod server;

pub use client::{CloseSignal, OwnedConnection, SocketDispatch, dial_child, dial_unix_socket};
pub use protocol::MAX_FRAME;
pub use server::{WireServer, serve_streams, serve_unix_socket};
