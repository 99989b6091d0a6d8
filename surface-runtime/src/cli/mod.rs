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
mod command;
mod flags;
mod out;
mod progress;
mod run;

use crate::Scope;
use crate::audit::Audit;
use crate::bundle::{BundleClient, Member, OwnedBundle, Roster, Siblings};
use crate::failure::Failure;
use crate::scopes::listed;
use crate::spec::{MemberKind, SurfaceSpec};
use crate::table::{ToolRow, exposed_members, resource_uri, scoped_member_name, scoped_tool_name};
use crate::tool::BespokeTool;
use crate::wire::DialOptions;
use clap::{Arg, Command};
use futures::future::BoxFuture;
use serde_json::{Map, Value, json};
use std::fmt;
use std::path::PathBuf;
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
