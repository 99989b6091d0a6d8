//! # surface
//!
//! Declare your application's surface once, and serve it to AI agents over the Model Context
//! Protocol with compile-time guarantees.
//!
//! A guided tour, in the order you meet things: **declare** a surface, **expose** part of it,
//! **serve** it, **test** it as an agent would, compose a **bundle**, and reach it through the
//! other **faces**.
//!
//! ## Declare and expose
//!
//! `#[surface]` on a struct declares its live members (cells, collections, streams, events);
//! on an `impl`, its procedures. `expose!` is the default-deny map of what reaches an agent,
//! checked against the surface at compile time.
//!
//! ```
//! use serde::{Deserialize, Serialize};
//! use schemars::JsonSchema;
//! use std::convert::Infallible;
//! use surface::{expose, surface, Expose};
//!
//! #[derive(Clone, Serialize, Deserialize, JsonSchema)]
//! pub struct Load { pub cpu: f64 }
//!
//! /// A tiny surface.
//! #[surface]
//! pub struct Tiny {
//!     /// The load.
//!     #[cell]
//!     pub load: Load,
//! }
//!
//! #[surface]
//! impl Tiny {
//!     /// Reads the load.
//!     #[procedure("load.sample")]
//!     async fn sample(&self) -> Result<Load, Infallible> {
//!         Ok(self.load.get())
//!     }
//! }
//!
//! const EXPOSE: Expose<Tiny> = expose!(Tiny { load: resource, "load.sample": tool(read_only) });
//! assert_eq!(Tiny::SPEC.members[0].name, "load");
//! assert_eq!(EXPOSE.entries().len(), 2);
//! ```

