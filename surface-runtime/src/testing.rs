//! A test client for your own tests: drive a served bundle in memory as an agent would.
//!
//! [`TestClient::connect`] opens a real MCP connection to a [`ServedMcp`] over an in-memory
//! duplex — the same transport, session handler and served generation a host's connection
//! gets — with rmcp's client on the other end, in either protocol [`Era`]. Every step is one
//! line, and nothing in this API is an rmcp type:
//!
//! - [`TestClient::list_tools`], [`TestClient::list_resources`], [`TestClient::list_templates`]
//! - [`TestClient::call`] answers an [`Answer`]: the value, a [`Refusal`] (the tool's `Err`: its
//!   message and detail) or a [`Rejection`] (a JSON-RPC error, e.g. an unknown tool)
//! - [`TestClient::read`] answers the JSON a resource holds
//! - [`TestClient::subscribe`] answers [`Notices`], the stream of `updated` notices for one URI
//!   (`resources/subscribe` in the legacy era, `subscriptions/listen` in 2026-07-28)
//! - [`TestClient::watch_lists`] and [`TestClient::reroster`] for live rosters
//! - [`TestClient::check_profile`] fails when a tool's input cannot be expressed in a schema
//!   profile, naming the tool and the field
//!
//! Enable it in your dev-dependencies: `mcp-surface = { version = "…", features = ["testing"] }`.
//! A user's test (this example runs as a doc test of the `surface` crate, whose macros it needs):
//!
//! ```ignore
//! use serde_json::json;
//! use std::convert::Infallible;
//! use surface::mcp::{BundleClient, McpServer, Member};
//! use surface::testing::{Answer, Era, TestClient};
//! use surface::{expose, surface, Expose};
//!
//! #[surface]
//! pub struct Counter {
//!     /// How far it has counted.
//!     #[cell]
//!     pub count: u32,
//! }
//!
//! #[surface]
//! impl Counter {
//!     /// Adds one.
//!     #[procedure("count.up")]
//!     async fn up(&self) -> Result<u32, Infallible> {
//!         self.count.update(|c| *c += 1);
//!         Ok(self.count.get())
//!     }
//! }
//!
//! const EXPOSE: Expose<Counter> = expose!(Counter { count: resource, "count.up": tool(mutates) });
//!
//! # #[tokio::main(flavor = "current_thread")]
//! # async fn main() {
//! let counter = std::sync::Arc::new(Counter { count: surface::Cell::new(0) });
//! let served = McpServer::new("counter", "1.0.0")
//!     .core(Member::new(EXPOSE))
//!     .client({
//!         let counter = counter.clone();
//!         move || BundleClient::with_core(CounterClient::direct(counter.clone()))
//!     })
//!     .start()
//!     .unwrap();
//! for era in Era::ALL {
//!     let agent = TestClient::connect(&served, era).await;
//!     assert_eq!(agent.list_tools().await[0].name, "count_up");
//!     let mut updates = agent.subscribe("surface://cells/count").await.unwrap();
//!     assert!(matches!(agent.call("count_up", json!({})).await, Answer::Value(_)));
//!     assert_eq!(updates.next().await.unwrap().uri(), Some("surface://cells/count"));
//!     assert!(agent.read("surface://cells/count").await.unwrap().as_u64().unwrap() >= 1);
//! }
//! # }
//! ```

use crate::mcp::{CompositionError, ServedMcp, Siblings};
use crate::schema::InputSchema;
use crate::schema::profile::{ProfileError, SchemaProfile};
use crate::sync::lock;
use rmcp::model::{
    CallToolRequestParams, CallToolResult, ClientCapabilities, ClientConfig, Implementation, ProtocolVersion,
    ReadResourceRequestParams, ResourceContents, ResourceUpdatedNotificationParam, ServerNotification,
    SubscriptionFilter,
};
use rmcp::service::{NotificationContext, RunningService};
use rmcp::{ClientHandler, ClientLifecycleMode, ClientServiceExt, RoleClient, ServiceExt};
use serde_json::Value;
use std::collections::HashMap;
use std::fmt;
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tokio::sync::mpsc;

