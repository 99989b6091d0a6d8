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

pub use surface_macros::{expose, surface, tool};
pub use surface_runtime::*;
