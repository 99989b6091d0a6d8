//! Bespoke tools: hand-authored, call-shaped tools declared with `#[tool]`.
//!
//! A bespoke tool is handed its typed arguments, the client of the thing it is declared on
//! (a surface's generated client, or a whole bundle) and a cancellation signal. What it answers
//! becomes a [`ToolOutput`]: a value (data plus the same data as text), or a picture
//! ([`ok_image`]) when the tool declares `render = image`.
//!
//! [`ToolOutput`]: crate::blocks::ToolOutput
//! [`ok_image`]: crate::blocks::ok_image

use crate::blocks::ToolOutput;
use crate::failure::Failure;
use crate::schema::InputSchema;
use futures::future::BoxFuture;
use serde_json::Value;

pub use tokio_util::sync::CancellationToken;

/// What `#[tool]` knows about a tool at compile time.
#[derive(Clone, Copy, Debug)]
pub struct ToolDescriptor {
    /// The tool's name as declared (the function name); siblings prefix it.
    pub name: &'static str,
    /// Its display title.
    pub title: Option<&'static str>,
    /// Its description (the doc comment).
    pub description: &'static str,
    /// Whether calling it changes state.
    pub mutates: bool,
    /// Produces its advertised input schema.
    pub input: fn() -> InputSchema,
    /// The URI of the MCP Apps view it is bound to (`#[tool(view = PANEL)]`), if any: hosts
    /// that render views show that page with its answer (see [`crate::view`](mod@crate::view)).
    pub view: Option<&'static str>,
    /// Whether a call may run as an MCP task (`#[tool(task)]`, `#[tool(task = required)]`).
    pub task: TaskSupport,
    /// The declared scope a caller needs to see and call it (`#[tool(scope = read)]`); `None`:
    /// every caller that reaches the face.
    pub scope: Option<&'static crate::Scope>,
}

/// Whether a tool's calls may run as MCP tasks (the `io.modelcontextprotocol/tasks`
/// extension): the call answers a task id at once, and the client polls for its result.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum TaskSupport {
    /// Always answered inline (a tool without `task`).
    #[default]
    Never,
    /// A task for a 2026-07-28 request whose client declares the extension; inline for any
    /// other (`#[tool(task)]`).
    Optional,
    /// A task, and refused (`-32021`, naming the extension) for a 2026-07-28 client that does
    /// not declare it (`#[tool(task = required)]`). Legacy sessions have no tasks: it runs
    /// inline there.
    Required,
}

/// A bespoke tool over clients of type `Self::Client`. Implemented by `#[tool]`.
pub trait BespokeTool: Send + Sync + 'static {
    /// What the tool is handed: a surface's typed client, or a bundle.
    type Client: Send + Sync + 'static;
    /// Its compile-time description.
    fn descriptor(&self) -> &'static ToolDescriptor;
    /// Runs it on `args` (already unwrapped, not yet decoded).
    fn invoke<'a>(
        &'a self,
        args: Value,
        client: &'a Self::Client,
        cancel: CancellationToken,
    ) -> BoxFuture<'a, Result<ToolOutput, Failure>>;
}

/// A tool whose name is known at compile time (what const checks of static bundles read);
/// `#[tool]` implements it.
pub trait StaticTool {
    /// The tool's declared name.
    const NAME: &'static str;
    /// The URI of the view it is bound to, if any (what `bundle!` checks is declared).
    const VIEW: Option<&'static str> = None;
}

/// A table of bespoke tools handed the same client type.
pub type ToolTable<C> = Vec<std::sync::Arc<dyn BespokeTool<Client = C>>>;
