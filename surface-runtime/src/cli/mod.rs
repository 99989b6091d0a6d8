//! The argv face: a command-line tool built from the same served tool table and expose map
//! the MCP face uses, with no MCP server in it (feature `cli`; no rmcp in its tree).
//!
//! [`Cli`] takes what [`crate::mcp::McpServer`] takes — one [`Roster`] (a core [`Member`],
//! keyed siblings, bundle-root tools and prompts, views; built by the same setters, or by
//! `bundle!`), and a client factory (in-process: [`Cli::client`]; a daemon dialled over
//! the wire face: [`Cli::dial`], which adds `--socket PATH`) — and answers a command tree:
//!
//! - one subcommand per served tool, named exactly as `tools/list` names it, whose flags are a
//!   pure function of the tool's advertised input schema (`--field` per property, the tristate
//!   `--x`/`--no-x` for booleans, repeatable arrays, enum values as possible values, anything
//!   else as JSON), or `--input '<json>'` / `--input -` (stdin) for the whole object;
//! - the reader commands `list [--json]` (with `--json`, also the roster's prompts and views,
//!   which a command line names but does not render), `get <cell|stream> [--follow]`,
//!   `get <collection> <key>`, `keys <collection>`, `watch <member>`, and
//!   `completions <bash|zsh|fish>`.
//!
//! Input is checked locally before anything is dialled: a procedure's is decoded by the served
//! side's own decoder into the procedure's input type (so a refusal is the one the served side
//! would answer); any other tool's is checked against the schema it advertises, and a bespoke
//! tool then decodes it into its own type before its client dials. stdout carries
//! data only: one JSON value (indented on a terminal, compact in a pipe), or NDJSON for
//! streams and watches; `--json` prints a tool's whole answer. Refusals go to stderr as JSON.
//! A tool's progress (`ctx.progress`, in this process or reported by a dialled daemon's
//! procedure) goes to stderr too: a bar when stderr is a terminal, else one plain
//! `progress 12%: message` line per change; and `--timeout` counts from its last report, so a
//! long tool that keeps reporting is not cut off.
//! The exit code says what happened: see [`exit`].
//!
//! A command may hold fewer scopes than the surface declares ([`Cli::scopes`], and per
//! invocation `--scope SCOPE[,SCOPE]`, which only narrows): `list` shows what they reach, a
//! command outside them is refused locally ([`exit::REFUSED`], one sentence) before anything is
//! dialled, and a dialled daemon is dialled with them ([`Cli::dial_with`]), so it refuses the
//! rest too.
//!
//! ```no_run
//! # use std::convert::Infallible;
//! # use surface_runtime::{Expose, bundle::{BundleClient, Member}};
//! # fn run<S: surface_runtime::Surface>(expose: Expose<S>, client: S::Client) -> std::process::ExitCode {
//! use surface_runtime::cli::Cli;
//!
//! Cli::new("tinyctl", "1.0.0")
//!     .about("The tiny surface, as a command.")
//!     .core(Member::new(expose))
//!     .client(move || BundleClient::with_core(client.clone()))
//!     .build()
//!     .expect("the table composes")
//!     .main()
//! # }
//! ```

mod check;
mod flags;
mod progress;

use crate::audit::{Audit, Audited};
use crate::blocks::{Block, EmbeddedBody, OkContent};
use crate::blocks::{OkImage, ToolOutput};
use crate::bundle::link::{Connection, Dial, Link, LinkedDispatch, Redial};
use crate::bundle::{BundleClient, Member, OwnedBundle, Roster, Siblings};
use crate::dispatch::Dispatch;
use crate::failure::{Failure, FailureKind};
use crate::layer::CallInfo;
use crate::member::{Change, ChangeStream};
use crate::schema;
use crate::scopes::listed;
use crate::spec::{MemberKind, SurfaceSpec};
use crate::table::{
    ToolRow, ToolTarget, exposed_members, resource_uri, scoped_member_name, scoped_tool_name,
};
use crate::tool::BespokeTool;
use crate::wire::DialOptions;
use crate::{Principal, Scope};
use base64::Engine;
use clap::builder::PossibleValuesParser;
use clap::{Arg, ArgAction, ArgMatches, Command};
use futures::StreamExt;
use futures::future::BoxFuture;
use serde_json::{Map, Value, json};
use std::collections::BTreeMap;
use std::fmt;
use std::io::{IsTerminal, Write as _};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

/// Exit codes of a command built by [`Cli`].
pub mod exit {
    /// The command did what was asked (a closed stdout, as in `| head -1`, counts as done).
    pub const OK: u8 = 0;
    /// The tool refused (`isError`), or what was asked for does not exist.
    pub const REFUSED: u8 = 1;
    /// The command line was wrong: nothing was dialled, no handler ran.
    pub const USAGE: u8 = 2;
    /// The served surface could not be reached, or did not answer in time.
    pub const UNREACHABLE: u8 = 3;
    /// Interrupted (Ctrl-C).
    pub const INTERRUPTED: u8 = 130;
}

pub use crate::consteval::cli::{READER_COMMANDS, assert_tool_names};

/// Flags every tool subcommand (or the whole command) already takes; a property of one of
/// these names is refused.
const RESERVED_FLAGS: &[&str] = &["input", "json", "help", "socket", "timeout", "version"];

/// How long dialling and each single request may take, unless `--timeout` says otherwise.
pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(30);

/// Why a command tree was refused: one sentence per problem.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct BuildError {
    /// One sentence per problem.
    pub problems: Vec<String>,
}

impl fmt::Display for BuildError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "surface-cli: the command was refused: {}",
            self.problems.join("; ")
        )
    }
}

impl std::error::Error for BuildError {}

type LocalFactory = Arc<dyn Fn() -> BundleClient + Send + Sync>;
type SocketFactory =
    Arc<dyn Fn(PathBuf, DialOptions) -> BoxFuture<'static, Result<OwnedBundle, Failure>> + Send + Sync>;

/// Builds the argv face of a rooted bundle. See the [module docs](self).
#[must_use = "call `.build()` to compose the command"]
pub struct Cli {
    name: String,
    version: String,
    about: Option<String>,
    roster: Roster,
    local: Option<LocalFactory>,
    socket: Option<SocketFactory>,
    scopes: Option<Vec<String>>,
    audit: Audit,
    layers: crate::layer::Layers,
}

