//! The ops surface: a tiny process table served to agents.
//!
//! `cargo run --example ops` serves it over MCP on stdio; `-- --http 127.0.0.1:PORT` serves it
//! over Streamable HTTP at `http://127.0.0.1:PORT/mcp` instead (loopback only unless
//! `--http-allow-remote` follows). `-- --socket PATH` serves the surface itself as a daemon on a
//! unix socket (`-- --wire-stdio`: on its own stdio, for `ssh`), and `-- --bridge PATH` is an MCP
//! stdio server bridging to that daemon (`--bridge-timeout-ms N` after it: how long a bridged
//! request waits for the daemon's answer, 30 s by default).
//!
//! Who may use the daemon: `--grant UID=SCOPE[,SCOPE]` after `--socket PATH` (repeatable) serves
//! that uid with those scopes (`ops.read`, `ops.admin`); with grants the socket is connectable by
//! every uid and an ungranted one is refused, without them it stays owner-only. `--scope
//! SCOPE[,SCOPE]` (repeatable) after `--bridge PATH`, or alone for MCP on stdio, narrows what the
//! agent reaches to those scopes: the bridge lists and calls only that, and dials the daemon with
//! them. A bridge also shows no more than the daemon grants its uid (it asks the daemon at start).
//!
//! `--auth-issuer URL --auth-audience URL` after `--http ADDR` (both, or neither) makes the
//! endpoint an OAuth 2.1 protected resource: every request needs a JWT access token issued by
//! that issuer for that audience (the endpoint's own URL, e.g. `http://127.0.0.1:PORT/mcp`),
//! and the server publishes its metadata at `/.well-known/oauth-protected-resource`. With
//! authentication a non-loopback address needs no `--http-allow-remote`.
//!
//! Built with the `redis` feature, `-- --http 127.0.0.1:PORT --redis redis://127.0.0.1:6379/`
//! keeps the surface's members (and the next pid) in Redis, so several instances on several
//! ports serve one process table and each one's subscribers hear changes made through any. Its
//! HTTP sessions and their SSE events live there too: a client whose stream broke reconnects to
//! any instance with `Mcp-Session-Id` and `Last-Event-ID` and gets the events it missed.
//! `--redis-cluster URL[,URL]` instead keeps them in the Redis Cluster those nodes belong to
//! (every write acknowledged once a replica of its master has it, so a failover loses none).
//!
//! The MCP server declares one MCP Apps view, `ui://ops/processes` (`examples/views/processes.html`),
//! bound to the read-only tool `processes_view`; hosts that render views show the process table
//! as a page. `--no-ui` (before or after the other flags) serves no view and no UI meta.
//!
//! It serves one skill (the MCP skills extension), `skill://triage/SKILL.md`: how to investigate
//! a loaded machine with the `load` and `processes` resources and the `proc_kill` tool, listed
//! by `skills/list` to callers whose scopes reach all three (`ops.admin`).
//!
//! `--metrics ADDR` (anywhere, with any MCP face) serves the server's metrics as Prometheus text at
//! `http://ADDR/metrics` (`127.0.0.1:0` picks a free port; the address is reported on stderr).
//! The names are listed in `surface::mcp::observe` and the guide's observability chapter.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use std::convert::Infallible;
use std::sync::Arc;
use surface::mcp::{BundleClient, McpServer, Member, OwnedBundle};
use surface::prompt::PromptAnswer;
use surface::skill::Skill;
use surface::view::{Csp, View};
use surface::{CancellationToken, Expose, ToolFailure, expose, scopes, skill, surface, tool};

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
    /// Start it sleeping instead of running.
    #[serde(default)]
    pub paused: bool,
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
    /// The next pid to hand out: a [`surface::Counter`], so that instances sharing a store
    /// never hand out the same pid twice.
    pub next_pid: surface::Counter,
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
            next_pid: surface::Counter::new(3),
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
        eprintln!("ops: executing proc.spawn {}", input.name);
        // A demo and test knob: a slow spawn makes a call that can be cut off in flight.
        if let Some(ms) = std::env::var("OPS_SPAWN_DELAY_MS")
            .ok()
            .and_then(|v| v.parse().ok())
        {
            tokio::time::sleep(std::time::Duration::from_millis(ms)).await;
        }
        let pid = self.next_pid.next() as u32;
        let process = Process {
            pid,
            name: input.name,
            state: if input.paused { "sleeping" } else { "running" }.into(),
        };
        self.processes.upsert(pid, process.clone());
        // Counted, not re-read: an update's closure holds the value's turn (and may run again
        // on a newer value), so it does no I/O — in Redis mode a `len()` in it would be a
        // round trip every caller of this hot cell waits behind.
        self.load.update(|l| l.procs += 1);
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
        self.load.update(|l| l.procs = l.procs.saturating_sub(1));
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
    /// Only running processes (true), only the others (false), or all (absent).
    pub running: Option<bool>,
}