/// The protocol era a test client opens its connection in. One server serves both.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Era {
    /// `initialize` (protocol 2025-11-25 and earlier); subscriptions by `resources/subscribe`.
    Legacy,
    /// `server/discover` (protocol 2026-07-28); subscriptions by `subscriptions/listen`.
    Modern,
}

impl Era {
    /// Both eras, for `for era in Era::ALL { … }`.
    ///
    /// ```
    /// assert_eq!(surface_runtime::testing::Era::ALL.len(), 2);
    /// ```
    pub const ALL: [Era; 2] = [Era::Legacy, Era::Modern];
}

/// What a tool call answered, as an agent sees it.
#[derive(Clone, Debug, PartialEq)]
pub enum Answer {
    /// Success: the structured content (a bare value travels as `{"value": …}`).
    Value(Value),
    /// The tool answered an error result (`isError: true`): a refusal the agent reads.
    Refused(Refusal),
    /// The call never reached a tool (a JSON-RPC error: unknown tool, bad params, closed
    /// connection).
    Rejected(Rejection),
}

/// A tool's refusal: its message and, for a `ToolFailure<D>`, the detail `D` as JSON.
#[derive(Clone, Debug, PartialEq)]
pub struct Refusal {
    /// The text the agent reads (`surface-mcp: there is no process 4242`).
    pub message: String,
    /// The structured detail, when the failure carried one.
    pub detail: Option<Value>,
}

/// A request answered with an error instead of a result.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Rejection {
    /// The JSON-RPC error code (`-32602` for an unknown tool); `None` when the connection
    /// itself failed.
    pub code: Option<i32>,
    /// The error message.
    pub message: String,
}

impl fmt::Display for Rejection {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.code {
            Some(code) => write!(f, "{} (JSON-RPC error {code})", self.message),
            None => write!(f, "{} (the connection failed)", self.message),
        }
    }
}

impl std::error::Error for Rejection {}

impl Answer {
    /// The value of a successful call.
    ///
    /// # Panics
    ///
    /// When the call was refused or rejected, with the refusal's sentence — so a test reads
    /// `client.call(…).await.value()`.
    ///
    /// ```
    /// # use surface_runtime::testing::Answer;
    /// assert_eq!(Answer::Value(serde_json::json!(1)).value(), serde_json::json!(1));
    /// ```
    #[track_caller]
    pub fn value(self) -> Value {
        match self {
            Answer::Value(v) => v,
            Answer::Refused(r) => panic!("the call was refused: {} (detail: {:?})", r.message, r.detail),
            Answer::Rejected(r) => panic!("the call was rejected: {r}"),
        }
    }

    /// The refusal of a call the tool refused.
    ///
    /// # Panics
    ///
    /// When the call succeeded or was rejected.
    ///
    /// ```
    /// # use surface_runtime::testing::{Answer, Refusal};
    /// let refused = Answer::Refused(Refusal { message: "no".into(), detail: None });
    /// assert_eq!(refused.refusal().message, "no");
    /// ```
    #[track_caller]
    pub fn refusal(self) -> Refusal {
        match self {
            Answer::Refused(r) => r,
            other => panic!("expected a refusal, got {other:?}"),
        }
    }

    /// The rejection of a call that never reached a tool.
    ///
    /// # Panics
    ///
    /// When the call was answered by a tool.
    ///
    /// ```
    /// # use surface_runtime::testing::{Answer, Rejection};
    /// let rejected = Answer::Rejected(Rejection { code: Some(-32602), message: "unknown".into() });
    /// assert_eq!(rejected.rejection().code, Some(-32602));
    /// ```
    #[track_caller]
    pub fn rejection(self) -> Rejection {
        match self {
            Answer::Rejected(r) => r,
            other => panic!("expected a JSON-RPC error, got {other:?}"),
        }
    }
}

