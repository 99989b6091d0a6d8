//! A roster: the core, siblings, bundle-root tools and views one face serves.

use super::{BundleClient, Member, RootTools, Siblings};
use crate::tool::BespokeTool;

/// A static roster, checked at compile time by `bundle!`; hand it to a face
/// (`McpServer::roster`, `Cli::roster`).
pub struct Roster {
    /// The core.
    pub core: Option<Member>,
    /// The siblings.
    pub siblings: Siblings,
    /// The bundle-root tools.
    pub root: RootTools,
    /// The MCP Apps views it declares (`views: [..]`).
    pub views: Vec<crate::view::View>,
}

impl Roster {
    #[doc(hidden)]
    pub fn __new() -> Self {
        Roster {
            core: None,
            siblings: Siblings::new(),
            root: RootTools::new(),
            views: Vec::new(),
        }
    }
    #[doc(hidden)]
    pub fn __root<T: BespokeTool<Client = BundleClient>>(mut self, tool: T) -> Self {
        self.root = self.root.with(tool);
        self
    }
}
