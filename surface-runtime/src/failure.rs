//! Failures: what a procedure or tool answers when it does not succeed.
//!
//! A [`ToolFailure<D>`] is a refusal with a machine-readable detail; any other error type is
//! reported by its message alone (by its type name when the message is empty). Both become a
//! [`Failure`], the erased form every face and dispatch carries.

use serde::Serialize;
use serde_json::Value;
use std::fmt;

/// A refusal with a message for the model and a structured detail for the caller.
///
/// On the MCP face the message arrives as the result text (branded `surface-mcp: `) and the
/// detail as `structuredContent`, through the same normalization a success takes.
///
/// ```
/// use surface_runtime::ToolFailure;
/// use serde_json::json;
/// let refusal = ToolFailure::new("no process 7", json!({ "kind": "no-such-process", "pid": 7 }));
/// assert_eq!(refusal.message(), "no process 7");
/// assert_eq!(refusal.detail().unwrap()["pid"], 7);
/// let plain: ToolFailure = ToolFailure::message_only("busy");
/// assert!(plain.detail().is_none());
/// ```
#[derive(Clone, Debug, PartialEq)]
pub struct ToolFailure<D = Value> {
    message: String,
    detail: Option<D>,
}

impl<D> ToolFailure<D> {
    /// A refusal with a message and a detail.
    pub fn new(message: impl Into<String>, detail: D) -> Self {
        ToolFailure {
            message: message.into(),
            detail: Some(detail),
        }
    }

    /// A refusal with a message and no detail.
    pub fn message_only(message: impl Into<String>) -> Self {
        ToolFailure {
            message: message.into(),
            detail: None,
        }
    }

    /// The message.
    pub fn message(&self) -> &str {
        &self.message
    }

    /// The detail, if any.
    pub fn detail(&self) -> Option<&D> {
        self.detail.as_ref()
    }
}

impl<D> fmt::Display for ToolFailure<D> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

/// Why a call did not succeed, in the erased form every face carries.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(tag = "kind", rename_all = "kebab-case")]
#[non_exhaustive]
pub enum FailureKind {
    /// A [`ToolFailure`]: the handler refused, on purpose.
    Refused,
    /// Any other error the handler returned.
    Error,
    /// The input did not decode; `field` names where (`""` for the whole input).
    InvalidInput {
        /// The path of the offending field (`"pid"`, `"items[2].name"`), empty for the root.
        field: String,
    },
    /// No procedure or tool of that name is served.
    Unknown,
    /// The connection to a served surface failed. `outcome_unknown` is true when a request
    /// was already sent: the far side may have acted and only the answer been lost.
    Transport {
        /// Whether the request may have been executed.
        outcome_unknown: bool,
    },
    /// A request to a served surface got no answer within the caller's timeout. Its outcome is
    /// unknown: the far side may still act on it.
    TimedOut {
        /// The timeout that ran out, in milliseconds.
        after_ms: u64,
    },
    /// The call cannot go on until the user finishes a step at a URL, outside the agent
    /// ([`crate::ask::UrlRequired`]); `detail` holds `{"elicitations": [...]}`. MCP answers it
    /// as the error `-32042`, so the host can show the URL and retry the call afterwards.
    UrlElicitationRequired,
}

/// An erased failure: message, optional structured detail, and its kind.
///
/// ```
/// use surface_runtime::{Failure, FailureKind, IntoFailure, ToolFailure};
/// let f = ToolFailure::new("no", serde_json::json!({"kind": "x"})).into_failure();
/// assert_eq!(f.kind, FailureKind::Refused);
/// assert_eq!(f.detail.unwrap()["kind"], "x");
/// ```
#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct Failure {
    /// What to tell the caller (never empty).
    pub message: String,
    /// The structured detail of a refusal.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub detail: Option<Value>,
    /// Why it failed.
    #[serde(flatten)]
    pub kind: FailureKind,
}

impl Failure {
    /// A failure of `kind` with a message and no detail.
    pub fn new(kind: FailureKind, message: impl Into<String>) -> Self {
        Failure {
            message: message.into(),
            detail: None,
            kind,
        }
    }
}

impl fmt::Display for Failure {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for Failure {}

/// Turns a handler's error into a [`Failure`].
///
/// Implemented for [`ToolFailure<D>`] (message plus detail) and for every
/// `std::error::Error` (message only; the type name when the message is empty).
#[diagnostic::on_unimplemented(
    message = "`{Self}` cannot be the error of a procedure or tool",
    label = "an error is a `ToolFailure<D>` whose detail `D` is `Serialize`, or any `std::error::Error`",
    note = "return `ToolFailure<D>` for a refusal with structured detail (add `#[derive(serde::Serialize)]` to `D`), or any `std::error::Error`"
)]
pub trait IntoFailure {
    /// The erased failure.
    fn into_failure(self) -> Failure;
    /// Whether a failure of this type may carry a detail (a `structuredContent` of its own):
    /// a procedure failing so advertises no `outputSchema`, which clients check a refusal's
    /// `structuredContent` against even when `isError`.
    #[doc(hidden)]
    const CARRIES_DETAIL: bool = false;
}

