//! # surface
//!
//! Declare your application's surface — the state and verbs it offers — once, and serve it to
//! AI agents over the Model Context Protocol with compile-time guarantees. Published as
//! `mcp-surface`; the library is `surface`.
//!
//! ```
//! use std::convert::Infallible;
//! use surface::mcp::McpServer;
//! use surface::{expose, surface, Cell, Expose};
//!
//! /// A counter an agent can read, watch and bump.
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
//!         Ok(self.count.update(|c| { *c += 1; *c }))
//!     }
//! }
//!
//! /// Default-deny: only what is named here reaches an agent, checked at compile time.
//! const EXPOSE: Expose<Counter> = expose!(Counter { count: resource, "count.up": tool(mutates) });
//!
//! # #[tokio::main(flavor = "current_thread")] async fn main() {
//! let server = McpServer::new("counter", "0.1.0").surface(Counter { count: Cell::new(0) }, EXPOSE);
//! // `server.serve_stdio().await` serves a host; here an agent in memory calls it instead.
//! let agent = surface::testing::TestClient::connect(&server.start().unwrap(), surface::testing::Era::Modern).await;
//! assert_eq!(agent.call("count_up", serde_json::json!({})).await.value()["value"], 1);
//! # }
//! ```
//!
//! ## The guide
//!
//! One chapter per module of [`guide`], each with examples that run:
//!
//! - [`guide::declare`] — `#[surface]`, `expose!`, `#[tool]`, `#[prompt]`, and every mistake
//!   the macros catch at compile time;
//! - [`guide::serve`] — [`mcp::McpServer`]: one surface, a rooted bundle, a bridge; stdio,
//!   reader/writer pairs, Streamable HTTP; the names on the wire;
//! - [`guide::testing`] — `surface::testing::TestClient`, an in-memory agent for your tests;
//! - [`guide::skills`] — `skill!`: workflows over your tools, served as MCP skills;
//! - [`guide::hosts`] — mirrors for tool-only hosts, schema profiles, the contract gate;
//! - [`guide::cli`] — the argv face from the same tool table;
//! - [`guide::apps`] — MCP Apps views;
//! - [`guide::projection`] — surfaces derived from another live surface;
//! - [`guide::scale_out`] — several instances, members in Redis;
//! - [`guide::observe`] — metrics and traces of every request;
//! - [`guide::security`] — who can reach what, and every bound with its default;
//! - [`guide::limits`] — what it does not do yet.
//!
//! ## Features
//!
//! | feature | default | what it adds |
//! |---|---|---|
//! | `mcp` | yes | the MCP face over rmcp ([`mcp`]); without it, surfaces and expose maps only |
//! | `http` | yes | Streamable HTTP (`ServedMcp::serve_http`) |
//! | `wire` | yes | the wire face: a unix socket or a child's stdio, and dialling one ([`wire`]) |
//! | `cli` | no | the argv face (`surface::cli`), with no rmcp in its tree |
//! | `testing` | no | `surface::testing`: an in-memory agent for your tests |
//! | `redis` | no | `surface::store`: members in Redis, several instances |
//! | `otlp` | no | `surface::otlp`: request spans exported as OpenTelemetry traces over OTLP/HTTP |

pub mod guide;

pub use surface_macros::{Elicit, bundle, expose, prompt, scopes, skill, surface, tool};
pub use surface_runtime::*;