/// Count processes, optionally only those in one state.
#[tool(read_only, scope = read, title = "Count processes")]
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
        if args.state.as_deref().is_none_or(|s| s == p.state)
            && args.running.is_none_or(|r| r == (p.state == "running"))
        {
            n += 1;
        }
    }
    Ok(n)
}

/// The process table as a page: an MCP Apps view, self-contained (no origin to reach), shown by
/// hosts that render views next to `processes_view`'s answer.
pub const PROCESSES: View = surface::view!("ui://ops/processes", include_str!("views/processes.html"))
    .title("Processes")
    .description("The process table, rendered from the answer of processes_view.")
    .csp(Csp::NONE)
    .prefers_border(true);

/// What `processes_view` answers: every process, by pid.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct ProcessTable {
    /// Every process, in pid order.
    pub processes: Vec<Process>,
}

/// The process table: pid, name and state of every process.
///
/// Hosts that render MCP Apps views show it as the ui://ops/processes page; the answer is the
/// same table as JSON.
#[tool(read_only, scope = read, title = "Process table", view = PROCESSES)]
pub async fn processes_view(client: &OpsClient) -> Result<ProcessTable, surface::Failure> {
    let mut processes = Vec::new();
    for pid in client.processes().keys().await? {
        if let Some(p) = client.processes().get(&pid).await? {
            processes.push(p);
        }
    }
    processes.sort_by_key(|p| p.pid);
    Ok(ProcessTable { processes })
}

/// Input of `proc_wait`.
#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]
pub struct Wait {
    /// The process to wait for.
    pub pid: u32,
    /// Give up after this many seconds (default 600); a client that can answer is asked
    /// whether to wait as long again.
    pub timeout_secs: Option<u64>,
}

/// What `proc_wait` asks when a process outlives its timeout.
#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema, surface::Elicit)]
pub struct KeepWaiting {
    /// Wait as long again.
    pub keep_waiting: bool,
}

/// What `proc_wait` answers.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Exited {
    /// The process that exited.
    pub pid: u32,
    /// How long it was waited for, in milliseconds.
    pub waited_ms: u64,
}

