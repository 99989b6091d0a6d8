//! Who speaks a message — one [`Role`] for prompts and sampling requests alike, re-exported
//! where each is written (`blocks`, `ask`, `prompt`). Its own module so that the asks and the
//! content blocks both take it without taking each other.

/// Who speaks a message: in a prompt ([`crate::prompt::PromptMessage`]) or a sampling request
/// ([`crate::ask::Sample`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Role {
    /// The user.
    User,
    /// The model (the assistant).
    Assistant,
}
