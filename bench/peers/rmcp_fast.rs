//! Not a baseline: the tuned rmcp server (router built once) on surface's own stdio transport
//! (the one `serve_stdio` uses, `surface::mcp::__transport`: method-first parsing, batched
//! writes, bounded in flight), on a current-thread runtime (`--multi-thread`: the default
//! multi-thread one). It measures what that transport buys rmcp alone.

#[path = "rmcp_ops.rs"]
mod rmcp_ops;
#[path = "table.rs"]
mod table;

use rmcp::ServiceExt;
use surface::mcp::__transport::{FastTransport, Limits};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut rt = if std::env::args().any(|a| a == "--multi-thread") {
        tokio::runtime::Builder::new_multi_thread()
    } else {
        tokio::runtime::Builder::new_current_thread()
    };
    rt.enable_all().build()?.block_on(async {
        use std::os::fd::FromRawFd;
        // SAFETY: fds 0 and 1 are this process's, duplicated here and owned once each.
        let (input, output) = unsafe {
            (
                std::os::fd::OwnedFd::from_raw_fd(libc_dup(0)?),
                std::os::fd::OwnedFd::from_raw_fd(libc_dup(1)?),
            )
        };
        set_nonblocking(&input)?;
        set_nonblocking(&output)?;
        let reader = tokio::net::unix::pipe::Receiver::from_owned_fd(input)?;
        let writer = tokio::net::unix::pipe::Sender::from_owned_fd(output)?;
        let transport = FastTransport::new(reader, writer, Limits::default());
        rmcp_ops::Ops::new().serve(transport).await?.waiting().await?;
        Ok(())
    })
}

fn libc_dup(fd: i32) -> std::io::Result<i32> {
    // SAFETY: dup of a descriptor this process owns.
    let r = unsafe { libc::fcntl(fd, libc::F_DUPFD_CLOEXEC, 3) };
    if r < 0 {
        Err(std::io::Error::last_os_error())
    } else {
        Ok(r)
    }
}

fn set_nonblocking(fd: &std::os::fd::OwnedFd) -> std::io::Result<()> {
    use std::os::fd::AsRawFd;
    // SAFETY: fcntl on a descriptor we own.
    unsafe {
        let flags = libc::fcntl(fd.as_raw_fd(), libc::F_GETFL);
        if flags < 0 || libc::fcntl(fd.as_raw_fd(), libc::F_SETFL, flags | libc::O_NONBLOCK) < 0 {
            return Err(std::io::Error::last_os_error());
        }
    }
    Ok(())
}