/// Wait until a process exits (it is killed), reporting progress while it runs.
///
/// Long: for a client that supports MCP tasks it runs as a task (poll `tasks/get`); others wait
/// inline. When the process outlives the timeout, a client that can answer elicitations is asked
/// whether to wait as long again (in a task, an `input_required` status).
#[tool(read_only, task, scope = read, title = "Wait for a process")]
pub async fn proc_wait(
    args: Wait,
    client: &OpsClient,
    ctx: surface::context::ToolContext,
) -> Result<Exited, surface::Failure> {
    let started = std::time::Instant::now();
    let timeout = std::time::Duration::from_secs(args.timeout_secs.unwrap_or(600));
    let mut deadline = timeout;
    let Some(process) = client.processes().get(&args.pid).await? else {
        return Err(surface::Failure::new(
            surface::FailureKind::Refused,
            format!("there is no process {}", args.pid),
        ));
    };
    loop {
        if client.processes().get(&args.pid).await?.is_none() {
            let waited_ms = u64::try_from(started.elapsed().as_millis()).unwrap_or(u64::MAX);
            return Ok(Exited {
                pid: args.pid,
                waited_ms,
            });
        }
        let waited = started.elapsed();
        if waited >= deadline {
            let question = format!(
                "{} (pid {}) still runs after {}s: wait {}s more?",
                process.name,
                args.pid,
                waited.as_secs(),
                timeout.as_secs()
            );
            let again = ctx.elicit::<KeepWaiting>(question).await;
            if again.is_ok_and(|a| a.accepted().is_some_and(|a| a.keep_waiting)) {
                deadline += timeout;
                continue;
            }
            return Err(surface::Failure::new(
                surface::FailureKind::Error,
                format!(
                    "{} (pid {}) still runs after {}s",
                    process.name,
                    args.pid,
                    deadline.as_secs()
                ),
            ));
        }
        ctx.progress_with(
            waited.as_secs_f64(),
            Some(deadline.as_secs_f64()),
            format!(
                "waiting for {} (pid {}) to exit: {}s",
                process.name,
                args.pid,
                waited.as_secs()
            ),
        )
        .await;
        tokio::select! {
            _ = ctx.cancelled() => return Err(surface::Failure::new(surface::FailureKind::Error, "cancelled")),
            _ = tokio::time::sleep(std::time::Duration::from_millis(200)) => {}
        }
    }
}

/// A process state, as `triage` takes it.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum ProcState {
    /// Processes that run.
    Running,
    /// Processes that sleep.
    Sleeping,
}

/// Arguments of `triage`.
#[derive(Clone, Debug, Deserialize, JsonSchema)]
pub struct TriageArgs {
    /// Which processes to look over: `running` or `sleeping` (`completion/complete` offers
    /// both).
    pub state: ProcState,
}

/// Look over the processes in one state and say which to stop.
#[surface::prompt]
pub async fn triage(args: TriageArgs, client: &OpsClient) -> Result<PromptAnswer, surface::Failure> {
    let state = match args.state {
        ProcState::Running => "running",
        ProcState::Sleeping => "sleeping",
    };
    let mut lines = Vec::new();
    for pid in client.processes().keys().await? {
        if let Some(p) = client.processes().get(&pid).await?
            && p.state == state
        {
            lines.push(format!("- {} (pid {})", p.name, p.pid));
        }
    }
    Ok(PromptAnswer::new().user_text(format!(
        "These processes are {state}:\n{}\nWhich of them should be stopped, and why?",
        lines.join("\n")
    )))
}

/// The `triage` skill, served at `skill://triage/SKILL.md`: how to investigate a loaded
/// machine with the load, the process table and `proc.kill` (checked against [`EXPOSE`] at
/// compile time). Its tools need `ops.admin`, so only callers with that scope are shown it.
pub const TRIAGE: Skill<Ops> = skill!(EXPOSE {
    name: "triage",
    description: "Investigate a loaded machine: read its load and process table, find the process to stop, stop it with proc_kill and check the load again.",
    uses: [load, processes, "proc.kill"],
    instructions: include_str!("skills/triage.md"),
});

/// The core every face of ops serves: the expose map, the bespoke tools, the prompt and the
/// skill.
pub fn core() -> Member {
    Member::new(EXPOSE)
        .tool(CountTool)
        .tool(ProcessesViewTool)
        .tool(ProcWaitTool)
        .prompt(TriagePrompt)
        .skill(TRIAGE)
}

// Who may do what: reading needs `ops.read`; changing the process table `ops.admin`, which
// implies `ops.read`.
scopes!(Ops {
    read = "ops.read",
    admin = "ops.admin": read,
});

/// What agents may touch: everything but `proc.configure`.
pub const EXPOSE: Expose<Ops> = expose!(Ops {
    load: resource(scope = read),
    processes: resource(scope = read),
    log: resource(scope = read),
    autosave: resource(scope = read),
    "proc.spawn": tool(scope = admin),
    "proc.kill": tool(mutates, scope = admin),
    "load.sample": tool(read_only, scope = read),
});

