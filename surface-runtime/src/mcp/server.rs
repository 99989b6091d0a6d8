//! [`McpServer`]: the builder of an MCP server over a rooted bundle — the roster, the client
//! factory, the identity and `instructions`, the settings — composed by `start` into one
//! [`ServedMcp`].

use super::config::{Factory, Instructions, Settings};
use super::generation::{CompositionError, Fixed};
use super::serve::{ServeError, ServedMcp};
use super::served::Shared;
use super::tasks::TaskSettings;
use super::views;
use crate::audit::Audit;
use crate::bundle::{BundleClient, Member, OwnedBundle, Roster, Siblings};
use crate::schema::profile::SchemaProfile;
use crate::tool::BespokeTool;
use rmcp::model::Implementation;
use std::sync::Arc;

/// Builds an MCP server over a rooted bundle.
#[must_use = "call `.start()` to compose and serve"]
pub struct McpServer {
    identity: Implementation,
    instructions: Instructions,
    roster: Roster,
    factory: Option<Factory>,
    profile: SchemaProfile,
    settings: Settings,
    ui: views::Ui,
}

impl McpServer {
    /// A server that calls itself `name` at `version` on the wire.
    pub fn new(name: impl Into<String>, version: impl Into<String>) -> Self {
        McpServer {
            identity: Implementation::new(name.into(), version.into()),
            instructions: Instructions::None,
            roster: Roster::new(),
            factory: None,
            profile: SchemaProfile::Portable,
            settings: Settings::default(),
            ui: views::Ui::default(),
        }
    }

    /// How many URIs one session may watch at once, legacy `resources/subscribe` and the URIs
    /// of its `subscriptions/listen` streams together (default [`MAX_SUBSCRIPTIONS`](super::MAX_SUBSCRIPTIONS)). One
    /// more is refused with -32600 and a sentence naming the limit; re-subscribing a URI the
    /// session already holds costs nothing.
    pub fn max_subscriptions(mut self, limit: usize) -> Self {
        self.settings.max_subscriptions = limit;
        self
    }

    /// How many requests one connection over stdio (or [`ServedMcp::serve`]) may have in
    /// flight — read, answer not yet written (default [`MAX_IN_FLIGHT`](super::MAX_IN_FLIGHT), at least 1). At the
    /// bound the connection's input is not read until an answer is *written*, so a client that
    /// sends without reading cannot make the server buffer answers; an open
    /// `subscriptions/listen` stream holds one until it ends. Over Streamable HTTP each request
    /// is an HTTP exchange of its own, bounded by `HttpOptions::max_sessions` and the
    /// connections the client opens, not by this.
    ///
    /// ```
    /// # use surface_runtime::mcp::{McpServer, MAX_IN_FLIGHT};
    /// assert_eq!(MAX_IN_FLIGHT, 512);
    /// let server = McpServer::new("ops", "1.0.0").max_in_flight(64);
    /// ```
    pub fn max_in_flight(mut self, requests: usize) -> Self {
        self.settings.transport.in_flight = requests;
        self
    }

    /// The longest line, in bytes, one connection over stdio (or [`ServedMcp::serve`]) reads
    /// (default [`MAX_LINE`](super::MAX_LINE), 16 MiB). A longer line is answered `-32600` ("the line is longer
    /// than N bytes", with the request's `id` when it came before the cut) and skipped; the
    /// connection goes on. Over Streamable HTTP the same bound is `HttpOptions::max_body`.
    ///
    /// ```
    /// # use surface_runtime::mcp::{McpServer, MAX_LINE};
    /// assert_eq!(MAX_LINE, 16 * 1024 * 1024);
    /// let server = McpServer::new("ops", "1.0.0").max_line(1024 * 1024);
    /// ```
    pub fn max_line(mut self, bytes: usize) -> Self {
        self.settings.transport.max_line = bytes;
        self
    }

    /// How long, once a connection's input has ended (stdin EOF), the server keeps writing
    /// the answers still queued to a reader that has stopped reading (default
    /// [`CLOSE_STALL`](super::CLOSE_STALL), 30 s). A reader that reads, however slowly, gets every answer whole:
    /// only a writer that makes no progress for this long is abandoned.
    ///
    /// ```
    /// # use surface_runtime::mcp::{McpServer, CLOSE_STALL};
    /// # use std::time::Duration;
    /// assert_eq!(CLOSE_STALL, Duration::from_secs(30));
    /// let server = McpServer::new("ops", "1.0.0").close_stall(Duration::from_secs(5));
    /// ```
    pub fn close_stall(mut self, stall: std::time::Duration) -> Self {
        self.settings.transport.close_stall = stall;
        self
    }

