//! What a running call may ask of the one host that made it: a typed value from its user
//! (elicitation), a message from its model (sampling), or its roots. The calls are on
//! [`ToolContext`](crate::context::ToolContext) (`ctx.elicit::<T>(..)`, `ctx.sample(..)`,
//! `ctx.roots()`); this module holds what they take and answer, with no face in it.
//!
//! A face answers an ask in its own way: on the MCP face a legacy session sends the host a
//! request (`elicitation/create`, `sampling/createMessage`, `roots/list`) and waits for the
//! answer; a 2026-07-28 request instead ends in an `input_required` result naming everything the
//! call asked, and the host calls again with the answers (see `mcp/asking.rs`). In that era the
//! call runs again from its start on each round, so code before an ask runs once per round: put
//! effects after the asks.
//!
//! An elicitation form is a flat object: each field a string, number, integer or boolean (with
//! an optional default), an enum of unit variants (titled by their doc comments or
//! `#[schemars(title = "…")]`), or a list of such enum values; nothing nested. A `T` that does
//! not fit is refused before anything is sent, naming the field ([`form_schema`]).
//!
//! ```
//! use schemars::JsonSchema;
//! use serde::Deserialize;
//!
//! /// Who to greet.
//! #[derive(Deserialize, JsonSchema)]
//! struct Greeting {
//!     /// Your name.
//!     name: String,
//!     /// How often.
//!     #[serde(default = "once")]
//!     times: u32,
//! }
//! fn once() -> u32 { 1 }
//!
//! let schema = surface_runtime::ask::form_schema::<Greeting>().unwrap();
//! assert_eq!(schema["properties"]["times"]["default"], 1);
//! assert_eq!(schema["required"], serde_json::json!(["name"]));
//! ```

use schemars::JsonSchema;
use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value, json};
use std::marker::PhantomData;

/// Why an ask got no answer.
#[derive(Clone, Debug, PartialEq)]
pub enum AskError {
    /// The host did not declare the capability the ask needs (`"elicitation"`, `"sampling"`,
    /// `"roots"`), or no face is listening.
    Unsupported {
        /// The capability, as MCP names it.
        capability: &'static str,
    },
    /// The form type cannot be an elicitation form (a nested field, say); names the field.
    BadForm(String),
    /// The host answered something that is not an answer to the ask (or does not decode
    /// into the form type).
    Invalid(String),
    /// The request to the host failed (it went away, timed out, refused).
    Failed(String),
}

impl std::fmt::Display for AskError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            AskError::Unsupported { capability } => {
                write!(f, "the client did not declare the `{capability}` capability")
            }
            AskError::BadForm(why) => write!(f, "not an elicitation form: {why}"),
            AskError::Invalid(why) => write!(f, "the client's answer is invalid: {why}"),
            AskError::Failed(why) => write!(f, "asking the client failed: {why}"),
        }
    }
}

impl std::error::Error for AskError {}

impl From<AskError> for crate::Failure {
    fn from(e: AskError) -> Self {
        crate::Failure::new(crate::FailureKind::Error, e.to_string())
    }
}

/// The user's answer to an elicitation.
#[derive(Clone, Debug, PartialEq)]
pub enum Elicitation<T> {
    /// They filled the form in.
    Accept(T),
    /// They said no.
    Decline,
    /// They dismissed it without choosing.
    Cancel,
}

impl<T> Elicitation<T> {
    /// The value, when accepted.
    pub fn accepted(self) -> Option<T> {
        match self {
            Elicitation::Accept(t) => Some(t),
            _ => None,
        }
    }

    /// `accept`, `decline` or `cancel`, as MCP spells the action.
    pub fn action(&self) -> &'static str {
        match self {
            Elicitation::Accept(_) => "accept",
            Elicitation::Decline => "decline",
            Elicitation::Cancel => "cancel",
        }
    }
}

pub use crate::blocks::Role;

/// A request for one message from the host's model. Build with [`Sample::user`].
///
/// ```
/// use surface_runtime::ask::Sample;
/// let s = Sample::user("What is the capital of France?").max_tokens(100);
/// assert_eq!(s.max_tokens, 100);
/// ```
#[derive(Clone, Debug, PartialEq)]
pub struct Sample {
    /// The conversation so far: text messages, in order.
    pub messages: Vec<(Role, String)>,
    /// A system prompt the host may use.
    pub system_prompt: Option<String>,
    /// The most tokens to sample.
    pub max_tokens: u32,
}