/// The instructions every host reads before it calls anything.
pub const INSTRUCTIONS: &str = "Everything here is about processes, not files.";

/// The ops MCP server bridging to an ops daemon on the unix socket at `path`
/// (`cargo run --example ops -- --socket PATH`). With `announce_close`, the connection's close
/// signal is wired, so a daemon restart costs no request; without it, the first request after
/// a restart fails with a sentence saying so and the next one re-dials.
pub fn bridge_server(path: std::path::PathBuf, announce_close: bool) -> McpServer {
    bridge_server_with(path, announce_close, surface::wire::DialOptions::default())
}

/// [`bridge_server`] with explicit dial timeouts (how long a bridged request waits) and scopes:
/// with [`DialOptions::scopes`](surface::wire::DialOptions::scopes), the agent on stdio reaches
/// only those, and the daemon is dialled with them (it enforces them too).
pub fn bridge_server_with(
    path: std::path::PathBuf,
    announce_close: bool,
    options: surface::wire::DialOptions,
) -> McpServer {
    let server = McpServer::new("ops", env!("CARGO_PKG_VERSION"));
    let server = match options.get_scopes() {
        Some(scopes) => server.stdio_scopes(scopes.to_vec()),
        None => server,
    };
    server
        .instructions(INSTRUCTIONS)
        .core(core())
        .view(PROCESSES)
        .embed_views(true)
        .dial(move || {
            let (path, options) = (path.clone(), options.clone());
            async move {
                let (client, dispose, closed) = surface::wire::dial_unix_socket_with::<Ops>(&path, &options)
                    .await?
                    .into_parts();
                let owned = OwnedBundle::new(BundleClient::with_core(client)).dispose(dispose);
                Ok(if announce_close {
                    owned.on_close(closed)
                } else {
                    owned
                })
            }
        })
}

/// Serves `ops` as a daemon on the unix socket at `path` until SIGTERM or Ctrl-C, which shut
/// it down gracefully (the calls in flight are answered, watches end, the socket file goes).
pub async fn serve_daemon(ops: Arc<Ops>, path: &std::path::Path) -> std::io::Result<()> {
    serve_daemon_with(ops, path, surface::wire::WireOptions::default()).await
}

/// [`serve_daemon`] with explicit options (grants: which uids may call what).
pub async fn serve_daemon_with(
    ops: Arc<Ops>,
    path: &std::path::Path,
    options: surface::wire::WireOptions,
) -> std::io::Result<()> {
    let server = surface::wire::serve_unix_socket_with(path, ops, EXPOSE, options)?;
    eprintln!("ops: serving the ops surface on {}", path.display());
    stopped().await;
    let answered = server.shutdown().await;
    eprintln!(
        "ops: shut down ({})",
        if answered {
            "every call answered"
        } else {
            "the drain timeout passed"
        }
    );
    Ok(())
}

/// SIGTERM, or Ctrl-C. The handler is installed when this is called, not when it is first
/// polled: a SIGTERM from then on is a graceful shutdown.
fn stopped() -> impl std::future::Future<Output = ()> {
    let mut term = tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate())
        .expect("SIGTERM can be handled");
    async move {
        tokio::select! {
            _ = tokio::signal::ctrl_c() => {}
            _ = term.recv() => {}
        }
    }
}

/// Shuts the stdio connections of `served` down gracefully on SIGTERM or Ctrl-C: the calls in
/// flight are answered and flushed, then `serve_stdio` returns.
fn shut_down_on_signal(served: &surface::mcp::ServedMcp) {
    let served = served.clone();
    // Installed now, before any request: a SIGTERM from here on is a graceful shutdown.
    let mut term = tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate())
        .expect("SIGTERM can be handled");
    tokio::spawn(async move {
        tokio::select! {
            _ = tokio::signal::ctrl_c() => {}
            _ = term.recv() => {}
        }
        served.shutdown();
        eprintln!("ops: shutting down: answering the calls in flight");
    });
}