    /// How long a graceful shutdown ([`ServedMcp::shutdown`]) of a connection over stdio (or
    /// [`ServedMcp::serve`]) waits for its requests in flight to be answered (default
    /// [`DEFAULT_DRAIN_TIMEOUT`](crate::drain::DEFAULT_DRAIN_TIMEOUT), 10 s, as on every face).
    /// Past it, what still runs is cancelled and the connection ends; its answers already
    /// given are still flushed (within [`close_stall`](Self::close_stall)).
    ///
    /// ```
    /// # use surface_runtime::mcp::McpServer;
    /// # use std::time::Duration;
    /// let server = McpServer::new("ops", "1.0.0").drain_timeout(Duration::from_secs(3));
    /// ```
    pub fn drain_timeout(mut self, timeout: std::time::Duration) -> Self {
        self.settings.transport.drain_timeout = timeout;
        self
    }

    /// Leaves one structured `tracing` event per call of a mutating tool, on every transport
    /// (default [`Audit::Off`]): at `info`, target [`AUDIT_TARGET`](super::AUDIT_TARGET) (`surface::audit`), with
    /// fields `subject` (the caller's, `-` when the transport identifies nobody), `issuer`,
    /// `tool`, `outcome` (`ok`, `failed: <why>`, `interrupted`) and `duration_ms`; `arguments`
    /// (JSON) only with [`Audit::MutationsWithArguments`]. The library installs no subscriber:
    /// route the target where an audit trail belongs.
    ///
    /// ```
    /// # use surface_runtime::mcp::{Audit, McpServer};
    /// let server = McpServer::new("ops", "1.0.0").audit(Audit::Mutations);
    /// ```
    pub fn audit(mut self, audit: Audit) -> Self {
        self.settings.audit = audit;
        self
    }

    /// How long a call waits for the host's answer to one ask it sends a legacy session
    /// (`ctx.elicit`, `ctx.sample`, `ctx.roots`; default [`ASK_TIMEOUT`](super::ASK_TIMEOUT), 5 minutes). Past it
    /// the host is sent `notifications/cancelled` for the ask and the call's ask fails with
    /// `AskError::Failed` ("no answer within N s"), so the call ends. An answer that cannot be
    /// read (a malformed error, say) fails the ask at once, with `AskError::Failed`. (A
    /// 2026-07-28 request holds nothing between rounds: its asks need no timeout.)
    ///
    /// ```
    /// # use surface_runtime::mcp::{McpServer, ASK_TIMEOUT};
    /// # use std::time::Duration;
    /// assert_eq!(ASK_TIMEOUT, Duration::from_secs(300));
    /// let server = McpServer::new("ops", "1.0.0").ask_timeout(Duration::from_secs(60));
    /// ```
    pub fn ask_timeout(mut self, timeout: std::time::Duration) -> Self {
        self.settings.ask_timeout = timeout;
        self
    }

    /// Narrows what a stdio client gets (every connection served over our transport:
    /// [`ServedMcp::serve_stdio`], [`ServedMcp::serve`]) to what `scopes` reach, e.g. an agent
    /// given `ops.read` only. The parent process is trusted (the MCP authorization spec has
    /// stdio take its credentials from the environment), so by default it gets everything;
    /// given scopes, its lists show exactly what they reach and anything else answers as if it
    /// did not exist. The tools see the principal `stdio` with these scopes.
    ///
    /// ```
    /// # use surface_runtime::mcp::McpServer;
    /// let server = McpServer::new("ops", "1.0.0").stdio_scopes(["ops.read"]);
    /// ```
    pub fn stdio_scopes<S: Into<String>>(mut self, scopes: impl IntoIterator<Item = S>) -> Self {
        self.settings.stdio_scopes = Some(scopes.into_iter().map(Into::into).collect());
        self
    }

    /// The bounds of MCP tasks (a `#[tool(task)]` tool's calls for clients that declare the
    /// `io.modelcontextprotocol/tasks` extension): how long a task is kept from its creation
    /// (its `ttlMs`; a task still running then ends `failed`, saying so), the polling interval
    /// suggested, and how many live tasks the server and one connection may hold (one more is
    /// refused with -32603 naming the limit). The defaults are [`TaskSettings::default`].
    ///
    /// ```
    /// # use surface_runtime::mcp::{McpServer, TaskSettings, TASK_TTL, MAX_TASKS};
    /// # use std::time::Duration;
    /// assert_eq!((TASK_TTL, MAX_TASKS), (Duration::from_secs(900), 1024));
    /// let server = McpServer::new("ops", "1.0.0").task_settings(TaskSettings {
    ///     ttl: Duration::from_secs(60),
    ///     ..TaskSettings::default()
    /// });
    /// ```
    pub fn task_settings(mut self, settings: TaskSettings) -> Self {
        self.settings.tasks = settings;
        self
    }

