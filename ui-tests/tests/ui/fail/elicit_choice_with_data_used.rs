//! A choice variant carrying data, used in a form: one error, at `Chat(String)`, not its doc comment.
use schemars::JsonSchema;
use serde::Deserialize;
use surface::Elicit;

#[derive(Deserialize, JsonSchema, Elicit)]
pub enum Channel {
    /// By mail.
    Mail,
    /// In a chat room.
    Chat(String),
}

#[derive(Deserialize, JsonSchema, Elicit)]
pub struct Contact {
    pub channel: Channel,
}

fn main() {}