/// The ops MCP server over a live `Ops`, with its view (embedded too for clients that render
/// views); `.ui(false)` on it serves no view and no UI meta.
pub fn mcp_server(ops: Arc<Ops>) -> McpServer {
    McpServer::new("ops", env!("CARGO_PKG_VERSION"))
        .instructions(INSTRUCTIONS)
        .core(core())
        .view(PROCESSES)
        .embed_views(true)
        .client(move || BundleClient::with_core(OpsClient::direct(ops.clone())))
}

/// Serves `served` over Streamable HTTP at `addr` (loopback only unless `allow_remote`) until
/// the process is stopped.
pub async fn serve_http(
    served: surface::mcp::ServedMcp,
    addr: &str,
    allow_remote: bool,
) -> Result<(), Box<dyn std::error::Error>> {
    let options =
        surface::mcp::HttpOptions::new(addr.parse::<std::net::SocketAddr>()?).allow_remote(allow_remote);
    serve_http_with(served, options).await
}

/// Serves `served` over Streamable HTTP with `options` until the process is stopped.
pub async fn serve_http_with(
    served: surface::mcp::ServedMcp,
    options: surface::mcp::HttpOptions,
) -> Result<(), Box<dyn std::error::Error>> {
    let http = served.serve_http(options).await?;
    eprintln!("surface-mcp: serving MCP over Streamable HTTP at {}", http.url());
    http.waiting().await?;
    Ok(())
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    // `--no-ui` anywhere: no view, no UI extension, no UI meta (the daemon faces have none).
    let mut args: Vec<String> = std::env::args().skip(1).collect();
    let ui = !args.iter().any(|a| a == "--no-ui");
    args.retain(|a| a != "--no-ui");
    // `--metrics ADDR` anywhere: Prometheus text for every face.
    let metrics = match args.iter().position(|a| a == "--metrics") {
        Some(at) if at + 1 < args.len() => Some(args.drain(at..at + 2).nth(1).unwrap_or_default()),
        Some(_) => {
            eprintln!("ops: --metrics needs an address (e.g. 127.0.0.1:9464)\n{USAGE}");
            std::process::exit(2);
        }
        None => None,
    };
    // One stdio connection (MCP, the bridge, the wire face) runs on one thread: a second worker
    // buys it nothing but cross-thread wake-ups and allocator contention, which on stdio cost
    // more than the calls themselves (bench/NOTES.md). The daemon and HTTP serve many
    // connections at once and keep the multi-thread runtime.
    let many = matches!(args.first().map(String::as_str), Some("--socket" | "--http"));
    let runtime = if many {
        tokio::runtime::Builder::new_multi_thread()
    } else {
        tokio::runtime::Builder::new_current_thread()
    }
    .enable_all()
    .build()?;
    runtime.block_on(async move {
        if let Some(addr) = metrics {
            serve_metrics(&addr).await?;
        }
        serve(args, ui).await
    })
}

/// Installs the Prometheus recorder (before any server starts, so every record reaches it) and
/// serves its text at `http://ADDR/metrics` in the background.
async fn serve_metrics(addr: &str) -> Result<(), Box<dyn std::error::Error>> {
    let handle = metrics_exporter_prometheus::PrometheusBuilder::new().install_recorder()?;
    surface::mcp::observe::describe();
    let listener = tokio::net::TcpListener::bind(addr).await?;
    // No scheme in this line: tests find the MCP endpoint by the `http://` of its own line.
    eprintln!(
        "ops: serving Prometheus metrics on {} at /metrics",
        listener.local_addr()?
    );
    // The recorder drains its histograms' samples here, so memory stays bounded between scrapes.
    let upkeep = handle.clone();
    tokio::spawn(async move {
        loop {
            tokio::time::sleep(std::time::Duration::from_secs(5)).await;
            upkeep.run_upkeep();
        }
    });
    let app = axum::Router::new().route(
        "/metrics",
        axum::routing::get(move || std::future::ready(handle.render())),
    );
    tokio::spawn(async move { axum::serve(listener, app).await });
    Ok(())
}