/// One tool as `tools/list` advertised it.
#[derive(Clone, Debug, PartialEq)]
pub struct ToolInfo {
    /// Its name on the wire (`proc_kill`, `t_proc_kill`).
    pub name: String,
    /// Its advertised input schema.
    pub input_schema: Value,
    /// Whether it is annotated `readOnlyHint: true`.
    pub read_only: bool,
    /// The whole entry as listed (title, description, annotations, schemas).
    pub listed: Value,
}

/// One resource as `resources/list` advertised it.
#[derive(Clone, Debug, PartialEq)]
pub struct ResourceInfo {
    /// Its URI (`surface://cells/load`).
    pub uri: String,
    /// Its name (`load`, `t/load`).
    pub name: String,
    /// The whole entry as listed.
    pub listed: Value,
}

/// One skill as `skills/list` listed it (the skills extension).
#[derive(Clone, Debug, PartialEq)]
pub struct SkillInfo {
    /// The URI of its `SKILL.md` (`skill://triage/SKILL.md`).
    pub uri: String,
    /// Its name (`triage`).
    pub name: String,
    /// Its description.
    pub description: String,
    /// The whole entry as listed (`uri`, `frontmatter`, `resources` with digests).
    pub listed: Value,
}

/// One resource template as `resources/templates/list` advertised it.
#[derive(Clone, Debug, PartialEq)]
pub struct TemplateInfo {
    /// Its URI template (`surface://collections/processes/{id}`).
    pub uri_template: String,
    /// Its name.
    pub name: String,
    /// The whole entry as listed.
    pub listed: Value,
}

/// A notice the server sent.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Notice {
    /// `notifications/resources/updated` for this URI.
    Updated(String),
    /// `notifications/tools/list_changed`.
    ToolsChanged,
    /// `notifications/resources/list_changed`.
    ResourcesChanged,
    /// A 2026-07-28 listen stream ended with this error (e.g. its URI is not served).
    Ended(String),
}

impl Notice {
    /// The URI of an `Updated` notice.
    ///
    /// ```
    /// # use surface_runtime::testing::Notice;
    /// assert_eq!(Notice::Updated("surface://cells/load".into()).uri(), Some("surface://cells/load"));
    /// assert_eq!(Notice::ToolsChanged.uri(), None);
    /// ```
    pub fn uri(&self) -> Option<&str> {
        match self {
            Notice::Updated(uri) => Some(uri),
            _ => None,
        }
    }
}

/// A stream of notices (from [`TestClient::subscribe`] or [`TestClient::watch_lists`]). Dropping
/// it stops listening on the client side.
pub struct Notices {
    heard: mpsc::UnboundedReceiver<Notice>,
}

impl Notices {
    /// How long [`Notices::next`] waits: well past the server's 200 ms debounce.
    pub const WAIT: Duration = Duration::from_secs(5);

    /// The next notice, waiting up to [`Notices::WAIT`]; `None` when none came or the stream
    /// ended.
    pub async fn next(&mut self) -> Option<Notice> {
        self.next_within(Self::WAIT).await
    }

    /// The next notice, waiting up to `wait`.
    pub async fn next_within(&mut self, wait: Duration) -> Option<Notice> {
        tokio::time::timeout(wait, self.heard.recv()).await.ok().flatten()
    }

    /// Every notice until none has come for `quiet` (what a burst of writes coalesced into).
    pub async fn until_quiet(&mut self, quiet: Duration) -> Vec<Notice> {
        let mut heard = Vec::new();
        while let Some(notice) = self.next_within(quiet).await {
            heard.push(notice);
        }
        heard
    }
}

type Senders = Vec<mpsc::UnboundedSender<Notice>>;

/// Where the notifications of a legacy session go: `updated` by URI, list changes to every
/// list watcher.
#[derive(Default)]
struct Routes {
    updated: HashMap<String, Senders>,
    lists: Senders,
}

