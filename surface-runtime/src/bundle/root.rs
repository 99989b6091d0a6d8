//! What a bundle serves at its root, over the whole bundle: tools and prompts, bare-named.

use super::client::BundleClient;
use super::erase::{PromptAtRoot, RootPrompt, RootTool, ToolAtRoot};
use crate::prompt::BespokePrompt;
use crate::tool::BespokeTool;
use std::sync::Arc;

/// A table of bundle-root tools.
#[derive(Clone, Default)]
pub struct RootTools(pub(crate) Vec<Arc<dyn RootTool>>);

impl RootTools {
    /// No root tools.
    pub fn new() -> Self {
        RootTools::default()
    }

    /// Adds a root tool (handed the whole [`BundleClient`]).
    pub fn with<T: BespokeTool<Client = BundleClient>>(mut self, tool: T) -> Self {
        self.0.push(Arc::new(ToolAtRoot(Arc::new(tool))));
        self
    }
}

/// A table of bundle-root prompts (`#[prompt]` over `&BundleClient`).
#[derive(Clone, Default)]
pub struct RootPrompts(pub(crate) Vec<Arc<dyn RootPrompt>>);

impl RootPrompts {
    /// No root prompts.
    pub fn new() -> Self {
        RootPrompts::default()
    }

    /// Adds a root prompt (handed the whole [`BundleClient`]).
    pub fn with<P: BespokePrompt<Client = BundleClient>>(mut self, prompt: P) -> Self {
        self.0.push(Arc::new(PromptAtRoot(Arc::new(prompt))));
        self
    }
}