impl Sample {
    /// A one-message conversation from the user; at most 1000 tokens until
    /// [`Sample::max_tokens`] says otherwise.
    pub fn user(text: impl Into<String>) -> Self {
        Sample {
            messages: vec![(Role::User, text.into())],
            system_prompt: None,
            max_tokens: 1000,
        }
    }

    /// Adds a message.
    pub fn then(mut self, role: Role, text: impl Into<String>) -> Self {
        self.messages.push((role, text.into()));
        self
    }

    /// Sets the system prompt.
    pub fn system(mut self, prompt: impl Into<String>) -> Self {
        self.system_prompt = Some(prompt.into());
        self
    }

    /// Sets the most tokens to sample.
    pub fn max_tokens(mut self, n: u32) -> Self {
        self.max_tokens = n;
        self
    }
}

/// What the host's model answered.
#[derive(Clone, Debug, PartialEq)]
pub struct Sampled {
    /// Who spoke (the model: `Assistant`).
    pub role: Role,
    /// The text, when the answer is text.
    pub text: Option<String>,
    /// The model that answered.
    pub model: String,
    /// Why sampling stopped (`endTurn`, `maxTokens`, …), when said.
    pub stop_reason: Option<String>,
}

/// One of the host's roots: a directory or other place it lets the server work in.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Root {
    /// Its URI (`file:///home/me/project`).
    pub uri: String,
    /// Its display name.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
}

/// The capability a URL elicitation needs: `elicitation` with its `url` mode declared
/// (`"elicitation": {"url": {}}`), as [`AskError::Unsupported`] names it.
pub const URL_ELICITATION: &str = "elicitation.url";

/// One question for the host, as a face receives it.
#[derive(Clone, Debug, PartialEq)]
pub enum Ask {
    /// Ask the user to fill a form in: a message and the form's schema ([`form_schema`]).
    Elicit {
        /// What to tell the user.
        message: String,
        /// The form.
        schema: Value,
    },
    /// Ask the model for a message.
    Sample(Sample),
    /// Ask for the roots.
    Roots,
    /// Ask the user to open a URL outside the agent (a third-party sign-in, a payment, a
    /// secret): nothing they do there passes through the host or its model.
    ElicitUrl {
        /// What to tell the user.
        message: String,
        /// The URL to open.
        url: String,
        /// The elicitation's id: what `notifications/elicitation/complete` names when the
        /// out-of-band step finishes ([`crate::context::ToolContext::elicitation_complete`]).
        id: String,
    },
}

impl Ask {
    /// The host capability the ask needs, as MCP names it.
    pub fn capability(&self) -> &'static str {
        match self {
            Ask::Elicit { .. } => "elicitation",
            Ask::Sample(_) => "sampling",
            Ask::Roots => "roots",
            Ask::ElicitUrl { .. } => URL_ELICITATION,
        }
    }

    /// The key a call's `n`-th ask (from 1) of this kind gets when its author names none.
    pub(crate) fn default_key(&self, n: usize) -> String {
        let kind = match self {
            Ask::Elicit { .. } => "elicit",
            Ask::Sample(_) => "sample",
            Ask::Roots => "roots",
            Ask::ElicitUrl { .. } => "elicit-url",
        };
        format!("{kind}-{n}")
    }
}

/// A face's answer to an [`Ask`], before it is typed.
#[derive(Clone, Debug, PartialEq)]
pub enum Answer {
    /// The user's action (`accept`, `decline`, `cancel`) and, when accepted, the form's content.
    Elicit {
        /// The action.
        action: String,
        /// The content.
        content: Option<Value>,
    },
    /// The model's message.
    Sample(Sampled),
    /// The roots.
    Roots(Vec<Root>),
    /// The user's action on a URL elicitation (`accept`: they agreed to open it).
    ElicitUrl {
        /// The action.
        action: String,
        /// The elicitation's id, as asked.
        id: String,
    },
}