impl Cli {
    /// A command called `name` (its binary name in help and completions) at `version`.
    pub fn new(name: impl Into<String>, version: impl Into<String>) -> Self {
        Cli {
            name: name.into(),
            version: version.into(),
            about: None,
            roster: Roster::new(),
            local: None,
            socket: None,
            scopes: None,
            audit: Audit::Off,
            layers: crate::layer::Layers::default(),
        }
    }

    /// Adds a [`CallLayer`](crate::layer::CallLayer): every tool call this command makes passes
    /// it once its arguments are checked and before anything runs or is dialled (layers in the
    /// order added). One it refuses prints the layer's sentence on stderr as a refusal and
    /// exits [`exit::REFUSED`]; the tool never runs. The layer sees the tool as `tools/list`
    /// names it (`proc_kill`), the caller as the user running the command (`uid:<n>`, issuer
    /// `unix`, holding the scopes the invocation holds) and the arguments as given — so the
    /// layer an `McpServer` or a `WireOptions` takes works here unchanged. A dialled daemon
    /// runs its own layers as well.
    ///
    /// ```
    /// use surface_runtime::cli::Cli;
    /// use surface_runtime::layer::{CallInfo, CallLayer};
    /// struct NoKills;
    /// impl CallLayer for NoKills {
    ///     fn admit(&self, call: &CallInfo<'_>) -> Result<(), String> {
    ///         match call.tool() {
    ///             "proc_kill" => Err("kills are paused during the freeze".into()),
    ///             _ => Ok(()),
    ///         }
    ///     }
    /// }
    /// let cli = Cli::new("opsctl", "1.0.0").layer(NoKills);
    /// # let _ = cli;
    /// ```
    pub fn layer(mut self, layer: impl crate::layer::CallLayer) -> Self {
        self.layers.push(layer);
        self
    }

    /// Records every call of a mutating tool this command makes as one `tracing` event —
    /// subject (`uid:<n>` of the user running it), tool, outcome, duration — see
    /// [`crate::audit`] (default [`Audit::Off`]; the command installs no subscriber: install
    /// yours in `main`). A dialled daemon audits on its side too ([`crate::wire::WireOptions::audit`]).
    pub fn audit(mut self, audit: Audit) -> Self {
        self.audit = audit;
        self
    }

    /// The scopes this command holds (wire strings, e.g. `ops.read`; default: every one, so
    /// it reaches everything exposed). `list` shows what they reach, anything else is refused
    /// before it is dialled, and [`Cli::dial_with`] dials with them. `--scope` narrows further
    /// per invocation, never wider than this.
    pub fn scopes<S: Into<String>>(mut self, scopes: impl IntoIterator<Item = S>) -> Self {
        self.scopes = Some(scopes.into_iter().map(Into::into).collect());
        self
    }

    /// The one-line description `--help` starts with.
    pub fn about(mut self, about: impl Into<String>) -> Self {
        self.about = Some(about.into());
        self
    }

    /// The unprefixed core.
    pub fn core(mut self, core: Member) -> Self {
        self.roster = self.roster.core(core);
        self
    }

    /// The short form for one surface in this process: `surface` is the core, served through
    /// `expose` (as [`crate::mcp::McpServer::surface`] does on the MCP face). The same as
    /// `.core(Member::new(expose)).client(…)` with a factory answering
    /// [`BundleClient::direct`]; use the long form for bespoke tools or siblings.
    pub fn surface<S: crate::Surface>(self, surface: impl Into<Arc<S>>, expose: crate::Expose<S>) -> Self {
        let surface = surface.into();
        self.core(Member::new(expose))
            .client(move || BundleClient::direct(surface.clone()))
    }

    /// Adds a sibling under `key`: its tools are `key_<name>`, its members `key/<name>`.
    pub fn sibling(mut self, key: impl Into<String>, sibling: Member) -> Self {
        self.roster = self.roster.sibling(key, sibling);
        self
    }

    /// Sets every sibling at once.
    pub fn siblings(mut self, siblings: Siblings) -> Self {
        self.roster = self.roster.siblings(siblings);
        self
    }

    /// Takes a whole roster (e.g. one built, and checked at compile time, by `bundle!`), as
    /// [`crate::mcp::McpServer::roster`] does.
    pub fn roster(mut self, roster: Roster) -> Self {
        self.roster = self.roster.extend(roster);
        self
    }

    /// Adds a bundle-root tool (bare-named, handed the whole bundle).
    pub fn root_tool<T: BespokeTool<Client = BundleClient>>(mut self, tool: T) -> Self {
        self.roster = self.roster.root_tool(tool);
        self
    }

    /// Adds a bundle-root prompt. A command line renders no prompt, but `list --json` names
    /// it (with every member's prompts), so one roster describes both faces.
    pub fn root_prompt<P: crate::prompt::BespokePrompt<Client = BundleClient>>(mut self, prompt: P) -> Self {
        self.roster = self.roster.root_prompt(prompt);
        self
    }

    /// Declares an MCP Apps view. A command line shows no page, but `list --json` names the
    /// view, and the tools bound to it answer as every tool does.
    pub fn view(mut self, view: crate::view::View) -> Self {
        self.roster = self.roster.view(view);
        self
    }

    /// Serves the command in-process: `factory` builds the live clients, once, when a command
    /// first needs them (never for `--help`, `list` or `completions`).
    pub fn client(mut self, factory: impl Fn() -> BundleClient + Send + Sync + 'static) -> Self {
        self.local = Some(Arc::new(factory));
        self
    }

    /// Adds `--socket PATH`: `dial(path)` opens a connection to a served daemon (e.g. with
    /// [`crate::wire::dial_unix_socket`]) and answers it as an [`OwnedBundle`] — the shape
    /// [`crate::mcp::McpServer::dial`] takes, handed the path. Without `--socket`, the command
    /// runs in-process when [`Cli::client`] was given, and is a usage error otherwise.
    pub fn dial<F, Fut>(self, dial: F) -> Self
    where
        F: Fn(PathBuf) -> Fut + Send + Sync + 'static,
        Fut: std::future::Future<Output = Result<OwnedBundle, Failure>> + Send + 'static,
    {
        self.dial_with(move |path, _| dial(path))
    }