async fn serve(args: Vec<String>, ui: bool) -> Result<(), Box<dyn std::error::Error>> {
    // Warnings to stderr (stdout may carry the protocol); the library installs no subscriber.
    surface::mcp::init_tracing();
    let served = mcp_server(Arc::new(Ops::new())).ui(ui).start()?;
    let exit_usage = |e: String| -> ! {
        eprintln!("ops: {e}\n{USAGE}");
        std::process::exit(2);
    };
    match args.iter().map(String::as_str).collect::<Vec<_>>().as_slice() {
        [] => {
            shut_down_on_signal(&served);
            served.serve_stdio().await?
        }
        ["--scope", ..] => {
            let scopes = scope_flags(&args).unwrap_or_else(|e| exit_usage(e));
            let served = mcp_server(Arc::new(Ops::new()))
                .stdio_scopes(scopes)
                .ui(ui)
                .start()?;
            shut_down_on_signal(&served);
            served.serve_stdio().await?
        }
        ["--socket", path, rest @ ..] => {
            let options = grant_flags(rest).unwrap_or_else(|e| exit_usage(e));
            if let Err(e) = serve_daemon_with(Arc::new(Ops::new()), path.as_ref(), options).await {
                // A refused path (a regular file, another daemon's socket) is a sentence, not a
                // Debug dump.
                eprintln!("ops: {e}");
                std::process::exit(1);
            }
        }
        ["--wire-stdio"] => {
            // The wire face on this process's own stdio, for `ssh host ops --wire-stdio`; SIGTERM
            // or Ctrl-C shut it down gracefully, as they do the daemon.
            let ops = Arc::new(Ops::new());
            let options = surface::wire::WireOptions::default();
            let signal = stopped();
            let shutdown = async {
                signal.await;
                eprintln!("ops: shutting down: answering the calls in flight");
            };
            let answered = surface::wire::serve_stdio_until(ops, EXPOSE, options, shutdown).await?;
            if !answered {
                eprintln!("ops: shut down (the drain timeout passed)");
            }
            // Nothing is left to read for: a read of stdin still blocked would hold the exit.
            std::process::exit(0);
        }
        ["--bridge", path, rest @ ..] => {
            let options = bridge_flags(rest).unwrap_or_else(|e| exit_usage(e));
            let options = daemon_reach(path.as_ref(), options).await;
            bridge_server_with(path.into(), true, options)
                .ui(ui)
                .start()?
                .serve_stdio()
                .await?
        }
        ["--http", addr, rest @ ..] => {
            let flags = HttpFlags::parse(rest).unwrap_or_else(|e| exit_usage(e));
            let mut options = surface::mcp::HttpOptions::new(addr.parse::<std::net::SocketAddr>()?)
                .allow_remote(flags.allow_remote);
            if let Some((issuer, audience)) = flags.auth {
                options = options.auth(ops_auth(issuer, audience));
            }
            match flags.redis {
                Some(url) => serve_shared(options, url, flags.cluster, ui).await?,
                None => serve_http_with(served, options).await?,
            }
        }
        _ => {
            eprintln!("{USAGE}");
            std::process::exit(2);
        }
    }
    Ok(())
}

const USAGE: &str = "usage: ops [--scope SCOPE[,SCOPE]]... | --socket PATH [--grant UID=SCOPE[,SCOPE]]... | --wire-stdio | --bridge PATH [--bridge-timeout-ms N] [--scope SCOPE[,SCOPE]]... | --http ADDR [--http-allow-remote] [--auth-issuer URL --auth-audience URL] [--redis URL | --redis-cluster URL[,URL]]] [--no-ui] [--metrics ADDR]   (no flag: MCP on stdio)";