/// A step the user must finish at a URL before a call can go on, for a call that would rather
/// end than wait ([`crate::context::ToolContext::elicit_url`] waits instead). Returned as the
/// call's failure, MCP answers the error `-32042` ("URL elicitation required") listing it;
/// once the app learns the step finished, it sends
/// [`crate::context::ToolContext::elicitation_complete`] with [`UrlRequired::id`].
///
/// ```
/// use surface_runtime::ask::UrlRequired;
/// use surface_runtime::{Failure, FailureKind};
/// let step = UrlRequired::new("https://example.com/authorize", "Authorize the registry");
/// let id = step.id.clone();
/// let failure = Failure::from(step);
/// assert_eq!(failure.kind, FailureKind::UrlElicitationRequired);
/// assert_eq!(failure.detail.unwrap()["elicitations"][0]["elicitationId"], id.as_str());
/// ```
#[derive(Clone, Debug, PartialEq)]
pub struct UrlRequired {
    /// The elicitation's id (fresh).
    pub id: String,
    /// The URL to open.
    pub url: String,
    /// What to tell the user.
    pub message: String,
}

impl UrlRequired {
    /// A step at `url`, with a fresh id.
    pub fn new(url: impl Into<String>, message: impl Into<String>) -> Self {
        UrlRequired {
            id: crate::context::fresh_elicitation_id(),
            url: url.into(),
            message: message.into(),
        }
    }
}

impl From<UrlRequired> for crate::Failure {
    fn from(step: UrlRequired) -> Self {
        let mut failure = crate::Failure::new(
            crate::FailureKind::UrlElicitationRequired,
            format!("{} (open {} to go on)", step.message, step.url),
        );
        failure.detail = Some(json!({ "elicitations": [{
            "mode": "url",
            "elicitationId": step.id,
            "url": step.url,
            "message": step.message,
        }] }));
        failure
    }
}

/// The user's answer to a URL elicitation ([`crate::context::ToolContext::elicit_url`]).
/// `Accept` says they agreed to open the URL, not that they finished there: the app learns
/// that out of band, then tells the host with
/// [`crate::context::ToolContext::elicitation_complete`].
#[derive(Clone, Debug, PartialEq)]
pub struct UrlElicitation {
    /// What they chose; accepted with nothing in it.
    pub action: Elicitation<()>,
    /// The elicitation's id.
    pub id: String,
}

impl FromAnswer for UrlElicitation {
    fn from_answer(answer: Answer) -> Result<Self, AskError> {
        let Answer::ElicitUrl { action, id } = answer else {
            return Err(AskError::Invalid("expected a URL elicitation result".into()));
        };
        let action = match action.as_str() {
            "accept" => Elicitation::Accept(()),
            "decline" => Elicitation::Decline,
            "cancel" => Elicitation::Cancel,
            other => {
                return Err(AskError::Invalid(format!(
                    "unknown elicitation action \"{other}\""
                )));
            }
        };
        Ok(UrlElicitation { action, id })
    }
}

/// Turns a face's [`Answer`] into what the call asked for.
pub trait FromAnswer: Sized + Send + 'static {
    /// The typed answer; `Invalid` when the answer is of another kind or does not decode.
    fn from_answer(answer: Answer) -> Result<Self, AskError>;
}

impl<T: DeserializeOwned + Send + 'static> FromAnswer for Elicitation<T> {
    fn from_answer(answer: Answer) -> Result<Self, AskError> {
        let Answer::Elicit { action, content } = answer else {
            return Err(AskError::Invalid("expected an elicitation result".into()));
        };
        match action.as_str() {
            "accept" => {
                let content = content.unwrap_or_else(|| Value::Object(Map::new()));
                serde_json::from_value(content)
                    .map(Elicitation::Accept)
                    .map_err(|e| AskError::Invalid(format!("the accepted content does not decode: {e}")))
            }
            "decline" => Ok(Elicitation::Decline),
            "cancel" => Ok(Elicitation::Cancel),
            other => Err(AskError::Invalid(format!(
                "unknown elicitation action \"{other}\""
            ))),
        }
    }
}

