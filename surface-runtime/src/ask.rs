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

use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value, json};
use std::marker::PhantomData;

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

pub use crate::role::Role;

mod error;
mod form;
pub use error::AskError;
pub use form::{ElicitChoice, ElicitField, ElicitForm, form_from_schema, form_schema};

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
            id: fresh_elicitation_id(),
            url: url.into(),
            message: message.into(),
        }
    }
}

/// A fresh elicitation id: a count hashed under per-process random keys (std's SipHash, keyed
/// from the OS), 128 bits, so ids do not repeat in practice nor tell how many came before.
pub(crate) fn fresh_elicitation_id() -> String {
    use std::hash::BuildHasher;
    static COUNT: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
    static KEYS: std::sync::OnceLock<std::collections::hash_map::RandomState> = std::sync::OnceLock::new();
    let keys = KEYS.get_or_init(std::collections::hash_map::RandomState::new);
    let n = COUNT.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    format!("{:016x}{:016x}", keys.hash_one((n, 0u8)), keys.hash_one((n, 1u8)))
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

/// A typed ask in the making (a future): await it, join it with others (one round on
/// 2026-07-28), or name its key first with [`Asking::key`].
///
/// The key matters in the 2026-07-28 era, where it names the question in the
/// `input_required` result and the answer in the next round; without one, a call's asks are
/// keyed `elicit-1`, `sample-1`, `roots-1`, … in the order they are made.
#[must_use = "an ask does nothing until awaited"]
pub struct Asking<A> {
    asker: Option<Asker>,
    key: Option<String>,
    before_task: bool,
    ask: Result<Ask, AskError>,
    answer: PhantomData<fn() -> A>,
    running: Option<futures::future::BoxFuture<'static, Result<A, AskError>>>,
}

/// What puts an ask to the host: the running call's context hands one over (`context.rs`), so
/// this module names no face and no context.
pub(crate) type Asker = Box<
    dyn FnOnce(Option<String>, Ask, bool) -> futures::future::BoxFuture<'static, Result<Answer, AskError>>
        + Send,
>;

impl<A> Asking<A> {
    pub(crate) fn new(ask: Result<Ask, AskError>, asker: Asker) -> Self {
        Asking {
            asker: Some(asker),
            key: None,
            before_task: false,
            ask,
            answer: PhantomData,
            running: None,
        }
    }

    /// Names the question (its `inputRequests` key on 2026-07-28).
    pub fn key(mut self, key: impl Into<String>) -> Self {
        self.key = Some(key.into());
        self
    }

    /// Asks before the call becomes a task, when it is a task tool's call for a client that
    /// runs it as one (MCP tasks, 2026-07-28): the question is then an `input_required` round
    /// of the `tools/call` itself, and the call becomes a task (its `CreateTaskResult`) only once
    /// it waits on anything else; a question asked otherwise is one of the task's
    /// `inputRequests`. Asked so, the call must ask before it first waits on anything else
    /// (once it has waited on something else it is a task, and this question the task's).
    /// Anywhere but a task tool's call this changes nothing.
    ///
    /// ```
    /// use surface_runtime::ask::AskError;
    /// use surface_runtime::context::ToolContext;
    /// # #[derive(serde::Deserialize, schemars::JsonSchema)]
    /// # struct Name { name: String }
    /// # impl surface_runtime::ask::ElicitForm for Name {}
    /// # async fn run() {
    /// let ctx = ToolContext::current();
    /// // Asked with the call, before the long part runs as a task.
    /// let name = ctx.elicit::<Name>("Whom shall I greet?").key("user_name").before_task().await;
    /// // Outside a call nothing listens, so nothing can answer.
    /// assert_eq!(name.err(), Some(AskError::Unsupported { capability: "elicitation" }));
    /// # }
    /// # tokio::runtime::Builder::new_current_thread().build().unwrap().block_on(run());
    /// ```
    pub fn before_task(mut self) -> Self {
        self.before_task = true;
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
            let asker = this.asker.take();
            let key = this.key.take();
            let before_task = this.before_task;
            let ask = std::mem::replace(&mut this.ask, Err(AskError::Failed("asked twice".into())));
            Box::pin(async move {
                let asker = asker.ok_or_else(|| AskError::Failed("asked twice".into()))?;
                let answer = asker(key, ask?, before_task).await?;
                A::from_answer(answer)
            })
        });
        running.as_mut().poll(cx)
    }
}

#[cfg(test)]
mod tests;