    /// [`Cli::dial`], handed the [`DialOptions`] the invocation asks for as well: its scopes
    /// ([`Cli::scopes`], `--scope`), so the daemon refuses what they do not reach too. Pass
    /// them to [`crate::wire::dial_unix_socket_with`].
    ///
    /// ```no_run
    /// # fn f<S: surface_runtime::Surface>(cli: surface_runtime::cli::Cli) -> surface_runtime::cli::Cli
    /// # where S::Client: Clone {
    /// use surface_runtime::bundle::{BundleClient, OwnedBundle};
    /// cli.dial_with(|path, options| async move {
    ///     let (client, dispose, _) = surface_runtime::wire::dial_unix_socket_with::<S>(&path, &options)
    ///         .await?
    ///         .into_parts();
    ///     Ok(OwnedBundle::new(BundleClient::with_core(client)).dispose(dispose))
    /// })
    /// # }
    /// ```
    pub fn dial_with<F, Fut>(mut self, dial: F) -> Self
    where
        F: Fn(PathBuf, DialOptions) -> Fut + Send + Sync + 'static,
        Fut: std::future::Future<Output = Result<OwnedBundle, Failure>> + Send + 'static,
    {
        self.socket = Some(Arc::new(move |path, options| Box::pin(dial(path, options))));
        self
    }

    /// Composes the tool table (with every rule the MCP face applies) and the command tree;
    /// refuses a tool named like a reader command and a property named like a flag the
    /// command already takes. Dials nothing.
    pub fn build(self) -> Result<BuiltCli, BuildError> {
        let mut problems = self.roster.parts().problems();
        let mut declared: Vec<Scope> = Vec::new();
        for (_, member) in self.roster.parts().members() {
            for scope in member.expose.scopes() {
                if !declared.iter().any(|d| d.wire == scope.wire) {
                    declared.push(*scope);
                }
            }
        }
        if let Some(scope) = self
            .scopes
            .iter()
            .flatten()
            .find(|s| !declared.iter().any(|d| &d.wire == s))
        {
            problems.push(format!(
                "the command is given the scope \"{scope}\", which no served surface declares (declared: {})",
                listed(declared.iter().map(|s| s.wire))
            ));
        }
        let rows = self.roster.parts().tool_table(&mut problems);
        let mut tools = Vec::new();
        for row in rows {
            if READER_COMMANDS.contains(&row.name.as_str()) {
                problems.push(format!(
                    "tool name \"{}\" (from {}) is the reader command `{}` of the argv face — rename the tool",
                    row.name, row.origin, row.name
                ));
                continue;
            }
            let fields = flags::fields(&row.entry.input.schema);
            let mut longs = flags::longs(&fields);
            for long in &longs {
                if RESERVED_FLAGS.contains(&long.as_str()) || (!declared.is_empty() && long == "scope") {
                    problems.push(format!(
                        "tool \"{}\" has a property `{long}`, and `--{long}` is a flag the command already takes — rename the property",
                        row.name
                    ));
                }
            }
            longs.sort();
            if let Some(w) = longs.windows(2).find(|w| w[0] == w[1]) {
                problems.push(format!(
                    "tool \"{}\" would take `--{}` twice (a boolean `x` also takes `--no-x`) — rename a property",
                    row.name, w[0]
                ));
            }
            tools.push(Tool { row, fields });
        }
        let mut members = Vec::new();
        for (sibling, member) in self.roster.parts().members() {
            for (name, kind) in exposed_members(member) {
                members.push(MemberRow {
                    name: scoped_member_name(sibling, name),
                    owner: sibling.map(str::to_owned),
                    member: name,
                    kind,
                    spec: member.spec(),
                    scope: member.expose.scope_of(name),
                });
            }
        }
        if !problems.is_empty() {
            return Err(BuildError { problems });
        }
        let specs = self
            .roster
            .parts()
            .members()
            .map(|(k, m)| (k.map(str::to_owned), m.spec()))
            .collect();
        let prompts = self
            .roster
            .parts()
            .members()
            .flat_map(|(sibling, m)| {
                m.prompts
                    .iter()
                    .map(move |p| (scoped_tool_name(sibling, p.descriptor().name), p.descriptor()))
            })
            .chain(
                self.roster
                    .prompts
                    .0
                    .iter()
                    .map(|p| (p.descriptor().name.to_owned(), p.descriptor())),
            )
            .map(|(name, d)| {
                let mut o = Map::new();
                o.insert("name".into(), name.into());
                if !d.description.is_empty() {
                    o.insert("description".into(), d.description.into());
                }
                Value::Object(o)
            })
            .collect();
        let views = self
            .roster
            .views
            .iter()
            .map(|v| json!({"uri": v.uri(), "name": v.name()}))
            .collect();
        Ok(BuiltCli {
            name: self.name,
            version: self.version,
            about: self.about,
            tools,
            members,
            specs,
            prompts,
            views,
            local: self.local,
            socket: self.socket,
            declared,
            scopes: self.scopes,
            audit: self.audit,
            layers: self.layers,
            owns_stdout: false,
        })
    }
}

struct Tool {
    row: ToolRow,
    fields: Vec<flags::Field>,
}

struct MemberRow {
    /// `load`, or `t/load` on sibling `t`.
    name: String,
    owner: Option<String>,
    member: &'static str,
    kind: MemberKind,
    spec: &'static SurfaceSpec,
    /// The declared scope reading it needs.
    scope: Option<&'static Scope>,
}

impl MemberRow {
    fn uri(&self) -> String {
        resource_uri(self.owner.as_deref(), self.kind, self.member)
    }
    fn doc(&self) -> &'static str {
        self.spec.member(self.member).map_or("", |m| m.doc)
    }
}

