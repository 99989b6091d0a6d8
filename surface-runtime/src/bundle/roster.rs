//! The roster: the one builder every face takes. A core, keyed siblings, bundle-root tools and
//! prompts, and the MCP Apps views it declares; `McpServer` and `Cli` each hold one and their
//! setters of the same names delegate here, and `bundle!` builds one checked at compile time.

use super::{BundleClient, Member, RootPrompts, RootTools, Siblings};
use crate::prompt::BespokePrompt;
use crate::table::{ToolRow, roster_problems, tool_table};
use crate::tool::BespokeTool;
use crate::view::View;

/// What a face serves: built with the setters below, or by `bundle!` (checked at compile
/// time), and handed whole to a face (`McpServer::roster`, `Cli::roster`).
///
/// ```
/// use surface_runtime::bundle::{Member, Roster};
/// # fn f<S: surface_runtime::Surface>(core: surface_runtime::Expose<S>, tenant: surface_runtime::Expose<S>) {
/// let roster = Roster::new().core(Member::new(core)).sibling("a", Member::new(tenant));
/// assert_eq!(roster.siblings.keys().collect::<Vec<_>>(), ["a"]);
/// # }
/// ```
#[derive(Clone, Default)]
pub struct Roster {
    /// The core.
    pub core: Option<Member>,
    /// The siblings.
    pub siblings: Siblings,
    /// The bundle-root tools.
    pub root: RootTools,
    /// The bundle-root prompts.
    pub prompts: RootPrompts,
    /// The MCP Apps views it declares (`views: [..]`).
    pub views: Vec<View>,
}

impl Roster {
    /// An empty roster.
    pub fn new() -> Self {
        Roster::default()
    }

    /// The unprefixed core.
    pub fn core(mut self, core: Member) -> Self {
        self.core = Some(core);
        self
    }

    /// Adds a sibling under `key`: its tools are `key_<name>`, its members `key/<name>`.
    pub fn sibling(mut self, key: impl Into<String>, sibling: Member) -> Self {
        self.siblings.insert(key.into(), sibling);
        self
    }

    /// Sets every sibling at once.
    pub fn siblings(mut self, siblings: Siblings) -> Self {
        self.siblings = siblings;
        self
    }

    /// Adds a bundle-root tool (bare-named, handed the whole bundle).
    pub fn root_tool<T: BespokeTool<Client = BundleClient>>(mut self, tool: T) -> Self {
        self.root = self.root.with(tool);
        self
    }

    /// Adds a bundle-root prompt (`#[prompt]` over `&BundleClient`): bare-named, handed the
    /// whole bundle, its name in the one collision check with every member's prompts.
    pub fn root_prompt<P: BespokePrompt<Client = BundleClient>>(mut self, prompt: P) -> Self {
        self.prompts = self.prompts.with(prompt);
        self
    }

    /// Declares an MCP Apps view.
    pub fn view(mut self, view: View) -> Self {
        self.views.push(view);
        self
    }

    /// Adds `other` to this roster: its core (if any) replaces this one's, its siblings join
    /// (replacing any of the same key), its root tools, prompts and views follow these.
    pub fn extend(mut self, other: Roster) -> Self {
        self.core = other.core.or(self.core);
        self.siblings.extend(other.siblings);
        self.root.0.extend(other.root.0);
        self.prompts.0.extend(other.prompts.0);
        self.views.extend(other.views);
        self
    }

    /// The roster as composition reads it (the MCP face reads its fixed parts apart, as it
    /// rerosters the siblings).
    #[cfg_attr(not(feature = "cli"), allow(dead_code))]
    pub(crate) fn parts(&self) -> RosterParts<'_> {
        RosterParts {
            core: self.core.as_ref(),
            siblings: &self.siblings,
            root: &self.root,
        }
    }
}

// Composition is for the faces; a build with neither declares surfaces only.
/// What composition reads of a roster: its core and root tools, with the siblings of the
/// moment (the MCP face keeps the first two fixed and rerosters the siblings). Every face
/// composes through these, so its rules and their order are one.
#[derive(Clone, Copy)]
#[cfg_attr(not(any(feature = "mcp", feature = "cli")), allow(dead_code))]
pub(crate) struct RosterParts<'a> {
    pub core: Option<&'a Member>,
    pub siblings: &'a Siblings,
    pub root: &'a RootTools,
}

#[cfg_attr(not(any(feature = "mcp", feature = "cli")), allow(dead_code))]
impl<'a> RosterParts<'a> {
    /// Each member with its sibling key (`None`: the core), the core first.
    pub(crate) fn members(self) -> impl Iterator<Item = (Option<&'a str>, &'a Member)> {
        self.core
            .into_iter()
            .map(|c| (None, c))
            .chain(self.siblings.iter().map(|(k, m)| (Some(k.as_str()), m)))
    }

    /// What every face refuses in the roster itself (no member at all, a sibling key equal to
    /// a core collection, URIs claimed twice), one sentence each.
    pub(crate) fn problems(self) -> Vec<String> {
        roster_problems(self.core, self.siblings)
    }

    /// The one tool table of the roster, in `tools/list` order, its collisions added to
    /// `problems`.
    pub(crate) fn tool_table(self, problems: &mut Vec<String>) -> Vec<ToolRow> {
        tool_table(self.core, self.siblings, self.root, problems)
    }
}