#[derive(Clone)]
struct Router {
    routes: Arc<Mutex<Routes>>,
}

impl Router {
    fn send(senders: &mut Senders, notice: &Notice) {
        senders.retain(|s| s.send(notice.clone()).is_ok());
    }

    fn updated(&self, uri: String) {
        let mut routes = lock(&self.routes);
        if let Some(senders) = routes.updated.get_mut(&uri) {
            Self::send(senders, &Notice::Updated(uri));
        }
    }

    fn lists(&self, notice: Notice) {
        Self::send(&mut lock(&self.routes).lists, &notice);
    }
}

impl ClientHandler for Router {
    async fn on_resource_updated(
        &self,
        params: ResourceUpdatedNotificationParam,
        _context: NotificationContext<RoleClient>,
    ) {
        self.updated(params.uri);
    }
    async fn on_tool_list_changed(&self, _context: NotificationContext<RoleClient>) {
        self.lists(Notice::ToolsChanged);
    }
    async fn on_resource_list_changed(&self, _context: NotificationContext<RoleClient>) {
        self.lists(Notice::ResourcesChanged);
    }
    fn get_info(&self) -> ClientConfig {
        ClientConfig::new(
            ClientCapabilities::default(),
            Implementation::new("surface-testing", env!("CARGO_PKG_VERSION")),
        )
        .with_protocol_version(ProtocolVersion::LATEST_WITH_INITIALIZE)
    }
}

/// An agent connected in memory to a served bundle. See the [module docs](self).
pub struct TestClient {
    era: Era,
    served: ServedMcp,
    router: Router,
    service: RunningService<RoleClient, Router>,
}

fn rejection(e: rmcp::ServiceError) -> Rejection {
    match e {
        rmcp::ServiceError::McpError(e) => Rejection {
            code: Some(e.code.0),
            message: e.message.into_owned(),
        },
        other => Rejection {
            code: None,
            message: other.to_string(),
        },
    }
}

fn listed<T: serde::Serialize>(item: &T) -> Value {
    serde_json::to_value(item).unwrap_or(Value::Null)
}

impl TestClient {
    /// Opens a connection to `served` in `era`, through the served bundle's own connection
    /// path ([`ServedMcp::serve`] on one half of an in-memory duplex).
    ///
    /// # Panics
    ///
    /// When the connection does not open (a test cannot go on without it).
    pub async fn connect(served: &ServedMcp, era: Era) -> TestClient {
        let (server_io, client_io) = tokio::io::duplex(1 << 20);
        let server = served.clone();
        tokio::spawn(async move {
            let (reader, writer) = tokio::io::split(server_io);
            if let Ok(connection) = server.serve(reader, writer).await {
                let _ = connection.waiting().await;
            }
        });
        let router = Router {
            routes: Arc::default(),
        };
        let opened = match era {
            Era::Legacy => router.clone().serve(client_io).await,
            Era::Modern => {
                router
                    .clone()
                    .serve_with_lifecycle(
                        client_io,
                        ClientLifecycleMode::Discover {
                            preferred_versions: vec![ProtocolVersion::V_2026_07_28],
                        },
                    )
                    .await
            }
        };
        let service = opened.unwrap_or_else(|e| panic!("the {era:?} test connection did not open: {e}"));
        TestClient {
            era,
            served: served.clone(),
            router,
            service,
        }
    }

    /// The era this connection speaks.
    pub fn era(&self) -> Era {
        self.era
    }

    /// The protocol version the server agreed to (`2026-07-28`, `2025-11-25`, …).
    pub fn protocol_version(&self) -> Option<String> {
        let info = self.service.peer_info()?;
        Some(info.protocol_version.to_string())
    }

    /// The `instructions` the server gave when the connection opened.
    pub fn instructions(&self) -> Option<String> {
        self.service.peer_info()?.instructions.clone()
    }

