//! The process's stdio taken for a face's protocol (MCP's JSON-RPC, the wire face's frames),
//! with stdout kept for that protocol alone.
//!
//! On unix, at start-up the real stdout is duplicated for the protocol and file descriptor 1 is
//! pointed at stderr, so a stray `println!` (ours, the user's or a dependency's) lands on stderr
//! and cannot corrupt the stream; pipes are driven without the blocking pool where possible.
//! Elsewhere the protocol takes tokio's stdin and stdout as they are.

use std::io;
#[cfg(unix)]
use std::os::fd::{AsRawFd, OwnedFd};
use tokio::io::{AsyncRead, AsyncWrite};

/// The protocol's reader and writer.
pub(crate) type Io = (
    Box<dyn AsyncRead + Send + Unpin>,
    Box<dyn AsyncWrite + Send + Unpin>,
);

/// Takes stdin and stdout for the protocol as they are (no descriptor to repoint).
#[cfg(not(unix))]
pub(crate) fn take() -> io::Result<Io> {
    Ok((Box::new(tokio::io::stdin()), Box::new(tokio::io::stdout())))
}

/// Takes stdin and the real stdout for the protocol, and points fd 1 at stderr.
#[cfg(unix)]
pub(crate) fn take() -> io::Result<Io> {
    let protocol_out = crate::stdout::keep()?;
    let protocol_in = crate::stdout::duplicate(0)?;
    let reader: Box<dyn AsyncRead + Send + Unpin> = if is_fifo(&protocol_in) {
        Box::new(tokio::net::unix::pipe::Receiver::from_owned_fd(protocol_in)?)
    } else {
        drop(protocol_in);
        Box::new(tokio::io::stdin())
    };
    let writer: Box<dyn AsyncWrite + Send + Unpin> = if is_fifo(&protocol_out) {
        Box::new(tokio::net::unix::pipe::Sender::from_owned_fd(protocol_out)?)
    } else {
        Box::new(tokio::fs::File::from_std(std::fs::File::from(protocol_out)))
    };
    Ok((reader, writer))
}

#[cfg(unix)]
fn is_fifo(fd: &OwnedFd) -> bool {
    // SAFETY: fstat writes into the zeroed struct we own.
    unsafe {
        let mut st: libc::stat = std::mem::zeroed();
        libc::fstat(fd.as_raw_fd(), &mut st) == 0 && (st.st_mode & libc::S_IFMT) == libc::S_IFIFO
    }
}