/// A composed command: build its clap [`Command`], or run it on arguments.
pub struct BuiltCli {
    name: String,
    version: String,
    about: Option<String>,
    tools: Vec<Tool>,
    members: Vec<MemberRow>,
    specs: Vec<(Option<String>, &'static SurfaceSpec)>,
    /// Every prompt of the roster as `list --json` names it (a command line renders none).
    prompts: Vec<Value>,
    /// Every declared MCP Apps view as `list --json` names it (a command line shows none).
    views: Vec<Value>,
    local: Option<LocalFactory>,
    socket: Option<SocketFactory>,
    /// Every scope the served surfaces declare.
    declared: Vec<Scope>,
    /// The scopes the command holds ([`Cli::scopes`]; `None`: all).
    scopes: Option<Vec<String>>,
    audit: Audit,
    layers: crate::layer::Layers,
    /// Set by [`BuiltCli::main`]: the process is this command's, so its stdout is kept for
    /// data and a handler's stray print goes to stderr.
    owns_stdout: bool,
}

/// Who one invocation runs as: the scopes it holds (`None`: it holds every scope).
struct Caller(Option<Principal>);

impl Caller {
    fn reaches(&self, scope: Option<&Scope>) -> bool {
        crate::scopes::reaches(scope, self.0.as_ref())
    }

    /// Refuses `what` unless the caller reaches `scope`: one sentence, the refused exit code.
    fn check(&self, what: &str, scope: Option<&Scope>) -> Result<(), Stop> {
        match (scope, &self.0) {
            (Some(scope), Some(p)) if !self.reaches(Some(scope)) => Err(refuse(&Failure::new(
                FailureKind::Refused,
                format!(
                    "{what} is out of reach: it needs the scope {}, and this command holds {}",
                    scope.wire,
                    listed(p.scopes())
                ),
            ))),
            _ => Ok(()),
        }
    }

    /// The options a dial of this invocation takes.
    fn dial_options(&self) -> DialOptions {
        match &self.0 {
            Some(p) => DialOptions::default().scopes(p.scopes().to_vec()),
            None => DialOptions::default(),
        }
    }
}

fn first_line(text: &str) -> String {
    text.lines().next().unwrap_or("").trim().to_owned()
}

/// What ended a command early: an exit code, with what to say on stderr.
struct Stop(u8);

impl BuiltCli {
    /// The names of the tool subcommands, in `tools/list` order.
    pub fn tool_names(&self) -> Vec<&str> {
        self.tools.iter().map(|t| t.row.name.as_str()).collect()
    }

    fn member_names(&self, kinds: &[MemberKind]) -> Vec<String> {
        self.members
            .iter()
            .filter(|m| kinds.contains(&m.kind))
            .map(|m| m.name.clone())
            .collect()
    }

    /// The whole command tree, as clap sees it (e.g. to render help or completions).
    pub fn command(&self) -> Command {
        let member_arg = |kinds: &[MemberKind], help: &'static str| {
            Arg::new("member")
                .required(true)
                .value_name("MEMBER")
                .help(help)
                .value_parser(PossibleValuesParser::new(self.member_names(kinds)))
        };
        let mut cmd = Command::new(self.name.clone())
            .version(self.version.clone())
            .subcommand_required(true)
            .arg_required_else_help(true)
            .arg(
                Arg::new("timeout")
                    .long("timeout")
                    .global(true)
                    .help_heading("Connection")
                    .value_name("SECONDS")
                    .value_parser(clap::value_parser!(u64))
                    .help("How long dialling and each request may take (default: 30)"),
            );
        if let Some(about) = &self.about {
            cmd = cmd.about(about.clone());
        }
        if !self.declared.is_empty() {
            cmd = cmd.arg(
                Arg::new("scope")
                    .long("scope")
                    .global(true)
                    .action(ArgAction::Append)
                    .value_delimiter(',')
                    .help_heading("Connection")
                    .value_name("SCOPE")
                    .value_parser(PossibleValuesParser::new(self.declared.iter().map(|s| s.wire)))
                    .help("Reach only what these scopes reach (repeatable, or SCOPE,SCOPE)"),
            );
        }
        if self.socket.is_some() {
            cmd = cmd.arg(
                Arg::new("socket")
                    .long("socket")
                    .global(true)
                    .help_heading("Connection")
                    .value_name("PATH")
                    .value_parser(clap::value_parser!(PathBuf))
                    .help(if self.local.is_some() {
                        "Dial the daemon serving the surface on this unix socket (default: run in-process)"
                    } else {
                        "Dial the daemon serving the surface on this unix socket (required)"
                    }),
            );
        }
        for tool in &self.tools {
            let description = tool.row.description;
            let mut sub = Command::new(tool.row.name.clone())
                .about(first_line(description))
                .long_about((!description.is_empty()).then_some(description));
            // The tool's own flags first, then how else to give its input.
            for field in &tool.fields {
                for arg in flags::args(field) {
                    sub = sub.arg(arg);
                }
            }
            sub = sub
                .arg(
                    Arg::new("input")
                        .long("input")
                        .value_name("JSON|-")
                        .conflicts_with_all(flags::ids(&tool.fields))
                        .help("The whole input as one JSON object; `-` reads it from stdin"),
                )
                .arg(
                    Arg::new("json")
                        .long("json")
                        .action(ArgAction::SetTrue)
                        .help("Print the whole answer (content, structuredContent, isError)"),
                );
            cmd = cmd.subcommand(sub);
        }
        use MemberKind::*;
        cmd.subcommand(
            Command::new("list")
                .about("List the tools and members this command reaches (read from the table: dials nothing)")
                .arg(
                    Arg::new("json")
                        .long("json")
                        .action(ArgAction::SetTrue)
                        .help("Print every tool with its input schema and every member with its URI"),
                ),
        )
        .subcommand(
            Command::new("get")
                .about("Print a cell's value, a stream's chunks (NDJSON), or one item of a collection")
                .arg(member_arg(
                    &[Cell, Stream, Collection],
                    "A cell, stream or collection",
                ))
                .arg(
                    Arg::new("key")
                        .value_name("KEY")
                        .help("The item's key (collections only)"),
                )
                .arg(
                    Arg::new("follow")
                        .long("follow")
                        .short('f')
                        .action(ArgAction::SetTrue)
                        .help("Keep printing: each new value of a cell, each new chunk of a stream (NDJSON)"),
                ),
        )
        .subcommand(
            Command::new("keys")
                .about("Print the keys of a collection")
                .arg(member_arg(&[Collection], "A collection")),
        )
        .subcommand(
            Command::new("watch")
                .about("Print every change of a member from now on, one JSON line each")
                .arg(member_arg(&[Cell, Collection, Stream, Event], "Any member")),
        )
        .subcommand(
            Command::new("completions")
                .about("Print a shell completion script")
                .arg(
                    Arg::new("shell")
                        .required(true)
                        .value_parser(PossibleValuesParser::new(["bash", "zsh", "fish"])),
                ),
        )
    }

