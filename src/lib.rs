//! # surface
//!
//! Declare your application's surface once, and serve it to AI agents over the Model Context
//! Protocol with compile-time guarantees.
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
//! ## Static bundles
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

pub use surface_macros::{expose, surface, tool};
pub use surface_runtime::*;