    /// Every tool, as `tools/list` answers now.
    pub async fn list_tools(&self) -> Vec<ToolInfo> {
        let tools = self.service.list_all_tools().await.unwrap_or_default();
        tools
            .iter()
            .map(|t| ToolInfo {
                name: t.name.to_string(),
                input_schema: Value::Object((*t.input_schema).clone()),
                read_only: t.annotations.as_ref().and_then(|a| a.read_only_hint) == Some(true),
                listed: listed(t),
            })
            .collect()
    }

    /// The names of every tool, in list order.
    pub async fn tool_names(&self) -> Vec<String> {
        self.list_tools().await.into_iter().map(|t| t.name).collect()
    }

    /// Checks every tool this connection lists against `profile` (see
    /// [`crate::schema::profile`]): answers one [`ProfileError`] per tool whose input the
    /// profile cannot express, each naming the tool and the fields. For a `cargo test` that
    /// keeps a portable server ready for a stricter host.
    pub async fn check_profile(&self, profile: SchemaProfile) -> Result<(), Vec<ProfileError>> {
        let refused: Vec<ProfileError> = self
            .list_tools()
            .await
            .into_iter()
            .filter_map(|tool| {
                let Value::Object(schema) = tool.input_schema else {
                    return None;
                };
                let input = InputSchema {
                    schema,
                    wrapped: false,
                    nulls_are_absent: false,
                };
                profile.check(&tool.name, &input).err()
            })
            .collect();
        if refused.is_empty() { Ok(()) } else { Err(refused) }
    }

    /// Every resource, as `resources/list` answers now.
    pub async fn list_resources(&self) -> Vec<ResourceInfo> {
        let resources = self.service.list_all_resources().await.unwrap_or_default();
        resources
            .iter()
            .map(|r| ResourceInfo {
                uri: r.uri.clone(),
                name: r.name.clone(),
                listed: listed(r),
            })
            .collect()
    }

    /// Every resource template, as `resources/templates/list` answers now.
    pub async fn list_templates(&self) -> Vec<TemplateInfo> {
        let templates = self
            .service
            .list_all_resource_templates()
            .await
            .unwrap_or_default();
        templates
            .iter()
            .map(|t| TemplateInfo {
                uri_template: t.uri_template.clone(),
                name: t.name.clone(),
                listed: listed(t),
            })
            .collect()
    }

    /// Calls tool `name` with `arguments` (a JSON object; anything else is sent as no
    /// arguments), as a host would.
    pub async fn call(&self, name: &str, arguments: Value) -> Answer {
        let mut params = CallToolRequestParams::new(name.to_owned());
        if let Value::Object(arguments) = arguments {
            params = params.with_arguments(arguments);
        }
        match self.service.call_tool(params).await {
            Ok(result) => answer(result),
            Err(e) => Answer::Rejected(rejection(e)),
        }
    }

    /// Every skill, as `skills/list` answers now (none when the server declares no skills).
    pub async fn list_skills(&self) -> Vec<SkillInfo> {
        let skills = self.service.list_all_skills().await.unwrap_or_default();
        skills
            .iter()
            .map(|s| SkillInfo {
                uri: s.uri.clone(),
                name: s.frontmatter.name.clone(),
                description: s.frontmatter.description.clone(),
                listed: listed(s),
            })
            .collect()
    }

    /// Reads the resource at `uri` and answers the JSON it holds.
    pub async fn read(&self, uri: &str) -> Result<Value, Rejection> {
        let text = self.read_text(uri).await?;
        serde_json::from_str(&text).map_err(|e| Rejection {
            code: None,
            message: format!("{uri} answered text that is not JSON: {e}"),
        })
    }

    /// Reads the resource at `uri` and answers its text (a skill's `SKILL.md`, say).
    pub async fn read_text(&self, uri: &str) -> Result<String, Rejection> {
        let result = self
            .service
            .read_resource(ReadResourceRequestParams::new(uri.to_owned()))
            .await
            .map_err(rejection)?;
        let text = result.contents.iter().find_map(|c| match c {
            ResourceContents::TextResourceContents { text, .. } => Some(text),
            _ => None,
        });
        text.cloned().ok_or_else(|| Rejection {
            code: None,
            message: format!("{uri} answered no text contents"),
        })
    }

