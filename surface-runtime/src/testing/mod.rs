//! A test client for your own tests: drive a served bundle in memory as an agent would.
//!
//! [`TestClient::connect`] opens a real MCP connection to a [`ServedMcp`](crate::mcp::ServedMcp) over an in-memory
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

mod answers;
mod client;
mod notices;

pub use answers::{Answer, Refusal, Rejection, ResourceInfo, SkillInfo, TemplateInfo, ToolInfo};
pub use client::{Era, TestClient};
pub use notices::{Notice, Notices};