impl FromAnswer for Sampled {
    fn from_answer(answer: Answer) -> Result<Self, AskError> {
        match answer {
            Answer::Sample(s) => Ok(s),
            _ => Err(AskError::Invalid("expected a sampling result".into())),
        }
    }
}

impl FromAnswer for Vec<Root> {
    fn from_answer(answer: Answer) -> Result<Self, AskError> {
        match answer {
            Answer::Roots(r) => Ok(r),
            _ => Err(AskError::Invalid("expected a roots result".into())),
        }
    }
}

/// A type that can be an elicitation form: derive it with `#[derive(Elicit)]` (beside
/// `Deserialize` and `JsonSchema`), which checks each field's type at compile time.
#[diagnostic::on_unimplemented(
    message = "`{Self}` is not an elicitation form",
    label = "derive `surface::Elicit` on it",
    note = "a form is a struct whose fields are strings, numbers, integers, booleans, enums of unit variants, lists of such enums, or `Option`s of these"
)]
pub trait ElicitForm: JsonSchema + DeserializeOwned + Send + 'static {}

/// A type that can be one field of an elicitation form.
#[diagnostic::on_unimplemented(
    message = "`{Self}` cannot be a field of an elicitation form",
    label = "not a string, number, integer, boolean or choice",
    note = "a form is flat: ask for a nested value in an elicitation of its own; an enum of unit variants becomes a choice with `#[derive(Elicit)]`"
)]
pub trait ElicitField {
    /// What `#[derive(Elicit)]` names to check a field's type: a projection, not a generic
    /// bound, so the error is at the field with no note naming generated code.
    #[doc(hidden)]
    const __QUALIFIES: () = ();
}

/// An enum of unit variants that can be chosen in a form (and listed, for a multi-select).
#[diagnostic::on_unimplemented(
    message = "`{Self}` is not a choice of an elicitation form",
    label = "a list in a form holds choices only",
    note = "derive `surface::Elicit` on an enum of unit variants"
)]
pub trait ElicitChoice: ElicitField {}

macro_rules! fields {
    ($($t:ty),*) => { $(impl ElicitField for $t {})* };
}
fields!(
    String, bool, i8, i16, i32, i64, i128, isize, u8, u16, u32, u64, u128, usize, f32, f64
);
impl<T: ElicitField> ElicitField for Option<T> {}
impl<T: ElicitChoice> ElicitField for Vec<T> {}

/// The elicitation form of `T`: its JSON Schema, checked flat and rewritten into the shapes
/// elicitation allows (titled enums as `oneOf` of `const`/`title`, lists of enum values as
/// `array` of `enum` or `anyOf`). `BadForm` names the first field that cannot be in a form.
pub fn form_schema<T: JsonSchema>() -> Result<Value, AskError> {
    let generator = schemars::generate::SchemaSettings::draft2020_12()
        .with(|s| s.inline_subschemas = true)
        .into_generator();
    let root = generator.into_root_schema_for::<T>().to_value();
    form_from_schema(&root)
}

/// [`form_schema`] for a schema already in hand.
pub fn form_from_schema(schema: &Value) -> Result<Value, AskError> {
    let bad = |why: String| AskError::BadForm(why);
    if schema.get("type") != Some(&json!("object")) {
        return Err(bad("the form must be a struct of named fields".into()));
    }
    let mut properties = Map::new();
    for (name, field) in schema
        .get("properties")
        .and_then(Value::as_object)
        .into_iter()
        .flatten()
    {
        let field = primitive(field).map_err(|why| bad(format!("field `{name}`: {why}")))?;
        properties.insert(name.clone(), field);
    }
    let mut form = Map::new();
    form.insert("type".into(), json!("object"));
    for key in ["title", "description"] {
        if let Some(v) = schema.get(key) {
            form.insert(key.into(), v.clone());
        }
    }
    form.insert("properties".into(), Value::Object(properties));
    if let Some(required) = schema.get("required") {
        form.insert("required".into(), required.clone());
    }
    Ok(Value::Object(form))
}

/// Keywords a primitive field keeps, beside its type (and, for enums, its choices).
const KEPT: &[&str] = &[
    "title",
    "description",
    "default",
    "minLength",
    "maxLength",
    "minimum",
    "maximum",
    "minItems",
    "maxItems",
    "enumNames",
];