    /// Runs the command on this process's arguments in a fresh runtime, and answers its exit
    /// code (see [`exit`]).
    ///
    /// The process is the command's: once the arguments parse, its stdout is kept for the
    /// command's data and file descriptor 1 points at stderr, so a handler's `println!` can
    /// neither land before the JSON nor fail on a reader that closed the pipe.
    pub fn main(mut self) -> std::process::ExitCode {
        self.owns_stdout = true;
        let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build();
        match runtime {
            Ok(rt) => std::process::ExitCode::from(rt.block_on(self.run(std::env::args_os()))),
            Err(e) => {
                eprintln!(
                    "{}",
                    json!({"message": format!("no runtime: {e}"), "kind": "error"})
                );
                std::process::ExitCode::from(exit::REFUSED)
            }
        }
    }

    /// Runs the command on `args` (the first is the binary's name) and answers its exit code.
    /// Ctrl-C ends it with [`exit::INTERRUPTED`].
    pub async fn run<I, T>(&self, args: I) -> u8
    where
        I: IntoIterator<Item = T>,
        T: Into<std::ffi::OsString> + Clone,
    {
        let matches = match self.command().try_get_matches_from(args) {
            Ok(m) => m,
            Err(e) => {
                // Help and version go to stdout with 0; usage errors to stderr with 2.
                let _ = e.print();
                return e.exit_code().clamp(0, 255) as u8;
            }
        };
        let out = Out::new(self.owns_stdout);
        let caller = self.caller(&matches);
        tokio::select! {
            code = self.dispatch(&matches, &caller, &out) => code.unwrap_or_else(|Stop(code)| code),
            _ = tokio::signal::ctrl_c() => exit::INTERRUPTED,
        }
    }

    /// The scopes this invocation holds: the command's, narrowed by `--scope`.
    fn caller(&self, matches: &ArgMatches) -> Caller {
        let asked: Option<Vec<&String>> = matches
            .try_get_many::<String>("scope")
            .ok()
            .flatten()
            .map(Iterator::collect);
        let all = || {
            self.declared
                .iter()
                .map(|s| s.wire.to_owned())
                .collect::<Vec<_>>()
        };
        let held = match (&self.scopes, asked) {
            (None, None) => return Caller(None),
            (Some(held), None) => held.clone(),
            (held, Some(asked)) => {
                crate::scopes::narrow(&self.declared, &held.clone().unwrap_or_else(all), &asked)
            }
        };
        Caller(Some(Principal::new("cli", self.name.clone()).with_scopes(held)))
    }

    async fn dispatch(&self, matches: &ArgMatches, caller: &Caller, out: &Out) -> Result<u8, Stop> {
        let (name, sub) = matches.subcommand().expect("a subcommand is required");
        match name {
            "list" => out
                .value(&self.list(sub.get_flag("json"), caller))
                .map(|()| exit::OK),
            "completions" => {
                let shell = match sub.get_one::<String>("shell").map(String::as_str) {
                    Some("zsh") => clap_complete::Shell::Zsh,
                    Some("fish") => clap_complete::Shell::Fish,
                    _ => clap_complete::Shell::Bash,
                };
                let mut script = Vec::new();
                clap_complete::generate(shell, &mut self.command(), self.name.clone(), &mut script);
                out.raw(&script).map(|()| exit::OK)
            }
            "get" | "keys" | "watch" => {
                let member = sub.get_one::<String>("member").expect("required");
                let row = self
                    .members
                    .iter()
                    .find(|m| &m.name == member)
                    .expect("clap checked it");
                caller.check(&format!("member `{}`", row.name), row.scope)?;
                let link = self.link(matches, caller)?;
                let timeout = timeout(matches);
                match name {
                    "keys" => {
                        let keys = link
                            .within(timeout, |d| async move { d.read(row.member).await }, row)
                            .await?;
                        out.value(&keys).map(|()| exit::OK)
                    }
                    "watch" => {
                        let changes = link
                            .within(timeout, |d| async move { d.watch(row.member).await }, row)
                            .await?;
                        follow(changes, out, |c| Some(change_json(c))).await
                    }
                    _ => self.get(row, sub, &link, timeout, out).await,
                }
            }
            tool => {
                let tool = self
                    .tools
                    .iter()
                    .find(|t| t.row.name == tool)
                    .expect("clap checked it");
                caller.check(&format!("tool `{}`", tool.row.name), tool.row.entry.scope)?;
                self.call(tool, sub, matches, caller, out).await
            }
        }
    }

    async fn get(
        &self,
        row: &MemberRow,
        sub: &ArgMatches,
        link: &Reach,
        timeout: Duration,
        out: &Out,
    ) -> Result<u8, Stop> {
        let key = sub.get_one::<String>("key");
        let follows = sub.get_flag("follow");
        match (row.kind, key) {
            (MemberKind::Collection, Some(key)) if !follows => {
                let item = link
                    .within(
                        timeout,
                        |d| async move { d.read_item(row.member, key).await },
                        row,
                    )
                    .await?;
                out.value(&item).map(|()| exit::OK)
            }
            (MemberKind::Collection, _) => Err(usage(format!(
                "`{}` is a collection: `keys {0}` lists its keys, `get {0} <KEY>` reads one item (without --follow)",
                row.name
            ))),
            (_, Some(_)) => Err(usage(format!(
                "`{}` is a {}: it has no items, so takes no key",
                row.name,
                row.kind.word()
            ))),
            (MemberKind::Cell, None) if !follows => {
                let value = link
                    .within(timeout, |d| async move { d.read(row.member).await }, row)
                    .await?;
                out.value(&value).map(|()| exit::OK)
            }
            (kind, None) => {
                // Watch before reading, so no change between the read and the watch is lost.
                let changes = if follows {
                    Some(
                        link.within(timeout, |d| async move { d.watch(row.member).await }, row)
                            .await?,
                    )
                } else {
                    None
                };
                let now = link
                    .within(timeout, |d| async move { d.read(row.member).await }, row)
                    .await?;
                let first: Vec<Value> = match (kind, now) {
                    (MemberKind::Stream, Value::Array(chunks)) => chunks,
                    (_, value) => vec![value],
                };
                for v in &first {
                    out.line(v)?;
                }
                match changes {
                    None => Ok(exit::OK),
                    Some(changes) => {
                        follow(changes, out, |c| match c {
                            Change::Set(v) | Change::Chunk(v) => Some(v),
                            Change::Lagged(n) => Some(json!({"lagged": n})),
                            _ => None,
                        })
                        .await
                    }
                }
            }
        }
    }