/// The bridge shows its agent no more than the daemon serves this process's uid: dialled once
/// at start (for at most two seconds), the daemon's reach becomes the bridge's scopes. A daemon
/// not up yet narrows nothing here; it still refuses whatever the uid is not granted.
async fn daemon_reach(
    path: &std::path::Path,
    options: surface::wire::DialOptions,
) -> surface::wire::DialOptions {
    let asked = async {
        let connection = surface::wire::dial_unix_socket_with::<Ops>(path, &options).await?;
        let reach = connection.reach().await;
        connection.dispose();
        reach
    };
    match tokio::time::timeout(std::time::Duration::from_secs(2), asked).await {
        Ok(Ok(reach)) => options.scopes(reach.scopes),
        _ => options,
    }
}

/// `--grant UID=SCOPE[,SCOPE]`, repeated, after `--socket PATH`.
fn grant_flags(args: &[&str]) -> Result<surface::wire::WireOptions, String> {
    let mut options = surface::wire::WireOptions::default();
    let mut args = args.iter();
    while let Some(flag) = args.next() {
        let grant = match (*flag, args.next()) {
            ("--grant", Some(grant)) => *grant,
            ("--grant", None) => return Err("--grant needs UID=SCOPE[,SCOPE]".to_owned()),
            (other, _) => return Err(format!("unknown flag {other}")),
        };
        let parsed = grant
            .split_once('=')
            .and_then(|(uid, scopes)| Some((uid.parse::<u32>().ok()?, scope_list(scopes)?)));
        let Some((uid, scopes)) = parsed else {
            return Err(format!(
                "--grant {grant}: write UID=SCOPE[,SCOPE], e.g. --grant 1000=ops.read"
            ));
        };
        options = options.grant(uid, scopes);
    }
    Ok(options)
}

/// The flags after `--bridge PATH`: `--bridge-timeout-ms N` and `--scope SCOPE[,SCOPE]`.
fn bridge_flags(args: &[&str]) -> Result<surface::wire::DialOptions, String> {
    let mut options = surface::wire::DialOptions::default();
    let mut scopes: Option<Vec<String>> = None;
    let mut args = args.iter();
    while let Some(flag) = args.next() {
        let value = args.next().ok_or_else(|| format!("{flag} needs a value"))?;
        match *flag {
            "--bridge-timeout-ms" => {
                let ms = value
                    .parse()
                    .map_err(|_| format!("--bridge-timeout-ms {value}: a number of milliseconds"))?;
                options = options.call_timeout(std::time::Duration::from_millis(ms));
            }
            "--scope" => scopes.get_or_insert_default().extend(scope_value(value)?),
            other => return Err(format!("unknown flag {other}")),
        }
    }
    Ok(match scopes {
        Some(scopes) => options.scopes(scopes),
        None => options,
    })
}

/// `--scope SCOPE[,SCOPE]`, repeated (MCP on stdio).
fn scope_flags(args: &[String]) -> Result<Vec<String>, String> {
    let mut scopes = Vec::new();
    let mut args = args.iter();
    while let Some(flag) = args.next() {
        match (flag.as_str(), args.next()) {
            ("--scope", Some(value)) => scopes.extend(scope_value(value)?),
            ("--scope", None) => return Err("--scope needs SCOPE[,SCOPE]".to_owned()),
            (other, _) => return Err(format!("unknown flag {other}")),
        }
    }
    Ok(scopes)
}

/// `ops.read,ops.admin`: scope tokens, none empty.
fn scope_list(text: &str) -> Option<Vec<String>> {
    let scopes: Vec<String> = text.split(',').map(str::to_owned).collect();
    scopes.iter().all(|s| !s.is_empty()).then_some(scopes)
}

fn scope_value(text: &str) -> Result<Vec<String>, String> {
    scope_list(text).ok_or_else(|| format!("--scope {text}: write SCOPE[,SCOPE], e.g. --scope ops.read"))
}

