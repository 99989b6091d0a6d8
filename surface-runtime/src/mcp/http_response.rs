//! The answers the HTTP face writes itself, not rmcp: JSON-RPC errors (their codes named in
//! `jsonrpc.rs`), plain-text refusals, and what is wrong with a `POST` body that rmcp would answer
//! wrongly.

use bytes::Bytes;
use http_body_util::combinators::BoxBody;
use http_body_util::{BodyExt, Full};
use serde_json::Value;
use std::convert::Infallible;

/// A response of the HTTP face.
pub(super) type Response = hyper::Response<BoxBody<Bytes, Infallible>>;

/// What is wrong with a `POST` body, as JSON-RPC sees it.
pub(super) enum Problem {
    /// Not JSON by its own account: rmcp answers it.
    Unjudged,
    NotJson(serde_json::Error),
    NotJsonRpc {
        id: Value,
        why: serde_json::Error,
    },
}

impl Problem {
    pub(super) fn of(body: &[u8]) -> Problem {
        let value: Value = match serde_json::from_slice(body) {
            Ok(v) => v,
            Err(e) => return Problem::NotJson(e),
        };
        let id = value
            .get("id")
            .filter(|id| id.is_string() || id.is_number())
            .cloned()
            .unwrap_or(Value::Null);
        match serde_json::from_value::<rmcp::model::ClientJsonRpcMessage>(value) {
            // Valid once the bytes are read as a tree (numbers as f64, say): rmcp's to judge.
            Ok(_) => Problem::Unjudged,
            Err(why) => Problem::NotJsonRpc { id, why },
        }
    }

    pub(super) fn id(&self) -> Value {
        match self {
            Problem::NotJsonRpc { id, .. } => id.clone(),
            _ => Value::Null,
        }
    }
}

/// A JSON-RPC error answer to request `id` (null when unknown), built as the stdio face builds
/// its own ([`super::jsonrpc::error_answer`]).
pub(super) fn jsonrpc_error(status: hyper::StatusCode, id: Value, code: i32, message: String) -> Response {
    let id = serde_json::to_vec(&id).unwrap_or_else(|_| b"null".to_vec());
    let body = super::jsonrpc::error_answer(Some(&id), code, &message);
    jsonrpc_body(status, Bytes::from(body))
}

/// An `application/json` answer.
pub(super) fn jsonrpc_body(status: hyper::StatusCode, body: Bytes) -> Response {
    hyper::Response::builder()
        .status(status)
        .header(hyper::header::CONTENT_TYPE, "application/json")
        .body(Full::new(body).boxed())
        .expect("a JSON response is valid")
}

pub(super) fn plain(status: hyper::StatusCode, text: String) -> Response {
    hyper::Response::builder()
        .status(status)
        .body(Full::new(Bytes::from(text)).boxed())
        .expect("a plain response is valid")
}

pub(super) fn not_found(text: &'static str) -> Response {
    plain(hyper::StatusCode::NOT_FOUND, text.to_owned())
}