    async fn call(
        &self,
        tool: &Tool,
        sub: &ArgMatches,
        matches: &ArgMatches,
        caller: &Caller,
        out: &Out,
    ) -> Result<u8, Stop> {
        let arguments = match sub.get_one::<String>("input") {
            Some(text) => {
                let text = if text == "-" {
                    std::io::read_to_string(std::io::stdin())
                        .map_err(|e| usage(format!("stdin could not be read: {e}")))?
                } else {
                    text.clone()
                };
                match serde_json::from_str::<Value>(&text) {
                    Ok(Value::Object(o)) => o,
                    Ok(other) => return Err(usage(format!("--input must be one JSON object, not {other}"))),
                    Err(e) => return Err(usage(format!("--input is not JSON: {e}"))),
                }
            }
            None => flags::object(&tool.fields, sub),
        };
        let input = &tool.row.entry.input;
        let target = &tool.row.entry.target;
        // A procedure's input is decoded here by the served side's own decoder, into its Rust
        // type: what the served side would refuse on arrival is refused before any dial, in
        // its words, including what the schema cannot say (`4294967296` for a `u32`). Other
        // tools are checked against the schema they advertise (a bespoke or root tool then
        // decodes into its own type, in this process, before its client dials).
        let decode = match target {
            ToolTarget::Procedure { decode, .. } => *decode,
            _ => None,
        };
        if decode.is_none()
            && let Err(m) = check::check(
                &Value::Object(arguments.clone()),
                &Value::Object(input.schema.clone()),
            )
        {
            return Err(refuse(&Failure::new(
                FailureKind::InvalidInput {
                    field: m.field.clone(),
                },
                if m.field.is_empty() {
                    format!("invalid arguments: {}", m.message)
                } else {
                    format!("invalid argument `{}`: {}", m.field, m.message)
                },
            )));
        }
        // Kept for the layers as given (only when there are layers: a copy per call otherwise).
        let given = (!self.layers.is_empty()).then(|| arguments.clone());
        let value = schema::unwrap_input(input, Some(arguments)).map_err(|e| {
            refuse(&Failure::new(
                FailureKind::InvalidInput {
                    field: e.field.clone(),
                },
                format!("invalid argument `{}`: {}", e.field, e.message),
            ))
        })?;
        if let Some(decode) = decode {
            decode(&value).map_err(|f| refuse(&f))?;
        }
        if let Some(given) = &given {
            let who = self.invoker_holding(caller);
            let call = CallInfo::new(&tool.row.name, Some(&who), Some(given));
            if let Err(refusal) = self.layers.admit(&call) {
                return Err(refuse(&Failure::new(FailureKind::Refused, refusal)));
            }
        }
        let link = self.link(matches, caller)?;
        let bundle = link.bundle();
        let audited = Audited::start(self.audit, tool.row.mutates, || value.to_string());
        let answer = progress::drawn(timeout(matches), |cancel| target.run(&bundle, value, cancel))
            .await
            .unwrap_or_else(|| Err(timed_out(timeout(matches))))
            .map_err(|f| link.judge(f));
        if let Some(audited) = audited {
            audited.answered(Some(&invoker()), &tool.row.name, &answer);
        }
        if sub.get_flag("json") {
            out.value(&whole_answer(&answer))?;
        }
        match answer {
            Ok(output) => {
                if !sub.get_flag("json") {
                    out.value(&match output {
                        ToolOutput::Value(v) => v,
                        ToolOutput::Image(OkImage { detail, .. }) => detail,
                        // The value when the answer has one, else its blocks as MCP carries them.
                        ToolOutput::Content(OkContent { value: Some(v), .. }) => v,
                        ToolOutput::Content(OkContent { blocks, value: None }) => {
                            Value::Array(blocks.iter().map(block_json).collect())
                        }
                    })?;
                }
                Ok(exit::OK)
            }
            Err(f) => Err(refuse(&f)),
        }
    }

    /// The user running the command, holding the scopes this invocation holds: who a layer
    /// sees call.
    fn invoker_holding(&self, caller: &Caller) -> Principal {
        let scopes: Vec<String> = match &caller.0 {
            Some(p) => p.scopes().to_vec(),
            None => self.declared.iter().map(|s| s.wire.to_owned()).collect(),
        };
        invoker().with_scopes(scopes)
    }

    fn list(&self, whole: bool, caller: &Caller) -> Value {
        let tools = || self.tools.iter().filter(|t| caller.reaches(t.row.entry.scope));
        let members = || self.members.iter().filter(|m| caller.reaches(m.scope));
        if whole {
            let tools: Vec<Value> = tools()
                .map(|t| {
                    let mut o = Map::new();
                    o.insert("name".into(), t.row.name.clone().into());
                    if let Some(title) = t.row.title {
                        o.insert("title".into(), title.into());
                    }
                    if !t.row.description.is_empty() {
                        o.insert("description".into(), t.row.description.into());
                    }
                    o.insert(
                        "inputSchema".into(),
                        Value::Object(t.row.entry.input.schema.clone()),
                    );
                    o.insert(
                        "annotations".into(),
                        json!({"readOnlyHint": !t.row.mutates, "destructiveHint": t.row.mutates}),
                    );
                    Value::Object(o)
                })
                .collect();
            let members: Vec<Value> = members()
                .map(|m| {
                    let mut o = Map::new();
                    o.insert("name".into(), m.name.clone().into());
                    o.insert("kind".into(), m.kind.word().into());
                    o.insert("uri".into(), m.uri().into());
                    if !m.doc().is_empty() {
                        o.insert("description".into(), m.doc().into());
                    }
                    Value::Object(o)
                })
                .collect();
            let mut whole = json!({"tools": tools, "members": members});
            // Only when there are any: a roster without them lists as it always did.
            if !self.prompts.is_empty() {
                whole["prompts"] = Value::Array(self.prompts.clone());
            }
            if !self.views.is_empty() {
                whole["views"] = Value::Array(self.views.clone());
            }
            whole
        } else {
            let tools = tools().map(
                |t| json!({"name": t.row.name, "kind": "tool", "description": first_line(t.row.description)}),
            );
            let members = members()
                .map(|m| json!({"name": m.name, "kind": m.kind.word(), "description": first_line(m.doc())}));
            Value::Array(tools.chain(members).collect())
        }
    }

