//! Bespoke prompts: message templates a host offers its user, declared with `#[prompt]` on an
//! `async fn([args: A,] client: &C) -> Result<PromptAnswer, E>` beside bespoke tools.
//!
//! A prompt's arguments are its input type's fields (each a string on the wire, as MCP prompt
//! arguments are; required unless `Option`); what it answers is a list of messages, each a user
//! or assistant turn holding one content block (text, a picture, an embedded resource — a member
//! read is natural). Prompts are exposed like tools: a sibling's are prefixed `t_<name>`, a
//! prompt over the whole bundle (`McpServer::root_prompt`) is bare-named like a root tool, and
//! every name joins the one collision check of the bundle.
//!
//! ```
//! use surface_runtime::prompt::PromptAnswer;
//! let answer = PromptAnswer::new()
//!     .user_text("Summarise the load below.")
//!     .user_embedded("surface://cells/load", "application/json", "{\"load\": 0.93}");
//! assert_eq!(answer.messages.len(), 2);
//! ```

use crate::blocks::{Block, EmbeddedBody};
use crate::failure::Failure;
use crate::schema::InputSchema;
use futures::future::BoxFuture;
use serde_json::Value;

/// What `#[prompt]` knows about a prompt at compile time.
#[derive(Clone, Copy, Debug)]
pub struct PromptDescriptor {
    /// Its name as declared (the function name); siblings prefix it.
    pub name: &'static str,
    /// Its display title.
    pub title: Option<&'static str>,
    /// Its description (the doc comment).
    pub description: &'static str,
    /// The schema of its input type; its properties are the prompt's arguments.
    pub input: fn() -> InputSchema,
}

pub use crate::role::Role;

/// One message of a prompt.
#[derive(Clone, Debug, PartialEq)]
pub struct PromptMessage {
    /// Who speaks it.
    pub role: Role,
    /// What it holds.
    pub block: Block,
}

/// What a prompt answers: its messages, and optionally a description of this rendering.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct PromptAnswer {
    /// A description of this rendering.
    pub description: Option<String>,
    /// The messages, in order.
    pub messages: Vec<PromptMessage>,
}

impl PromptAnswer {
    /// No messages yet.
    pub fn new() -> Self {
        PromptAnswer::default()
    }

    /// Adds a message.
    pub fn message(mut self, role: Role, block: Block) -> Self {
        self.messages.push(PromptMessage { role, block });
        self
    }

    /// Adds a user message of text.
    pub fn user_text(self, text: impl Into<String>) -> Self {
        self.message(Role::User, Block::Text(text.into()))
    }

    /// Adds an assistant message of text.
    pub fn assistant_text(self, text: impl Into<String>) -> Self {
        self.message(Role::Assistant, Block::Text(text.into()))
    }

    /// Adds a user message holding a picture.
    pub fn user_image(self, bytes: Vec<u8>, mime: impl Into<String>) -> Self {
        self.message(
            Role::User,
            Block::Image {
                bytes,
                mime: mime.into(),
            },
        )
    }

    /// Adds a user message embedding the text resource at `uri` (e.g. a member read).
    pub fn user_embedded(
        self,
        uri: impl Into<String>,
        mime: impl Into<String>,
        text: impl Into<String>,
    ) -> Self {
        self.message(
            Role::User,
            Block::Embedded {
                uri: uri.into(),
                mime: mime.into(),
                body: EmbeddedBody::Text(text.into()),
            },
        )
    }

    /// Sets the description of this rendering.
    pub fn describe(mut self, description: impl Into<String>) -> Self {
        self.description = Some(description.into());
        self
    }
}

/// A bespoke prompt over clients of type `Self::Client`. Implemented by `#[prompt]`.
pub trait BespokePrompt: Send + Sync + 'static {
    /// What the prompt is handed: a surface's typed client.
    type Client: Send + Sync + 'static;
    /// Its compile-time description.
    fn descriptor(&self) -> &'static PromptDescriptor;
    /// Renders it for `args` (the host's argument map, not yet decoded).
    fn get<'a>(
        &'a self,
        args: Value,
        client: &'a Self::Client,
    ) -> BoxFuture<'a, Result<PromptAnswer, Failure>>;
}

/// One prompt argument, as `prompts/list` names it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PromptArgument {
    /// The field name.
    pub name: String,
    /// Its doc comment, when it has one.
    pub description: Option<String>,
    /// Whether the host must give it.
    pub required: bool,
}

/// The arguments of a prompt: its input schema's properties, in order.
pub fn arguments(input: &InputSchema) -> Vec<PromptArgument> {
    let schema = &input.schema;
    let required = crate::schema::required_names(schema);
    let Some(properties) = schema.get("properties").and_then(Value::as_object) else {
        return Vec::new();
    };
    properties
        .iter()
        .map(|(name, p)| PromptArgument {
            name: name.clone(),
            description: p.get("description").and_then(Value::as_str).map(str::to_owned),
            required: required.contains(&name.as_str()),
        })
        .collect()
}

/// The arguments of a prompt that are not strings on the wire (MCP prompt arguments are a map
/// of strings): composition refuses such a prompt, since no host could give the argument.
pub fn non_string_arguments(input: &InputSchema) -> Vec<String> {
    fn string_like(p: &Value) -> bool {
        let branches = p
            .get("anyOf")
            .or_else(|| p.get("oneOf"))
            .and_then(Value::as_array);
        if let Some(branches) = branches {
            return branches
                .iter()
                .all(|b| string_like(b) || b.get("type").and_then(Value::as_str) == Some("null"));
        }
        if let Some(values) = p.get("enum").and_then(Value::as_array) {
            return values.iter().all(|v| v.is_string() || v.is_null());
        }
        if let Some(c) = p.get("const") {
            return c.is_string();
        }
        match p.get("type") {
            Some(Value::String(t)) => t == "string",
            Some(Value::Array(types)) => types
                .iter()
                .filter_map(Value::as_str)
                .filter(|t| *t != "null")
                .all(|t| t == "string"),
            _ => false,
        }
    }
    let Some(properties) = input.schema.get("properties").and_then(Value::as_object) else {
        return Vec::new();
    };
    properties
        .iter()
        .filter(|(_, p)| !string_like(p))
        .map(|(name, _)| name.clone())
        .collect()
}

/// What `#[prompt]` returns through: `Result<PromptAnswer, E>`.
pub trait PromptResult {
    /// The erased answer.
    fn into_answer(self) -> Result<PromptAnswer, Failure>;
}

impl<E: crate::failure::IntoFailure> PromptResult for Result<PromptAnswer, E> {
    fn into_answer(self) -> Result<PromptAnswer, Failure> {
        self.map_err(crate::failure::IntoFailure::into_failure)
    }
}