    /// Adds a [`CallLayer`](crate::layer::CallLayer): every `tools/call`, on every transport,
    /// passes it before it runs (layers in the order added), and one it refuses answers
    /// `isError` with its sentence. It sees the tool, the caller's principal and the
    /// arguments (see [`crate::layer`] for why this is not a `tower::Layer`).
    ///
    /// ```
    /// # use surface_runtime::mcp::McpServer;
    /// use surface_runtime::layer::{CallInfo, CallLayer};
    /// struct NoAnonymousWrites;
    /// impl CallLayer for NoAnonymousWrites {
    ///     fn admit(&self, call: &CallInfo<'_>) -> Result<(), String> {
    ///         match (call.principal(), call.tool().starts_with("proc_")) {
    ///             (None, true) => Err("sign in to change processes".to_owned()),
    ///             _ => Ok(()),
    ///         }
    ///     }
    /// }
    /// let server = McpServer::new("ops", "1.0.0").layer(NoAnonymousWrites);
    /// ```
    pub fn layer(mut self, layer: impl crate::layer::CallLayer) -> Self {
        self.settings.layers.push(layer);
        self
    }

    /// The `instructions` hosts read at `initialize` / `server/discover`.
    pub fn instructions(mut self, instructions: impl Into<Instructions>) -> Self {
        self.instructions = instructions.into();
        self
    }

    /// The unprefixed core.
    pub fn core(mut self, core: Member) -> Self {
        self.roster = self.roster.core(core);
        self
    }

    /// The short form for one surface in this process: `surface` is the core, served through
    /// `expose`. The same as `.core(Member::new(expose)).client(…)` with a factory answering
    /// [`BundleClient::direct`]; use the long form for bespoke tools and prompts
    /// (`Member::new(expose).tool(T)`), siblings, or a surface dialled elsewhere
    /// ([`McpServer::dial`]).
    ///
    /// ```no_run
    /// use surface_runtime::mcp::McpServer;
    /// # async fn run<S: surface_runtime::Surface>(tiny: S, expose: surface_runtime::Expose<S>) -> Result<(), surface_runtime::mcp::ServeError> {
    /// McpServer::new("tiny", "1.0.0").surface(tiny, expose).serve_stdio().await
    /// # }
    /// ```
    pub fn surface<S: crate::Surface>(self, surface: impl Into<Arc<S>>, expose: crate::Expose<S>) -> Self {
        let surface = surface.into();
        self.core(Member::new(expose))
            .client(move || BundleClient::direct(surface.clone()))
    }

    /// Adds a sibling under `key`.
    pub fn sibling(mut self, key: impl Into<String>, sibling: Member) -> Self {
        self.roster = self.roster.sibling(key, sibling);
        self
    }

    /// Sets every sibling at once.
    pub fn siblings(mut self, siblings: Siblings) -> Self {
        self.roster = self.roster.siblings(siblings);
        self
    }

    /// Takes a whole static roster built (and checked at compile time) by `bundle!`.
    pub fn roster(mut self, roster: Roster) -> Self {
        self.roster = self.roster.extend(roster);
        self
    }

    /// Declares an MCP Apps view (see [`crate::view`](mod@crate::view)): `resources/list` lists it as
    /// `text/html;profile=mcp-app`, `resources/read` answers its page, every tool bound to it
    /// (`#[tool(view = PANEL)]`) carries `_meta.ui.resourceUri`, and the capabilities carry the
    /// `io.modelcontextprotocol/ui` extension. `start()` refuses a tool bound to a view that
    /// is not declared, a view declared twice, and a view at a URI a member also claims.
    ///
    /// ```
    /// # use surface_runtime::mcp::McpServer;
    /// use surface_runtime::View;
    /// const PANEL: View = surface_runtime::view!("ui://ops/panel", "<!doctype html><p>panel</p>");
    /// let server = McpServer::new("ops", "1.0.0").view(PANEL);
    /// ```
    pub fn view(mut self, view: crate::view::View) -> Self {
        self.roster = self.roster.view(view);
        self
    }