// Neither impl is offered as the one to write: the trait's own message says both.
#[diagnostic::do_not_recommend]
impl<D: Serialize> IntoFailure for ToolFailure<D> {
    const CARRIES_DETAIL: bool = true;
    fn into_failure(self) -> Failure {
        let message = non_empty(self.message, || "ToolFailure".to_owned());
        match self.detail.map(|d| serde_json::to_value(&d)) {
            None => Failure {
                message,
                detail: None,
                kind: FailureKind::Refused,
            },
            Some(Ok(detail)) => Failure {
                message,
                detail: Some(detail),
                kind: FailureKind::Refused,
            },
            // A detail that cannot be serialized must still produce an answer, and say so.
            Some(Err(e)) => Failure {
                message: format!("{message} (its detail could not be serialized: {e})"),
                detail: None,
                kind: FailureKind::Refused,
            },
        }
    }
}

#[diagnostic::do_not_recommend]
impl<E: std::error::Error + 'static> IntoFailure for E {
    fn into_failure(self) -> Failure {
        // A `Failure` is an error too: returned as it is, its kind and detail stay.
        let mut slot = Some(self);
        if let Some(failure) = (&mut slot as &mut dyn std::any::Any).downcast_mut::<Option<Failure>>() {
            return failure.take().expect("just filled");
        }
        let Some(this) = slot else {
            unreachable!("just filled")
        };
        let message = non_empty(this.to_string(), || short_type_name::<E>().to_owned());
        Failure {
            message,
            detail: None,
            kind: FailureKind::Error,
        }
    }
}

fn non_empty(message: String, fallback: impl FnOnce() -> String) -> String {
    if message.trim().is_empty() {
        fallback()
    } else {
        message
    }
}

/// `my_crate::errors::Timeout<u8>` → `Timeout<u8>`: the name a reader recognises.
pub(crate) fn short_type_name<T: ?Sized>() -> &'static str {
    let full = std::any::type_name::<T>();
    let head = full.split('<').next().unwrap_or(full);
    let start = head.rfind("::").map_or(0, |i| i + 2);
    &full[start..]
}

/// What a call whose handler panicked fails with: the panic's message when it has one (the
/// default panic hook has already printed it, with where, to stderr). Every face answers such a
/// call with it rather than leave its caller waiting.
#[cfg(any(feature = "mcp", feature = "wire"))]
pub(crate) fn panicked(payload: &(dyn std::any::Any + Send)) -> Failure {
    let why = payload
        .downcast_ref::<&str>()
        .copied()
        .or_else(|| payload.downcast_ref::<String>().map(String::as_str))
        .unwrap_or("no message");
    Failure::new(FailureKind::Error, format!("the call panicked: {why}"))
}

/// Serializes an answer; a value that cannot be serialized is a failure that says so.
pub fn encode_value<T: Serialize + ?Sized>(value: &T) -> Result<Value, Failure> {
    serde_json::to_value(value).map_err(|e| {
        Failure::new(
            FailureKind::Error,
            format!("the answer could not be serialized: {e}"),
        )
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Debug)]
    struct Silent;
    impl fmt::Display for Silent {
        fn fmt(&self, _: &mut fmt::Formatter<'_>) -> fmt::Result {
            Ok(())
        }
    }
    impl std::error::Error for Silent {}

    #[test]
    fn empty_message_is_reported_by_type_name() {
        let f = Silent.into_failure();
        assert_eq!(f.message, "Silent");
        assert_eq!(f.kind, FailureKind::Error);
    }

    #[test]
    fn a_failure_returned_as_an_error_keeps_its_kind_and_detail() {
        let mut refused = Failure::new(FailureKind::Refused, "no");
        refused.detail = Some(serde_json::json!({"why": "closed"}));
        assert_eq!(refused.clone().into_failure(), refused);
    }

    struct Unserializable;
    impl Serialize for Unserializable {
        fn serialize<S: serde::Serializer>(&self, _: S) -> Result<S::Ok, S::Error> {
            Err(serde::ser::Error::custom("refuses to serialize"))
        }
    }

    #[test]
    fn unserializable_detail_still_answers() {
        let f = ToolFailure::new("nope", Unserializable).into_failure();
        assert!(
            f.message.starts_with("nope (its detail could not be serialized"),
            "{}",
            f.message
        );
        assert!(f.detail.is_none());
    }
}