    /// The connection this invocation uses: in-process, or `--socket PATH` dialled on first
    /// use — once: a command that fails its local checks dials nothing, and a bespoke tool
    /// decodes its input before its client dials.
    fn link(&self, matches: &ArgMatches, caller: &Caller) -> Result<Reach, Stop> {
        let socket = self.socket.as_ref().and_then(|f| {
            matches
                .get_one::<PathBuf>("socket")
                .map(|p| (f.clone(), p.clone()))
        });
        let dial: Dial = match (socket, &self.local) {
            (Some((dial, path)), _) => {
                let (options, limit) = (caller.dial_options(), timeout(matches));
                Box::new(move || {
                    let answer = tokio::time::timeout(limit, dial(path.clone(), options.clone()));
                    let path = path.clone();
                    Box::pin(async move {
                        match answer.await {
                            Ok(Ok(mut owned)) => {
                                let dispose = owned.dispose.take();
                                Ok(Connection::new(owned.bundle.clone(), None, dispose))
                            }
                            // The daemon refused this caller (a uid it does not grant): its sentence.
                            Ok(Err(e)) if e.kind == FailureKind::Refused => Err(e),
                            Ok(Err(e)) => Err(unreachable(&path, &e.message)),
                            Err(_) => Err(unreachable(
                                &path,
                                &format!("no greeting within {} s", limit.as_secs()),
                            )),
                        }
                    })
                })
            }
            (None, Some(local)) => {
                let local = local.clone();
                Box::new(move || {
                    let bundle = local();
                    Box::pin(async move { Ok(Connection::new(bundle, None, None)) })
                })
            }
            (None, None) => return Err(usage("no served surface to reach: pass --socket PATH".to_owned())),
        };
        Ok(Reach {
            link: Link::new(Redial::Once, dial),
            specs: self.specs.clone(),
        })
    }
}

/// Who runs the command, as the audit names them: `uid:<n>` (from Linux's `/proc`; `-` where
/// it cannot be read).
fn invoker() -> Principal {
    use std::os::unix::fs::MetadataExt;
    let subject =
        std::fs::metadata("/proc/self").map_or_else(|_| "-".to_owned(), |m| format!("uid:{}", m.uid()));
    Principal::new("unix", subject)
}

fn timeout(matches: &ArgMatches) -> Duration {
    matches
        .get_one::<u64>("timeout")
        .map_or(DEFAULT_TIMEOUT, |s| Duration::from_secs(*s))
}

fn timed_out(after: Duration) -> Failure {
    Failure::new(
        FailureKind::Transport {
            outcome_unknown: true,
        },
        format!(
            "no answer within {} s (--timeout): the served side may still act on the request",
            after.as_secs()
        ),
    )
}

/// Prints `f` on stderr as JSON and answers the exit code its kind calls for.
fn refuse(f: &Failure) -> Stop {
    let line = serde_json::to_string(f).unwrap_or_else(|_| json!({"message": f.message}).to_string());
    eprintln!("{line}");
    Stop(match f.kind {
        FailureKind::Transport { .. } => exit::UNREACHABLE,
        FailureKind::InvalidInput { .. } => exit::USAGE,
        _ => exit::REFUSED,
    })
}

fn usage(message: String) -> Stop {
    refuse(&Failure::new(
        FailureKind::InvalidInput { field: String::new() },
        message,
    ))
}

/// The answer as `tools/call` carries it: text and structured content read off one value.
fn whole_answer(answer: &Result<ToolOutput, Failure>) -> Value {
    let normalize = |v: Value| match v {
        Value::Object(o) => Value::Object(o),
        other => json!({"value": other}),
    };
    match answer {
        Ok(ToolOutput::Value(v)) => {
            let structured = normalize(v.clone());
            let text = serde_json::to_string_pretty(&structured).unwrap_or_default();
            json!({"content": [{"type": "text", "text": text}], "structuredContent": structured, "isError": false})
        }
        Ok(ToolOutput::Image(OkImage { bytes, mime, detail })) => {
            let data = base64(bytes);
            json!({
                "content": [{"type": "image", "data": data, "mimeType": mime}],
                "structuredContent": normalize(detail.clone()),
                "isError": false
            })
        }
        Ok(ToolOutput::Content(OkContent { blocks, value })) => {
            let mut o =
                json!({"content": blocks.iter().map(block_json).collect::<Vec<_>>(), "isError": false});
            if let Some(v) = value {
                o["structuredContent"] = normalize(v.clone());
            }
            o
        }
        Err(f) => {
            let mut o = json!({"content": [{"type": "text", "text": f.message}], "isError": true});
            if let Some(d) = &f.detail {
                o["structuredContent"] = normalize(d.clone());
            }
            o
        }
    }
}

fn base64(bytes: &[u8]) -> String {
    base64::engine::general_purpose::STANDARD.encode(bytes)
}

/// One content block as `tools/call` carries it.
fn block_json(b: &Block) -> Value {
    match b {
        Block::Text(t) => json!({"type": "text", "text": t}),
        Block::Image { bytes, mime } => json!({"type": "image", "data": base64(bytes), "mimeType": mime}),
        Block::Audio { bytes, mime } => json!({"type": "audio", "data": base64(bytes), "mimeType": mime}),
        Block::Embedded { uri, mime, body } => {
            let mut r = json!({"uri": uri, "mimeType": mime});
            match body {
                EmbeddedBody::Text(t) => r["text"] = t.clone().into(),
                EmbeddedBody::Blob(bytes) => r["blob"] = base64(bytes).into(),
            }
            json!({"type": "resource", "resource": r})
        }
        Block::Link { uri, name, mime } => {
            let mut l = json!({"type": "resource_link", "uri": uri, "name": name});
            if let Some(m) = mime {
                l["mimeType"] = m.clone().into();
            }
            l
        }
    }
}

