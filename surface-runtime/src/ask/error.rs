//! Why an ask got no answer: [`AskError`].

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
