//! An observer-safe projection of ops: a second surface derived from a live ops, served to
//! agents over MCP, that can look but not touch.
//!
//! It keeps ops' names: `processes` is the process table with a derived `red` verdict per
//! process (red when it is not running), `log` is ops' log bounded to its last 100 lines,
//! `load` is ops' load, and `load.sample` (tool `load_sample`) passes through to ops. There is
//! no `proc.kill`, `proc.spawn` or `proc.configure` at all: the observer does not declare
//! them, so no face of it can reach them.
//!
//! With `--socket PATH` it dials an ops daemon, and dials it again whenever the daemon goes
//! away: meanwhile its members keep their last values, and once ops is back they follow it.
//!
//! ```sh
//! cargo run --example observer                          # MCP on stdio, over an ops in this process
//! cargo run --example ops -- --socket /tmp/ops.sock &   # or: an ops daemon ...
//! cargo run --example observer -- --socket /tmp/ops.sock                       # ... dialled
//! cargo run --example observer -- --socket /tmp/ops.sock --http 127.0.0.1:8932 # over HTTP
//! ```

// The ops surface is declared once, in the ops example; the observer projects that very one.
#[allow(dead_code)]
#[path = "ops.rs"]
pub mod ops;

use ops::{Load, Ops, OpsClient, Process};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::sync::Arc;
use surface::mcp::{BundleClient, McpServer, Member};
use surface::project::{Relayed, Source};
use surface::{Expose, Failure, expose, surface};

/// How many of ops' log lines the observer keeps.
pub const LOG_LINES: usize = 100;

/// One process as the observer sees it: ops' row and its verdict.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Verdict {
    /// Its id.
    pub pid: u32,
    /// Its name.
    pub name: String,
    /// Its state on ops (`running`, `sleeping`, ...).
    pub state: String,
    /// Whether it needs a look: it is not running.
    pub red: bool,
}

impl Verdict {
    /// The verdict on one of ops' processes.
    pub fn of(process: &Process) -> Verdict {
        Verdict {
            pid: process.pid,
            name: process.name.clone(),
            state: process.state.clone(),
            red: process.state != "running",
        }
    }
}

/// The process table with a verdict per process, in pid order.
pub fn verdicts(table: &BTreeMap<u32, Process>) -> Vec<Verdict> {
    table.values().map(Verdict::of).collect()
}

/// What an observer may see of ops, and nothing it may change.
#[surface]
pub struct Observer {
    /// Every process with its verdict (`red`: not running), in pid order.
    #[cell(derived)]
    pub processes: Vec<Verdict>,
    /// The last 100 lines of ops' log, then each new line.
    #[stream(derived)]
    pub log: String,
    /// The machine's load, as ops reports it.
    #[cell(derived)]
    pub load: Load,
    /// ops itself, for the procedures the observer passes through.
    source: Source<OpsClient>,
}

#[surface]
impl Observer {
    /// The current load, sampled on ops.
    #[procedure("load.sample")]
    pub async fn sample(&self) -> Result<Load, Relayed> {
        // ops' namespace `load` is reached through `procedures()`: `load()` is the member.
        Ok(self.source.client().procedures().load().sample().await?)
    }
}

impl Observer {
    /// The observer of the ops that `source` reaches: each derived member read from it now
    /// and kept current from its changes. Dropping the observer ends its watches on ops.
    pub async fn project(source: Source<OpsClient>) -> Result<Observer, Failure> {
        Ok(Observer {
            processes: source.cell_of(OpsClient::processes, verdicts).await?,
            log: source
                .stream(OpsClient::log, LOG_LINES, |line: String| line)
                .await?,
            load: source.cell(OpsClient::load, |load: Load| load).await?,
            source,
        })
    }
}

/// Everything the observer declares reaches an agent: its members as resources, its one
/// procedure as a read-only tool.
pub const EXPOSE: Expose<Observer> = expose!(Observer {
    processes: resource,
    log: resource,
    load: resource,
    "load.sample": tool(read_only),
});

/// What every host reads before it calls anything.
pub const INSTRUCTIONS: &str =
    "A read-only view of the processes on one machine: processes marked red are not running.";

/// The observer's MCP server over a live observer.
pub fn mcp_server(observer: Arc<Observer>) -> McpServer {
    McpServer::new("observer", env!("CARGO_PKG_VERSION"))
        .instructions(INSTRUCTIONS)
        .core(Member::new(EXPOSE))
        .client(move || BundleClient::with_core(ObserverClient::direct(observer.clone())))
}

/// The source the command line names: the ops daemon at `--socket PATH` (re-dialled when it
/// restarts), or a fresh ops in this process.
async fn source(socket: Option<&str>) -> Result<Source<OpsClient>, Failure> {
    Ok(match socket {
        // Dialled again whenever the daemon goes away: the observer outlives ops restarts.
        Some(path) => {
            let path = std::path::PathBuf::from(path);
            Source::redialling(move || surface::wire::dial_unix_socket::<Ops>(path.clone())).await?
        }
        None => Source::new(OpsClient::direct(Arc::new(Ops::new()))),
    })
}

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    surface::mcp::init_tracing();
    // `--no-ui`, which ops takes, is accepted and changes nothing: the observer has no views.
    let args: Vec<String> = std::env::args().skip(1).filter(|a| a != "--no-ui").collect();
    let (socket, http) = match args.iter().map(String::as_str).collect::<Vec<_>>().as_slice() {
        [] => (None, None),
        ["--socket", path] => (Some(path.to_string()), None),
        ["--http", addr] => (None, Some(addr.to_string())),
        ["--socket", path, "--http", addr] | ["--http", addr, "--socket", path] => {
            (Some(path.to_string()), Some(addr.to_string()))
        }
        _ => {
            eprintln!(
                "usage: observer [--socket PATH] [--http ADDR]   (no --socket: over an ops in this process; no --http: MCP on stdio)"
            );
            std::process::exit(2);
        }
    };
    let projected = async { Observer::project(source(socket.as_deref()).await?).await };
    let observer = match projected.await {
        Ok(observer) => Arc::new(observer),
        Err(e) => {
            eprintln!("observer: {e}");
            std::process::exit(1);
        }
    };
    let served = mcp_server(observer).start()?;
    match http {
        None => served.serve_stdio().await?,
        Some(addr) => ops::serve_http(served, &addr, false).await?,
    }
    Ok(())
}