fn change_json(change: Change) -> Value {
    serde_json::to_value(&change).unwrap_or(Value::Null)
}

/// Prints each change `show` keeps as one JSON line until the feed ends (the served side went
/// away: unreachable) or the reader closes stdout (done).
async fn follow(
    mut changes: ChangeStream,
    out: &Out,
    show: impl Fn(Change) -> Option<Value>,
) -> Result<u8, Stop> {
    while let Some(change) = changes.next().await {
        if let Some(v) = show(change) {
            out.line(&v)?;
        }
    }
    Err(refuse(&Failure::new(
        FailureKind::Transport {
            outcome_unknown: false,
        },
        "the served surface ended the watch (it closed or went away)",
    )))
}

/// stdout: one JSON value (indented on a terminal, compact in a pipe) or JSON lines.
struct Out {
    pretty: bool,
    /// The real stdout, kept when the process is the command's (fd 1 then writes to stderr).
    data: Option<std::fs::File>,
}

impl Out {
    /// The process's stdout; with `own`, kept for data alone (see [`BuiltCli::main`]).
    fn new(own: bool) -> Self {
        #[cfg(unix)]
        let data = own
            .then(|| crate::stdout::keep().ok().map(std::fs::File::from))
            .flatten();
        #[cfg(not(unix))]
        let data: Option<std::fs::File> = {
            let _ = own;
            None
        };
        Out {
            pretty: data
                .as_ref()
                .map_or_else(|| std::io::stdout().is_terminal(), |f| f.is_terminal()),
            data,
        }
    }

    fn raw(&self, bytes: &[u8]) -> Result<(), Stop> {
        let written = match &self.data {
            Some(data) => {
                let mut data: &std::fs::File = data;
                data.write_all(bytes).and_then(|()| data.flush())
            }
            None => {
                let mut stdout = std::io::stdout().lock();
                stdout.write_all(bytes).and_then(|()| stdout.flush())
            }
        };
        match written {
            Ok(()) => Ok(()),
            // A reader that has what it wanted (`| head -1`): done, successfully.
            Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => Err(Stop(exit::OK)),
            Err(e) => Err(refuse(&Failure::new(FailureKind::Error, format!("stdout: {e}")))),
        }
    }

    fn value(&self, v: &Value) -> Result<(), Stop> {
        let mut text = if self.pretty {
            serde_json::to_string_pretty(v)
        } else {
            serde_json::to_string(v)
        }
        .unwrap_or_default();
        text.push('\n');
        self.raw(text.as_bytes())
    }

    fn line(&self, v: &Value) -> Result<(), Stop> {
        let mut text = serde_json::to_string(v).unwrap_or_default();
        text.push('\n');
        self.raw(text.as_bytes())
    }
}

fn unreachable(path: &Path, why: &str) -> Failure {
    Failure::new(
        FailureKind::Transport {
            outcome_unknown: false,
        },
        format!(
            "the served surface at {} could not be reached: {why}",
            path.display()
        ),
    )
}

/// What one invocation reaches: the surfaces of the roster over one link, dialled once.
struct Reach {
    link: Arc<Link>,
    specs: Vec<(Option<String>, &'static SurfaceSpec)>,
}

impl Reach {
    /// A bundle of dispatches over the link: the first request of any dials (once, shared).
    fn bundle(&self) -> BundleClient {
        let mut core = None;
        let mut siblings = BTreeMap::new();
        for (owner, spec) in &self.specs {
            let dispatch: Arc<dyn Dispatch> =
                Arc::new(LinkedDispatch::new(spec, owner.clone(), self.link.clone()));
            match owner {
                None => core = Some(dispatch),
                Some(k) => {
                    siblings.insert(k.clone(), dispatch);
                }
            }
        }
        BundleClient::from_dispatches(core, siblings)
    }

    /// A tool's failure as the command reports it: the served side unreachable if it was
    /// (whatever a bespoke tool's `?` made of that), so "cannot reach" exits the same for
    /// every command.
    fn judge(&self, f: Failure) -> Failure {
        match self.link.lost() {
            Some(lost) if !matches!(f.kind, FailureKind::Transport { .. }) => lost.clone(),
            _ => f,
        }
    }

    /// One request to `row`'s surface, bounded by `timeout`; a failure is printed and stops.
    async fn within<F, Fut, T>(&self, timeout: Duration, request: F, row: &MemberRow) -> Result<T, Stop>
    where
        F: FnOnce(Arc<dyn Dispatch>) -> Fut,
        Fut: std::future::Future<Output = Result<T, Failure>>,
    {
        let run = async {
            let dispatch = self.link.get().await?.bundle.dispatch_for(row.owner.as_deref())?;
            request(dispatch).await
        };
        match tokio::time::timeout(timeout, run).await {
            Ok(Ok(v)) => Ok(v),
            Ok(Err(f)) => Err(refuse(&f)),
            Err(_) => Err(refuse(&timed_out(timeout))),
        }
    }
}

/// The argv face's flag parser alone, for fuzzing: the flags a tool whose input schema is
/// `schema` gets, applied to `argv` (without the binary's name), and the input object they
/// spell, or clap's refusal as text.
///
/// ```
/// let schema = serde_json::json!({"type": "object", "properties": {"pid": {"type": "integer"}}});
/// let schema = schema.as_object().unwrap();
/// let input = surface_runtime::cli::__parse_flags(schema, &["--pid".into(), "2".into()]).unwrap();
/// assert_eq!(input["pid"], 2);
/// assert!(surface_runtime::cli::__parse_flags(schema, &["--pid".into(), "x".into()]).is_err());
/// ```
#[doc(hidden)]
pub fn __parse_flags(schema: &Map<String, Value>, argv: &[String]) -> Result<Map<String, Value>, String> {
    let fields = flags::fields(schema);
    let mut command = Command::new("tool").no_binary_name(true);
    for field in &fields {
        for arg in flags::args(field) {
            command = command.arg(arg);
        }
    }
    let command = command.arg(
        Arg::new("input")
            .long("input")
            .conflicts_with_all(flags::ids(&fields)),
    );
    let matches = command.try_get_matches_from(argv).map_err(|e| e.to_string())?;
    Ok(flags::object(&fields, &matches))
}