    /// Serves views and UI meta (`true`, the default) or none at all (`false`, what `--no-ui`
    /// on the examples sets): no view resource, no `io.modelcontextprotocol/ui` extension, no
    /// `_meta.ui` on any tool, no embedded page. View-bound tools answer as every tool does.
    pub fn ui(mut self, enabled: bool) -> Self {
        self.ui.enabled = enabled;
        self
    }

    /// Whether view-bound tools also carry the flat `_meta["ui/resourceUri"]` key older Apps
    /// hosts read (default `true`; the nested `_meta.ui.resourceUri` is always there).
    pub fn flat_ui_key(mut self, on: bool) -> Self {
        self.ui.flat_key = on;
        self
    }

    /// The embedded convention (mcp-ui): for a client that renders views — its capabilities
    /// carry the `io.modelcontextprotocol/ui` extension with `text/html;profile=mcp-app` among
    /// its `mimeTypes`, at `initialize` or on a 2026-07-28 request — a view-bound tool's
    /// result also embeds the page as a `resource` block, after its text (default `false`).
    pub fn embed_views(mut self, on: bool) -> Self {
        self.ui.embed = on;
        self
    }

    /// Adds a bundle-root tool (bare-named, handed the whole bundle).
    pub fn root_tool<T: BespokeTool<Client = BundleClient>>(mut self, tool: T) -> Self {
        self.roster = self.roster.root_tool(tool);
        self
    }

    /// Adds a bundle-root prompt (`#[prompt]` over `&BundleClient`): bare-named, handed the
    /// whole bundle, its name in the one collision check with every member's prompts.
    pub fn root_prompt<P: crate::prompt::BespokePrompt<Client = BundleClient>>(mut self, prompt: P) -> Self {
        self.roster = self.roster.root_prompt(prompt);
        self
    }

    /// The factory of live clients, re-invoked after every reroster (so it must read the
    /// host's current roster rather than close over one).
    pub fn client(mut self, factory: impl Fn() -> BundleClient + Send + Sync + 'static) -> Self {
        self.factory = Some(Factory::Bare(Arc::new(factory)));
        self
    }

    /// Bridges a surface served elsewhere: `dial` opens a connection (e.g. with
    /// [`crate::wire::dial_unix_socket`]) and answers it as an [`OwnedBundle`]. One connection
    /// is memoised and shared; it is re-dialled after it drops and after every reroster.
    pub fn dial<F, Fut>(mut self, dial: F) -> Self
    where
        F: Fn() -> Fut + Send + Sync + 'static,
        Fut: std::future::Future<Output = Result<OwnedBundle, crate::Failure>> + Send + 'static,
    {
        self.factory = Some(Factory::Dial(Arc::new(move || Box::pin(dial()))));
        self
    }

    /// Rewrites every advertised input schema for one kind of host (see
    /// [`crate::schema::profile`] for each profile's rules and their sources). `start()` then
    /// refuses a tool whose input the profile cannot express, naming the tool and the field.
    ///
    /// ```
    /// # use surface_runtime::mcp::McpServer;
    /// use surface_runtime::schema::profile::SchemaProfile;
    /// let server = McpServer::new("ops", "1.0.0").schema_profile(SchemaProfile::OpenAiStrict);
    /// ```
    pub fn schema_profile(mut self, profile: SchemaProfile) -> Self {
        self.profile = profile;
        self
    }

    /// Composes the bundle (refusing it with every problem named) and makes it servable.
    pub fn start(self) -> Result<ServedMcp, CompositionError> {
        let factory = self
            .factory
            .unwrap_or_else(|| Factory::Bare(Arc::new(BundleClient::new)));
        let Roster {
            core,
            siblings,
            root,
            prompts,
            views,
        } = self.roster;
        let mut ui = self.ui;
        ui.views.extend(views);
        let fixed = Fixed {
            core,
            root_tools: root,
            root_prompts: prompts.0,
            profile: self.profile,
            ui,
        };
        let shared = Shared::boot(
            self.identity,
            self.instructions,
            fixed,
            siblings,
            factory,
            self.settings,
        )?;
        Ok(ServedMcp { shared })
    }
}

impl McpServer {
    /// Composes the bundle ([`start`](Self::start)) and serves it on stdio until the peer
    /// closes it ([`ServedMcp::serve_stdio`]); a composition problem is the error.
    pub async fn serve_stdio(self) -> Result<(), ServeError> {
        let served = self.start().map_err(|e| ServeError(e.to_string()))?;
        served.serve_stdio().await
    }
}
