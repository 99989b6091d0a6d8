//! What the test client answers: a call's [`Answer`] ([`Refusal`], [`Rejection`]) and the rows
//! the lists answer.

use rmcp::model::CallToolResult;
use serde_json::Value;
use std::fmt;

/// What a tool call answered, as an agent sees it.
#[derive(Clone, Debug, PartialEq)]
pub enum Answer {
    /// Success: the structured content (a bare value travels as `{"value": …}`).
    Value(Value),
    /// The tool answered an error result (`isError: true`): a refusal the agent reads.
    Refused(Refusal),
    /// The call never reached a tool (a JSON-RPC error: unknown tool, bad params, closed
    /// connection).
    Rejected(Rejection),
}

/// A tool's refusal: its message and, for a `ToolFailure<D>`, the detail `D` as JSON.
#[derive(Clone, Debug, PartialEq)]
pub struct Refusal {
    /// The text the agent reads (`surface-mcp: there is no process 4242`).
    pub message: String,
    /// The structured detail, when the failure carried one.
    pub detail: Option<Value>,
}

/// A request answered with an error instead of a result.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Rejection {
    /// The JSON-RPC error code (`-32602` for an unknown tool); `None` when the connection
    /// itself failed.
    pub code: Option<i32>,
    /// The error message.
    pub message: String,
}

impl fmt::Display for Rejection {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.code {
            Some(code) => write!(f, "{} (JSON-RPC error {code})", self.message),
            None => write!(f, "{} (the connection failed)", self.message),
        }
    }
}

impl std::error::Error for Rejection {}

impl Answer {
    /// The value of a successful call.
    ///
    /// # Panics
    ///
    /// When the call was refused or rejected, with the refusal's sentence — so a test reads
    /// `client.call(…).await.value()`.
    ///
    /// ```
    /// # use surface_runtime::testing::Answer;
    /// assert_eq!(Answer::Value(serde_json::json!(1)).value(), serde_json::json!(1));
    /// ```
    #[track_caller]
    pub fn value(self) -> Value {
        match self {
            Answer::Value(v) => v,
            Answer::Refused(r) => panic!("the call was refused: {} (detail: {:?})", r.message, r.detail),
            Answer::Rejected(r) => panic!("the call was rejected: {r}"),
        }
    }

    /// The refusal of a call the tool refused.
    ///
    /// # Panics
    ///
    /// When the call succeeded or was rejected.
    ///
    /// ```
    /// # use surface_runtime::testing::{Answer, Refusal};
    /// let refused = Answer::Refused(Refusal { message: "no".into(), detail: None });
    /// assert_eq!(refused.refusal().message, "no");
    /// ```
    #[track_caller]
    pub fn refusal(self) -> Refusal {
        match self {
            Answer::Refused(r) => r,
            other => panic!("expected a refusal, got {other:?}"),
        }
    }

    /// The rejection of a call that never reached a tool.
    ///
    /// # Panics
    ///
    /// When the call was answered by a tool.
    ///
    /// ```
    /// # use surface_runtime::testing::{Answer, Rejection};
    /// let rejected = Answer::Rejected(Rejection { code: Some(-32602), message: "unknown".into() });
    /// assert_eq!(rejected.rejection().code, Some(-32602));
    /// ```
    #[track_caller]
    pub fn rejection(self) -> Rejection {
        match self {
            Answer::Rejected(r) => r,
            other => panic!("expected a JSON-RPC error, got {other:?}"),
        }
    }
}

/// One tool as `tools/list` advertised it.
#[derive(Clone, Debug, PartialEq)]
pub struct ToolInfo {
    /// Its name on the wire (`proc_kill`, `t_proc_kill`).
    pub name: String,
    /// Its advertised input schema.
    pub input_schema: Value,
    /// Whether it is annotated `readOnlyHint: true`.
    pub read_only: bool,
    /// The whole entry as listed (title, description, annotations, schemas).
    pub listed: Value,
}

/// One resource as `resources/list` advertised it.
#[derive(Clone, Debug, PartialEq)]
pub struct ResourceInfo {
    /// Its URI (`surface://cells/load`).
    pub uri: String,
    /// Its name (`load`, `t/load`).
    pub name: String,
    /// The whole entry as listed.
    pub listed: Value,
}

/// One skill as `skills/list` listed it (the skills extension).
#[derive(Clone, Debug, PartialEq)]
pub struct SkillInfo {
    /// The URI of its `SKILL.md` (`skill://triage/SKILL.md`).
    pub uri: String,
    /// Its name (`triage`).
    pub name: String,
    /// Its description.
    pub description: String,
    /// The whole entry as listed (`uri`, `frontmatter`, `resources` with digests).
    pub listed: Value,
}

/// One resource template as `resources/templates/list` advertised it.
#[derive(Clone, Debug, PartialEq)]
pub struct TemplateInfo {
    /// Its URI template (`surface://collections/processes/{id}`).
    pub uri_template: String,
    /// Its name.
    pub name: String,
    /// The whole entry as listed.
    pub listed: Value,
}

/// The agent's view of a call result.
pub(super) fn answer(result: CallToolResult) -> Answer {
    let text = result
        .content
        .iter()
        .find_map(|c| c.as_text().map(|t| t.text.clone()));
    if result.is_error == Some(true) {
        return Answer::Refused(Refusal {
            message: text.unwrap_or_default(),
            detail: result.structured_content,
        });
    }
    let value = result
        .structured_content
        .or_else(|| text.map(|t| serde_json::from_str(&t).unwrap_or(Value::String(t))))
        .unwrap_or(Value::Null);
    Answer::Value(value)
}