/// One field of a form, rewritten; an error says why it cannot be one.
fn primitive(field: &Value) -> Result<Value, String> {
    let field = without_null(field);
    let Some(object) = field.as_object() else {
        return Err("an unconstrained value cannot be a form field".into());
    };
    let mut out = Map::new();
    for key in KEPT {
        if let Some(v) = object.get(*key) {
            out.insert((*key).into(), v.clone());
        }
    }
    if let Some(choices) = titled_choices(field) {
        out.insert("type".into(), json!("string"));
        out.insert("oneOf".into(), Value::Array(choices));
        return Ok(Value::Object(out));
    }
    // `Option<T>` is `"type": ["T", "null"]`: the field is simply not required.
    let ty = match object.get("type") {
        Some(Value::Array(types)) => {
            let mut named = types.iter().filter_map(Value::as_str).filter(|t| *t != "null");
            match (named.next(), named.next()) {
                (Some(t), None) => Some(t),
                _ => None,
            }
        }
        other => other.and_then(Value::as_str),
    };
    match ty {
        Some("string") => {
            // Only the formats elicitation knows travel (`email`, `uri`, `date`, `date-time`).
            if let Some(f) = object.get("format")
                && matches!(f.as_str(), Some("email" | "uri" | "date" | "date-time"))
            {
                out.insert("format".into(), f.clone());
            }
            if let Some(e) = object.get("enum") {
                out.insert("enum".into(), string_enum(e)?);
            }
            out.insert("type".into(), json!("string"));
        }
        Some(t @ ("number" | "integer" | "boolean")) => {
            out.insert("type".into(), json!(t));
        }
        Some("array") => {
            let items = object.get("items").map(without_null).unwrap_or(&Value::Null);
            let items = if let Some(choices) = titled_choices(items) {
                json!({ "anyOf": choices })
            } else if let Some(e) = items.get("enum") {
                json!({ "type": "string", "enum": string_enum(e)? })
            } else {
                return Err("a list in a form must be a list of enum values".into());
            };
            out.insert("type".into(), json!("array"));
            out.insert("items".into(), items);
        }
        Some("object") => {
            return Err("a nested object cannot be a form field — ask for it in a second elicitation".into());
        }
        _ => return Err("only strings, numbers, integers, booleans and enums can be form fields".into()),
    }
    Ok(Value::Object(out))
}

/// The schema without a `null` alternative (an `Option` field is a form field not required).
fn without_null(schema: &Value) -> &Value {
    let is_null = |s: &Value| s.get("type") == Some(&json!("null"));
    if let Some(any) = schema.get("anyOf").and_then(Value::as_array)
        && any.len() == 2
        && let Some(i) = any.iter().position(is_null)
    {
        return &any[1 - i];
    }
    schema
}

/// A unit enum's variants as `[{const, title}]` when at least one has a title (or a doc comment);
/// `None` for anything else.
fn titled_choices(schema: &Value) -> Option<Vec<Value>> {
    let variants = schema
        .get("oneOf")
        .or_else(|| schema.get("anyOf"))
        .and_then(Value::as_array)?;
    let mut choices = Vec::new();
    for v in variants {
        let value = v
            .get("const")
            .or_else(|| v.get("enum").and_then(|e| e.get(0)))?
            .as_str()?;
        let title = v
            .get("title")
            .or_else(|| v.get("description"))
            .and_then(Value::as_str);
        choices.push(json!({ "const": value, "title": title.unwrap_or(value) }));
    }
    Some(choices)
}

fn string_enum(values: &Value) -> Result<Value, String> {
    match values.as_array() {
        Some(values) if values.iter().all(Value::is_string) => Ok(Value::Array(values.clone())),
        _ => Err("an enum in a form must be of strings".into()),
    }
}

/// A typed ask in the making (a future): await it, join it with others (one round on
/// 2026-07-28), or name its key first with [`Asking::key`].
///
/// The key matters in the 2026-07-28 era, where it names the question in the
/// `input_required` result and the answer in the next round; without one, a call's asks are
/// keyed `elicit-1`, `sample-1`, `roots-1`, … in the order they are made.
#[must_use = "an ask does nothing until awaited"]
pub struct Asking<A> {
    pub(crate) ctx: crate::context::ToolContext,
    pub(crate) key: Option<String>,
    pub(crate) ask: Result<Ask, AskError>,
    pub(crate) answer: PhantomData<fn() -> A>,
    pub(crate) running: Option<futures::future::BoxFuture<'static, Result<A, AskError>>>,
}