/// The flags after `--http ADDR`, in any order.
#[derive(Default)]
struct HttpFlags<'a> {
    allow_remote: bool,
    redis: Option<&'a str>,
    /// `redis` is a Redis Cluster's node list (`--redis-cluster`).
    cluster: bool,
    /// `--auth-issuer` and `--auth-audience`, which come together.
    auth: Option<(&'a str, &'a str)>,
}

impl<'a> HttpFlags<'a> {
    fn parse(args: &[&'a str]) -> Result<HttpFlags<'a>, String> {
        let mut flags = HttpFlags::default();
        let (mut issuer, mut audience) = (None, None);
        let mut args = args.iter();
        while let Some(flag) = args.next() {
            let mut value = || {
                args.next()
                    .copied()
                    .ok_or_else(|| format!("{flag} needs a value"))
            };
            match *flag {
                "--http-allow-remote" => flags.allow_remote = true,
                "--redis" | "--redis-cluster" if flags.redis.is_some() => {
                    return Err("--redis and --redis-cluster: give one store".to_owned());
                }
                "--redis" => flags.redis = Some(value()?),
                "--redis-cluster" => {
                    flags.redis = Some(value()?);
                    flags.cluster = true;
                }
                "--auth-issuer" => issuer = Some(value()?),
                "--auth-audience" => audience = Some(value()?),
                other => return Err(format!("unknown flag {other}")),
            }
        }
        flags.auth = match (issuer, audience) {
            (Some(issuer), Some(audience)) => Some((issuer, audience)),
            (None, None) => None,
            _ => {
                return Err(
                    "--auth-issuer and --auth-audience go together: give both (the authorization server's issuer URL and this endpoint's URL) or neither"
                        .to_owned(),
                );
            }
        };
        Ok(flags)
    }
}

/// The ops endpoint as a protected resource: JWTs from `issuer` for `audience`; a first call
/// needs `ops.read`, and `ops.admin` is the other scope there is.
pub fn ops_auth(issuer: &str, audience: &str) -> surface::auth::Auth {
    surface::auth::Auth::jwt(issuer, audience)
        .scopes_supported(["ops.read", "ops.admin"])
        .challenge_scopes(["ops.read"])
}

/// `--http ADDR --redis URL`: the ops surface with its members and next pid in the Redis at
/// `url` (with `cluster`, the Redis Cluster of the comma-separated node URLs in `url`, each
/// write confirmed by one replica), served over Streamable HTTP; start several on several
/// ports for one shared surface.
#[cfg(feature = "redis")]
async fn serve_shared(
    options: surface::mcp::HttpOptions,
    url: &str,
    cluster: bool,
    ui: bool,
) -> Result<(), Box<dyn std::error::Error>> {
    let ops = Arc::new(Ops::new());
    let store = if cluster {
        let nodes: Vec<&str> = url.split(',').collect();
        surface::store::RedisStore::connect_cluster(&nodes, "ops", 1)
    } else {
        surface::store::RedisStore::connect(url, "ops")
    };
    let store = match store {
        Ok(store) => store,
        Err(e) => {
            eprintln!("ops: {e}");
            std::process::exit(1);
        }
    };
    store.attach(&ops)?;
    store.bind_counter("next_pid", &ops.next_pid)?;
    // Sessions and their SSE events in Redis too: a client resumes on any instance.
    let options = options.store(&store);
    let http = mcp_server(ops).ui(ui).start()?.serve_http(options).await?;
    eprintln!(
        "surface-mcp: serving MCP over Streamable HTTP at {} (members in {} under {})",
        http.url(),
        url,
        store.prefix()
    );
    http.waiting().await?;
    Ok(())
}

/// Without the `redis` feature there is no store to share.
#[cfg(not(feature = "redis"))]
async fn serve_shared(
    _options: surface::mcp::HttpOptions,
    _url: &str,
    _cluster: bool,
    _ui: bool,
) -> Result<(), Box<dyn std::error::Error>> {
    eprintln!(
        "ops: --redis needs the `redis` feature: cargo run --features redis --example ops -- --http ADDR --redis URL"
    );
    std::process::exit(2);
}
