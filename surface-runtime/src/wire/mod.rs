//! The wire face: serve a surface over a unix socket (or a child's stdio), and dial one.
//!
//! The server takes the same [`crate::Expose`] map as the MCP face: what it does not name is
//! unreachable over the wire too. The dialer hands back an [`OwnedConnection`] whose `client`
//! is the surface's generated typed client over a [`SocketDispatch`]. Framing is
//! newline-delimited JSON, bounded to [`MAX_FRAME`] bytes; see [`protocol`].

mod batches;
mod client;
mod connection;
mod dial;
mod dial_options;
mod frame_codec;
mod options;
pub mod protocol;
mod server;

pub use client::{CloseSignal, OwnedConnection, SocketDispatch};
pub use dial::{dial_child, dial_child_with, dial_unix_socket, dial_unix_socket_with};
pub use dial_options::DialOptions;
pub use options::WireOptions;
pub use protocol::{MAX_FRAME, Reach};
pub use server::{
    WireServer, serve_stdio_until, serve_streams, serve_streams_until, serve_streams_with, serve_unix_socket,
    serve_unix_socket_with,
};
