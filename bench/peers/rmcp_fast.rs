//! Not a baseline: the tuned rmcp server (router built once) on surface's own stdio transport
//! (`surface-runtime/src/mcp/transport.rs`: method-first parsing, batched writes, bounded in
//! flight), on a current-thread runtime (`--multi-thread`: the default multi-thread one). It
//! measures what that transport buys rmcp alone.

// The transport serve_stdio uses, included as is (no copy to drift from it), with the writer
// loop it shares with the wire face.
#[path = "../../surface-runtime/src/batch.rs"]
mod batch;
#[path = "../../surface-runtime/src/mcp/transport.rs"]
mod fast_transport;
#[path = "table.rs"]
mod table;

use rmcp::handler::server::router::tool::ToolRouter;
use rmcp::handler::server::wrapper::{Json, Parameters};
use rmcp::{ServerHandler, ServiceExt, tool, tool_handler, tool_router};
use std::sync::Arc;
use table::{Kill, Killed, Load, Process, Spawn, Table};

#[derive(Clone)]
struct Ops {
    table: Arc<Table>,
    tool_router: ToolRouter<Self>,
}

#[tool_router]
impl Ops {
    fn new() -> Self {
        Ops {
            table: Arc::new(Table::new()),
            tool_router: Self::tool_router(),
        }
    }

    /// Start a process.
    #[tool(
        name = "proc_spawn",
        annotations(read_only_hint = false, destructive_hint = true)
    )]
    async fn proc_spawn(&self, Parameters(input): Parameters<Spawn>) -> Json<Process> {
        Json(self.table.spawn(input.name))
    }

    /// Stop a process.
    #[tool(
        name = "proc_kill",
        annotations(read_only_hint = false, destructive_hint = true)
    )]
    async fn proc_kill(&self, Parameters(input): Parameters<Kill>) -> Result<Json<Killed>, String> {
        self.table.kill(input.pid).map(Json)
    }

    /// The current load.
    #[tool(
        name = "load_sample",
        annotations(read_only_hint = true, destructive_hint = false)
    )]
    async fn load_sample(&self) -> Json<Load> {
        Json(self.table.sample())
    }
}

#[tool_handler(router = self.tool_router, name = "ops", version = "0.1.0", instructions = "Everything here is about processes, not files.")]
impl ServerHandler for Ops {}

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
        let transport = fast_transport::FastTransport::new(reader, writer, fast_transport::Limits::default());
        Ops::new().serve(transport).await?.waiting().await?;
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
