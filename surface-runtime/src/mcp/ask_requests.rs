//! An ask ([`crate::ask::Ask`]) as the MCP request that asks it, and the host's answer read
//! back: the one encoding both eras use (a legacy session is sent the request, a 2026-07-28
//! round names it among its `inputRequests`).

use crate::ask::{Answer, Ask, AskError, Role, Root, Sample, Sampled};
use rmcp::model::{GetExtensions, RequestId, ServerRequest};
use rmcp::service::{OriginatingRequestId, PeerRequestOptions, ServiceError};
use rmcp::{Peer, RoleServer};
use serde_json::{Value, json};
use std::time::Duration;

/// The method and params of the MCP request asking `ask`.
pub(super) fn request_of(ask: &Ask) -> (&'static str, Value) {
    match ask {
        Ask::Elicit { message, schema } => (
            "elicitation/create",
            json!({ "mode": "form", "message": message, "requestedSchema": schema }),
        ),
        Ask::Sample(Sample {
            messages,
            system_prompt,
            max_tokens,
        }) => {
            let messages: Vec<Value> = messages
                .iter()
                .map(|(role, text)| json!({ "role": role, "content": { "type": "text", "text": text } }))
                .collect();
            let mut params = json!({ "messages": messages, "maxTokens": max_tokens });
            if let Some(p) = system_prompt {
                params["systemPrompt"] = json!(p);
            }
            ("sampling/createMessage", params)
        }
        Ask::Roots => ("roots/list", json!({})),
        Ask::ElicitUrl { message, url, id } => (
            "elicitation/create",
            json!({ "mode": "url", "message": message, "url": url, "elicitationId": id }),
        ),
    }
}

/// Sends a legacy session the request and answers the result as JSON, waiting at most
/// `timeout` (then rmcp tells the host the request is cancelled and forgets it).
///
/// The request is marked as the call `origin`'s, so that it rides that call's own stream
/// (SEP-2260) even from a task the call spawned, or from a call answered off rmcp's loop.
pub(super) async fn send(
    peer: &Peer<RoleServer>,
    origin: &RequestId,
    method: &str,
    params: Value,
    timeout: Duration,
) -> Result<Value, AskError> {
    let failed = |e: &dyn std::fmt::Display| AskError::Failed(format!("{method}: {e}"));
    let mut request: ServerRequest = serde_json::from_value(json!({ "method": method, "params": params }))
        .map_err(|e| AskError::Failed(format!("cannot encode the {method} request: {e}")))?;
    request
        .extensions_mut()
        .insert(OriginatingRequestId(origin.clone()));
    let handle = peer
        .send_request_with_option(request, PeerRequestOptions::with_timeout(timeout))
        .await
        .map_err(|e| failed(&e))?;
    match handle.await_response().await {
        Ok(answer) => serde_json::to_value(answer).map_err(|e| failed(&e)),
        Err(ServiceError::Timeout { .. }) => Err(failed(&format_args!(
            "no answer within {} s (McpServer::ask_timeout)",
            timeout.as_secs_f64()
        ))),
        Err(e) => Err(failed(&e)),
    }
}

/// Reads the host's answer to `ask` (an `ElicitResult`, `CreateMessageResult` or
/// `ListRootsResult`, as JSON).
pub(super) fn parse_answer(ask: &Ask, answer: &Value) -> Result<Answer, AskError> {
    let invalid = |what: &str| AskError::Invalid(format!("expected {what}, got {answer}"));
    let object = answer.as_object().ok_or_else(|| invalid("an object"))?;
    let action = || {
        object
            .get("action")
            .and_then(Value::as_str)
            .filter(|a| matches!(*a, "accept" | "decline" | "cancel"))
            .map(str::to_owned)
            .ok_or_else(|| invalid("an elicitation result (`action`: accept, decline or cancel)"))
    };
    match ask {
        Ask::Elicit { .. } => Ok(Answer::Elicit {
            action: action()?,
            content: object.get("content").cloned(),
        }),
        Ask::ElicitUrl { id, .. } => Ok(Answer::ElicitUrl {
            action: action()?,
            id: id.clone(),
        }),
        Ask::Sample(_) => {
            let role = match object.get("role").and_then(Value::as_str) {
                Some("user") => Role::User,
                Some("assistant") => Role::Assistant,
                _ => return Err(invalid("a sampling result (`role`: user or assistant)")),
            };
            let model = object
                .get("model")
                .and_then(Value::as_str)
                .ok_or_else(|| invalid("a sampling result with its `model`"))?;
            // One block, or (SEP-1577) a list of them: the text is that of the text blocks.
            let blocks = match object.get("content") {
                Some(Value::Array(blocks)) => blocks.iter().collect(),
                Some(block) => vec![block],
                None => return Err(invalid("a sampling result with `content`")),
            };
            let texts: Vec<&str> = blocks
                .iter()
                .filter(|b| b.get("type").and_then(Value::as_str) == Some("text"))
                .filter_map(|b| b.get("text").and_then(Value::as_str))
                .collect();
            Ok(Answer::Sample(Sampled {
                role,
                text: (!texts.is_empty()).then(|| texts.concat()),
                model: model.to_owned(),
                stop_reason: object
                    .get("stopReason")
                    .and_then(Value::as_str)
                    .map(str::to_owned),
            }))
        }
        Ask::Roots => {
            let roots = object.get("roots").ok_or_else(|| invalid("a roots result"))?;
            serde_json::from_value::<Vec<Root>>(roots.clone())
                .map(Answer::Roots)
                .map_err(|_| invalid("a roots result (`roots`: [{uri, name?}])"))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rmcp::model::InputRequest;

    #[test]
    fn every_ask_encodes_as_an_input_request() {
        let asks = [
            Ask::Elicit {
                message: "What is your name?".into(),
                schema: json!({"type": "object", "properties": {"name": {"type": "string"}}, "required": ["name"]}),
            },
            Ask::Sample(Sample::user("What is the capital of France?").max_tokens(100)),
            Ask::Roots,
        ];
        for ask in &asks {
            let (method, params) = request_of(ask);
            let request: InputRequest =
                serde_json::from_value(json!({ "method": method, "params": params })).unwrap();
            assert_eq!(serde_json::to_value(&request).unwrap()["method"], method);
        }
    }

    #[test]
    fn answers_are_read_or_refused() {
        let sample = Ask::Sample(Sample::user("hi"));
        let answer = json!({"role": "assistant", "content": {"type": "text", "text": "Paris"}, "model": "m"});
        let Answer::Sample(s) = parse_answer(&sample, &answer).unwrap() else {
            panic!("not a sampling answer")
        };
        assert_eq!(s.text.as_deref(), Some("Paris"));
        let elicit = Ask::Elicit {
            message: "m".into(),
            schema: json!({}),
        };
        assert!(matches!(
            parse_answer(&elicit, &json!(12345)),
            Err(AskError::Invalid(_))
        ));
        assert!(matches!(
            parse_answer(&elicit, &json!({"action": "maybe"})),
            Err(AskError::Invalid(_))
        ));
        let roots = parse_answer(
            &Ask::Roots,
            &json!({"roots": [{"uri": "file:///r", "name": "R"}]}),
        )
        .unwrap();
        assert_eq!(
            roots,
            Answer::Roots(vec![Root {
                uri: "file:///r".into(),
                name: Some("R".into())
            }])
        );
    }
}
