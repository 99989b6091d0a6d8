//! What a rooted bundle is made of: a core, keyed siblings, bundle-root tools, and the
//! clients a face dispatches over.

mod client;
mod erase;
#[cfg(any(feature = "mcp", feature = "wire"))]
pub(crate) mod link;
mod member;
mod root;
mod roster;

pub use roster::Roster;
#[cfg(feature = "mcp")]
pub(crate) use roster::RosterParts;

pub use client::{BundleClient, DialFactory, OwnedBundle};
#[cfg(feature = "mcp")]
pub(crate) use erase::{RootPrompt, SurfacePrompt};
pub(crate) use erase::{RootTool, SurfaceTool};
pub use member::{Member, Siblings};
pub use root::{RootPrompts, RootTools};
