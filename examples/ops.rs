//! The ops surface: a tiny process table served to agents.
//!
//! `cargo run --example ops` serves it over MCP on stdio.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use std::convert::Infallible;
use std::sync::Arc;
use std::sync::atomic::{AtomicU32, Ordering};
use surface::mcp::{BundleClient, McpServer, Member};
use surface::{CancellationToken, Expose, ToolFailure, expose, surface, tool};

/// The machine's load.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Load {
    /// CPU use, 0.0 to 1.0 per core.
    pub cpu: f64,
    /// How many processes run.
    pub procs: u32,
}

/// One process.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Process {
    /// Its id.
    pub pid: u32,
    /// Its name.
    pub name: String,
    /// `running`, `sleeping`, ...
    pub state: String,
}

/// An autosave happened.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Saved {
    /// How many processes were saved.
    pub procs: u32,
}

/// Input of `proc.spawn`.
#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]
pub struct Spawn {
    /// Name of the new process.
    pub name: String,
}

/// Input of `proc.kill`.
#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]
pub struct Kill {
    /// The process to kill.
    pub pid: u32,
}

/// What `proc.kill` answers.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Killed {
    /// Always true.
    pub ok: bool,
}

/// Why `proc.kill` refused.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(tag = "kind", rename_all = "kebab-case")]
pub enum KillRefusal {
    /// No process has that pid.
    NoSuchProcess {
        /// The pid asked for.
        pid: u32,
    },
}

/// Input of `proc.configure`.
#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]
pub struct Configure {
    /// The process.
    pub pid: u32,
    /// Its new niceness.
    pub nice: i8,
}

/// Processes on one machine.
#[surface]
pub struct Ops {
    /// The machine's load.
    #[cell]
    pub load: Load,
    /// Every process, by pid.
    #[collection(key = u32)]
    pub processes: Process,
    /// The log: every line so far, then each new line.
    #[stream]
    pub log: String,
    /// Published when the process table is saved.
    #[event]
    pub autosave: Saved,
    next_pid: AtomicU32,
}

impl Ops {
    /// The ops surface in its starting state: `init` and `shell` running.
    pub fn new() -> Self {
        let running = |pid: u32, name: &str| {
            (
                pid,
                Process {
                    pid,
                    name: name.into(),
                    state: "running".into(),
                },
            )
        };
        Ops {
            load: surface::Cell::new(Load { cpu: 0.0, procs: 2 }),
            processes: [running(1, "init"), running(2, "shell")].into_iter().collect(),
            log: surface::Stream::new(),
            autosave: surface::Event::new(),
            next_pid: AtomicU32::new(3),
        }
    }
}

impl Default for Ops {
    fn default() -> Self {
        Ops::new()
    }
}

#[surface]
impl Ops {
    /// Start a process.
    #[procedure("proc.spawn")]
    pub async fn spawn(&self, input: Spawn) -> Result<Process, Infallible> {
        let pid = self.next_pid.fetch_add(1, Ordering::Relaxed);
        let process = Process {
            pid,
            name: input.name,
            state: "running".into(),
        };
        self.processes.upsert(pid, process.clone());
        self.load.update(|l| l.procs = self.processes.len() as u32);
        self.log.push(format!("spawned {} as {pid}", process.name));
        // A stray print, as handlers and their dependencies do: stdout belongs to the protocol,
        // so the MCP face has pointed it at stderr and this cannot corrupt the stream.
        println!("spawned {} as {pid}", process.name);
        Ok(process)
    }

    /// Stop a process.
    #[procedure("proc.kill")]
    pub async fn kill(&self, input: Kill) -> Result<Killed, ToolFailure<KillRefusal>> {
        let Some(process) = self.processes.remove(&input.pid) else {
            return Err(ToolFailure::new(
                format!("there is no process {}", input.pid),
                KillRefusal::NoSuchProcess { pid: input.pid },
            ));
        };
        self.load.update(|l| l.procs = self.processes.len() as u32);
        self.log
            .push(format!("killed {} ({})", process.pid, process.name));
        Ok(Killed { ok: true })
    }

    /// Change a process's niceness. Never exposed to agents.
    #[procedure("proc.configure")]
    pub async fn configure(&self, input: Configure) -> Result<Killed, ToolFailure> {
        self.log
            .push(format!("configured {} to nice {}", input.pid, input.nice));
        Ok(Killed { ok: true })
    }

    /// The current load.
    #[procedure("load.sample")]
    pub async fn sample(&self) -> Result<Load, Infallible> {
        Ok(self.load.get())
    }
}

/// Input of `count`.
#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]
pub struct CountArgs {
    /// Only processes in this state (all when absent).
    pub state: Option<String>,
}

/// Count processes, optionally only those in one state.
#[tool(read_only, title = "Count processes")]
pub async fn count(
    args: CountArgs,
    client: &OpsClient,
    _cancel: CancellationToken,
) -> Result<u32, surface::Failure> {
    let mut n = 0;
    for pid in client.processes().keys().await? {
        let Some(p) = client.processes().get(&pid).await? else {
            continue;
        };
        if args.state.as_deref().is_none_or(|s| s == p.state) {
            n += 1;
        }
    }
    Ok(n)
}

/// What agents may touch: everything but `proc.configure`.
pub const EXPOSE: Expose<Ops> = expose!(Ops {
    load: resource,
    processes: resource,
    log: resource,
    autosave: resource,
    "proc.spawn": tool,
    "proc.kill": tool(mutates),
    "load.sample": tool(read_only),
});

/// The instructions every host reads before it calls anything.
pub const INSTRUCTIONS: &str = "Everything here is about processes, not files.";

/// The ops MCP server over a live `Ops`.
pub fn mcp_server(ops: Arc<Ops>) -> McpServer {
    McpServer::new("ops", env!("CARGO_PKG_VERSION"))
        .instructions(INSTRUCTIONS)
        .core(Member::new(EXPOSE).tool(CountTool))
        .client(move || BundleClient::with_core(OpsClient::direct(ops.clone())))
}

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let served = mcp_server(Arc::new(Ops::new())).start()?;
    served.serve_stdio().await?;
    Ok(())
}