    /// Subscribes to `uri` (`resources/subscribe`, or a `subscriptions/listen` stream in
    /// 2026-07-28) and answers its `updated` notices.
    pub async fn subscribe(&self, uri: &str) -> Result<Notices, Rejection> {
        let (tx, heard) = mpsc::unbounded_channel();
        match self.era {
            Era::Legacy => {
                lock(&self.router.routes)
                    .updated
                    .entry(uri.to_owned())
                    .or_default()
                    .push(tx);
                #[allow(deprecated)]
                let subscribed = self
                    .service
                    .subscribe(rmcp::model::SubscribeRequestParams::new(uri.to_owned()))
                    .await;
                subscribed.map_err(rejection)?;
            }
            Era::Modern => {
                let filter = SubscriptionFilter::builder()
                    .resource_subscription(uri.to_owned())
                    .build();
                self.listen(filter, tx).await?;
            }
        }
        Ok(Notices { heard })
    }

    /// Answers the stream of `tools/list_changed` and `resources/list_changed` notices (sent
    /// unasked in the legacy era; a listen stream asking for both in 2026-07-28).
    pub async fn watch_lists(&self) -> Result<Notices, Rejection> {
        let (tx, heard) = mpsc::unbounded_channel();
        match self.era {
            Era::Legacy => lock(&self.router.routes).lists.push(tx),
            Era::Modern => {
                let filter = SubscriptionFilter::builder()
                    .tools_list_changed()
                    .resources_list_changed()
                    .build();
                self.listen(filter, tx).await?;
            }
        }
        Ok(Notices { heard })
    }

    /// Replaces the served bundle's siblings ([`ServedMcp::reroster`]): every connection,
    /// this one included, hears that both lists changed.
    pub async fn reroster(&self, siblings: Siblings) -> Result<Vec<String>, CompositionError> {
        self.served.reroster(siblings).await
    }

    /// The served bundle this client is connected to.
    pub fn served(&self) -> &ServedMcp {
        &self.served
    }

    async fn listen(
        &self,
        filter: SubscriptionFilter,
        tx: mpsc::UnboundedSender<Notice>,
    ) -> Result<(), Rejection> {
        let mut subscription = self.service.listen(filter).await.map_err(rejection)?;
        tokio::spawn(async move {
            loop {
                let notice = match subscription.next().await {
                    Ok(Some(ServerNotification::ResourceUpdatedNotification(n))) => {
                        Notice::Updated(n.params.uri)
                    }
                    Ok(Some(ServerNotification::ToolListChangedNotification(_))) => Notice::ToolsChanged,
                    Ok(Some(ServerNotification::ResourceListChangedNotification(_))) => {
                        Notice::ResourcesChanged
                    }
                    Ok(Some(_)) => continue,
                    Ok(None) => return,
                    Err(e) => {
                        let _ = tx.send(Notice::Ended(e.to_string()));
                        return;
                    }
                };
                // The `Notices` was dropped: stop listening.
                if tx.send(notice).is_err() {
                    return;
                }
            }
        });
        Ok(())
    }
}

impl fmt::Debug for TestClient {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("TestClient").field("era", &self.era).finish()
    }
}

/// The agent's view of a call result.
fn answer(result: CallToolResult) -> Answer {
    let text = result
        .content
        .iter()
        .find_map(|c| c.as_text().map(|t| t.text.clone()));
    if result.is_error == Some(true) {
        return Answer::Refused(Refusal {
            message: text.unwrap_or_default(),
            detail: result.structured_content,
        });
    }
    let value = result
        .structured_content
        .or_else(|| text.map(|t| serde_json::from_str(&t).unwrap_or(Value::String(t))))
        .unwrap_or(Value::Null);
    Answer::Value(value)
}