impl<A> Asking<A> {
    /// Names the question (its `inputRequests` key on 2026-07-28).
    pub fn key(mut self, key: impl Into<String>) -> Self {
        self.key = Some(key.into());
        self
    }
}

impl<A: FromAnswer> std::future::Future for Asking<A> {
    type Output = Result<A, AskError>;

    fn poll(
        mut self: std::pin::Pin<&mut Self>,
        cx: &mut std::task::Context<'_>,
    ) -> std::task::Poll<Self::Output> {
        // Started on its first poll, so `.key(..)` can still name it before; then polled in place.
        let this = &mut *self;
        let running = this.running.get_or_insert_with(|| {
            let ctx = this.ctx.clone();
            let key = this.key.take();
            let ask = std::mem::replace(&mut this.ask, Err(AskError::Failed("asked twice".into())));
            Box::pin(async move {
                let answer = ctx.ask(key, ask?).await?;
                A::from_answer(answer)
            })
        });
        running.as_mut().poll(cx)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Deserialize, JsonSchema)]
    #[allow(dead_code)]
    enum Plain {
        A,
        B,
    }

    #[derive(Deserialize, JsonSchema)]
    #[allow(dead_code)]
    enum Titled {
        /// First
        A,
        #[schemars(title = "Second")]
        B,
    }

    #[derive(Deserialize, JsonSchema)]
    #[allow(dead_code)]
    struct Flat {
        name: String,
        age: Option<u32>,
        plain: Plain,
        titled: Titled,
        many: Vec<Plain>,
        many_titled: Vec<Titled>,
    }

    #[derive(Deserialize, JsonSchema)]
    #[allow(dead_code)]
    struct Nested {
        name: String,
        inner: Flat,
    }

    #[test]
    fn a_flat_form_keeps_primitives_and_rewrites_enums() {
        let form = form_schema::<Flat>().unwrap();
        let p = &form["properties"];
        assert_eq!(p["name"]["type"], "string");
        assert_eq!(p["age"]["type"], "integer");
        assert_eq!(p["plain"], json!({"type": "string", "enum": ["A", "B"]}));
        assert_eq!(
            p["titled"]["oneOf"],
            json!([{"const": "A", "title": "First"}, {"const": "B", "title": "Second"}])
        );
        assert_eq!(p["many"]["items"], json!({"type": "string", "enum": ["A", "B"]}));
        assert_eq!(p["many_titled"]["items"]["anyOf"][1]["title"], "Second");
        let required: Vec<&str> = form["required"]
            .as_array()
            .unwrap()
            .iter()
            .filter_map(Value::as_str)
            .collect();
        assert!(required.contains(&"name") && !required.contains(&"age"));
    }

    #[test]
    fn a_nested_form_is_refused_naming_the_field() {
        let Err(AskError::BadForm(why)) = form_schema::<Nested>() else {
            panic!("a nested form was accepted");
        };
        assert!(why.contains("field `inner`"), "{why}");
    }

    #[test]
    fn answers_decode_by_action() {
        let accept = Answer::Elicit {
            action: "accept".into(),
            content: Some(
                json!({"name": "Ada", "age": null, "plain": "A", "titled": "B", "many": [], "many_titled": []}),
            ),
        };
        let flat = Elicitation::<Flat>::from_answer(accept)
            .unwrap()
            .accepted()
            .unwrap();
        assert_eq!(flat.name, "Ada");
        let decline = Answer::Elicit {
            action: "decline".into(),
            content: None,
        };
        assert_eq!(
            Elicitation::<Value>::from_answer(decline).unwrap(),
            Elicitation::Decline
        );
        let wrong = Answer::Roots(vec![]);
        assert!(matches!(
            Elicitation::<Value>::from_answer(wrong),
            Err(AskError::Invalid(_))
        ));
    }
}