//!
//! ## Serve
//!
//! [`mcp::McpServer`] composes the core, siblings and bundle-root tools into one generation
//! and serves it on stdio, any reader/writer pair, or Streamable HTTP. One surface in this
//! process is one expression:
//!
//! ```no_run
//! # use std::convert::Infallible;
//! # use surface::{expose, surface, Expose};
//! # #[surface] pub struct Tiny { #[cell] pub load: u32 }
//! # #[surface] impl Tiny { #[procedure("load.sample")] async fn sample(&self) -> Result<u32, Infallible> { Ok(self.load.get()) } }
//! # const EXPOSE: Expose<Tiny> = expose!(Tiny { load: resource, "load.sample": tool(read_only) });
//! use surface::mcp::McpServer;
//!
//! # #[tokio::main] async fn main() -> Result<(), Box<dyn std::error::Error>> {
//! let tiny = Tiny { load: surface::Cell::new(0) };
//! McpServer::new("tiny", "1.0.0").surface(tiny, EXPOSE).serve_stdio().await?;
//! # Ok(()) }
//! ```
//!
//! The long form names the core and the client factory itself — for bespoke tools
//! (`Member::new(EXPOSE).tool(T)`), siblings, bridges to a surface served elsewhere
//! ([`mcp::McpServer::dial`]) — and `start()` hands back the served bundle to serve on several
//! transports, reroster or close:
//!
//! ```no_run
//! # use std::convert::Infallible;
//! # use surface::{expose, surface, Expose};
//! # #[surface] pub struct Tiny { #[cell] pub load: u32 }
//! # #[surface] impl Tiny { #[procedure("load.sample")] async fn sample(&self) -> Result<u32, Infallible> { Ok(self.load.get()) } }
//! # const EXPOSE: Expose<Tiny> = expose!(Tiny { load: resource, "load.sample": tool(read_only) });
//! use std::sync::Arc;
//! use surface::mcp::{BundleClient, McpServer, Member};
//!
//! # #[tokio::main] async fn main() -> Result<(), Box<dyn std::error::Error>> {
//! let tiny = Arc::new(Tiny { load: surface::Cell::new(0) });
//! let served = McpServer::new("tiny", "1.0.0")
//!     .core(Member::new(EXPOSE))
//!     .client(move || BundleClient::with_core(TinyClient::direct(tiny.clone())))
//!     .start()?; // every composition problem, named
//! served.serve_stdio().await?;
//! # Ok(()) }
//! ```
//!
//! ## Test
//!
//! With the `testing` feature (in your dev-dependencies), [`testing::TestClient`] drives a
//! served bundle in memory through the same connection path a host uses, one line per step, in
//! either protocol era:
//!
//! ```
//! use serde_json::json;
//! use std::convert::Infallible;
//! use surface::mcp::McpServer;
//! use surface::testing::{Era, Notice, TestClient};
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
//!     /// Adds one and answers the new count.
//!     #[procedure("count.up")]
//!     async fn up(&self) -> Result<u32, Infallible> {
//!         Ok(self.count.update(|c| {
//!             *c += 1;
//!             *c
//!         }))
//!     }
//! }
//!
//! const EXPOSE: Expose<Counter> = expose!(Counter { count: resource, "count.up": tool(mutates) });
//!
//! # #[tokio::main(flavor = "current_thread")] async fn main() {
//! let counter = Counter { count: surface::Cell::new(0) };
//! let served = McpServer::new("counter", "1.0.0")
//!     .surface(counter, EXPOSE)
//!     .start()
//!     .unwrap();
//! for era in Era::ALL {
//!     let agent = TestClient::connect(&served, era).await;
//!     assert_eq!(agent.tool_names().await, ["count_up"]);
//!     let mut updates = agent.subscribe("surface://cells/count").await.unwrap();
//!     let counted = agent.call("count_up", json!({})).await.value();
//!     assert_eq!(updates.next().await, Some(Notice::Updated("surface://cells/count".into())));
//!     assert_eq!(agent.read("surface://cells/count").await.unwrap(), counted["value"]);
//!     let unknown = agent.call("count_down", json!({})).await.rejection();
//!     assert_eq!(unknown.message, "surface-mcp: unknown tool \"count_down\"");
//! }
//! # }
//! ```
//!
//! ## Hosts: mirrors, schema profiles and the contract
//!
//! `resource(mirror)` also serves a member as read-only tools for hosts that only call tools;
//! [`schema::profile::SchemaProfile`] rewrites the advertised input schemas for one host's
//! rules; [`mcp::contract`] writes the whole face to a manifest and fails a check on breaking
//! changes:
//!
//! ```
//! use std::convert::Infallible;
//! use surface::mcp::contract::Manifest;
//! use surface::mcp::{McpServer, Member};
//! use surface::schema::profile::SchemaProfile;
//! use surface::{expose, surface, Expose};
//!
//! #[surface]
//! pub struct Shelf {
//!     /// Items left.
//!     #[cell]
//!     pub stock: u32,
//! }
//!
//! /// How many to take.
//! #[derive(serde::Serialize, serde::Deserialize, schemars::JsonSchema)]
//! pub struct Take {
//!     /// One when left out.
//!     pub n: Option<u32>,
//! }
//!
//! #[surface]
//! impl Shelf {
//!     /// Takes items.
//!     #[procedure("stock.take")]
//!     async fn take(&self, take: Take) -> Result<u32, Infallible> {
//!         Ok(self.stock.update(|s| {
//!             *s -= take.n.unwrap_or(1);
//!             *s
//!         }))
//!     }
//! }
//!
//! const EXPOSE: Expose<Shelf> = expose!(Shelf { stock: resource(mirror), "stock.take": tool(mutates) });
//!
//! let served = McpServer::new("shelf", "1.0.0")
//!     .core(Member::new(EXPOSE))
//!     .schema_profile(SchemaProfile::OpenAiStrict)
//!     .start()
//!     .unwrap();
//! let face = Manifest::of(&served);
//! assert_eq!(face.tools.keys().collect::<Vec<_>>(), ["stock_get", "stock_take"]);
//! assert_eq!(face.tools["stock_get"]["annotations"]["readOnlyHint"], true);
//! // Strict: the optional count is required and nullable.
//! let take = &face.tools["stock_take"]["inputSchema"];
//! assert_eq!(take["properties"]["n"]["type"], serde_json::json!(["integer", "null"]));
//! assert_eq!(take["additionalProperties"], false);
//! assert!(Manifest::compare(&face, &Manifest::of(&served)).is_empty());
//! ```
//!
//! ## Bundle
//!
//! Where the roster is known at compile time, `bundle!` builds it and its collisions are
//! compile errors (the same sentences the boot-time composition gives):
//!
//! ```
//! use std::convert::Infallible;
//! use surface::mcp::{BundleClient, McpServer};
//! use surface::{expose, surface, tool, Expose, Failure};
//!
//! #[surface]
//! pub struct Tenant {
//!     #[cell]
//!     pub entries: u32,
//! }
//!
//! #[surface]
//! impl Tenant {
//!     #[procedure("ops.run")]
//!     async fn run(&self) -> Result<u32, Infallible> {
//!         Ok(1)
//!     }
//! }
//!
//! /// Where am I?
//! #[tool(read_only)]
//! async fn here(client: &TenantClient) -> Result<u32, Failure> {
//!     client.ops().run().await
//! }
//!
//! const TENANT: Expose<Tenant> = expose!(Tenant { entries: resource, "ops.run": tool });
//!
//! let roster = surface::bundle! {
//!     siblings: { "a" => TENANT, tools: [HereTool], "b" => TENANT, tools: [HereTool] };
//!     root: [];
//! };
//! // A root tool named `a_here` would not compile: sibling `a` already produces that name.
//! assert!(McpServer::new("tenants", "1.0.0").roster(roster).client(BundleClient::new).start().is_ok());
//! ```
//!
//! ## Faces
//!
//! The same `Expose` map drives every face: [`mcp`] (stdio, any reader/writer, Streamable
//! HTTP with the `http` feature) and [`wire`] (newline-delimited JSON on a unix socket or a
//! child's stdio, dialled back into the surface's typed client; `McpServer::dial` bridges it
//! to MCP). Without default features, `surface` declares surfaces and compiles no MCP server.
//!
//! An MCP server can also hand hosts that render MCP Apps an interactive page: a [`View`]
//! declared once in a `const`, bound to a tool with `#[tool(view = PANEL)]` and declared on
//! the server with `McpServer::view` (see [`view`]).
//!
//! ```
//! use surface::View;
//! const PANEL: View = surface::view!("ui://ops/panel", "<!doctype html><p>panel</p>").prefers_border(true);
//! let server = surface::mcp::McpServer::new("ops", "1.0.0").view(PANEL);
//! # let _ = server;
//! ```
//!
//! ## Projections
//!
//! A projected surface is declared like any other, with `derived` members: each is a
//! [`ReadOnly`] map of one member of a live surface, built by a [`project::Source`] over that
//! surface's typed client (in this process, or dialled over the wire) and kept current from
//! its change feed. It has no setter, so writing one does not compile; what the projection
//! does not declare, it does not have. Dropping it ends its watches on the source.
//!
//! ```
//! # use std::convert::Infallible;
//! # use std::sync::Arc;
//! use surface::project::{Relayed, Source};
//! use surface::surface;
//!
//! /// A counter anyone may bump.
//! #[surface]
//! pub struct Counter {
//!     /// The count.
//!     #[cell]
//!     pub count: u32,
//! }
//! #[surface]
//! impl Counter {
//!     /// Adds one.
//!     #[procedure("count.bump")]
//!     async fn bump(&self) -> Result<u32, Infallible> { Ok(self.count.update(|n| { *n += 1; *n })) }
//!     /// Reads it.
//!     #[procedure("count.read")]
//!     async fn read(&self) -> Result<u32, Infallible> { Ok(self.count.get()) }
//! }
//!
//! /// What an observer sees of the counter: whether it is even, and a read passed through.
//! #[surface]
//! pub struct Parity {
//!     /// Whether the count is even, kept current.
//!     #[cell(derived)]
//!     pub even: bool,
//!     source: Source<CounterClient>,
//! }
//! #[surface]
//! impl Parity {
//!     /// The count, read on the counter.
//!     #[procedure("count.read")]
//!     async fn read(&self) -> Result<u32, Relayed> { Ok(self.source.client().procedures().count().read().await?) }
//! }
//!
//! # #[tokio::main(flavor = "current_thread")] async fn main() -> Result<(), surface::Failure> {
//! let counter = Arc::new(Counter { count: surface::Cell::new(0) });
//! let source = Source::new(CounterClient::direct(counter.clone()));
//! let parity = Parity { even: source.cell(CounterClient::count, |n: u32| n % 2 == 0).await?, source };
//! let mut even = parity.even.subscribe();
//! CounterClient::direct(counter.clone()).procedures().count().bump().await?;
//! assert_eq!(even.recv().await.unwrap(), false);
//! assert_eq!(parity.even.value(), false);
//! assert_eq!(Parity::SPEC.procedures.len(), 1);        // no count.bump: not declared
//! drop(parity);                                        // its watch on the counter ends
//! # for _ in 0..100 { if counter.count.watchers() == 0 { break } tokio::task::yield_now().await }
//! assert_eq!(counter.count.watchers(), 0);
//! # Ok(()) }
//! ```

pub use surface_macros::{Elicit, bundle, expose, prompt, surface, tool};
pub use surface_runtime::*;
