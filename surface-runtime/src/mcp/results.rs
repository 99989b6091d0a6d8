//! Tool results and failures, as MCP answers.
//!
//! A success carries `structuredContent` and the same value as pretty JSON text, both read off
//! one serialization; a non-object travels as `{"value": …}`. An answer of other blocks (an
//! image, a sound, several blocks) with a value gets that text block first when it has no text
//! block of its own (the spec: structured content SHOULD also be returned as serialized JSON in a
//! text block); one that has a text block is left exactly as the tool built it. A failure is an answer too
//! (`isError: true`), branded `surface-mcp: ` exactly once, with a refusal's detail as
//! `structuredContent` through the same normalization.

use crate::blocks::{Block, EmbeddedBody, OkContent};
use crate::blocks::{OkImage, ToolOutput};
use crate::failure::Failure;
use base64::Engine;
use rmcp::model::{CallToolResult, ContentBlock, Resource, ResourceContents};
use serde_json::{Map, Value};

/// The brand every message the adapter writes carries, once.
pub const BRAND: &str = "surface-mcp: ";

/// `message` with the brand in front, unless it already has it.
pub fn branded(message: &str) -> String {
    if message.starts_with(BRAND) {
        message.to_owned()
    } else {
        format!("{BRAND}{message}")
    }
}

/// An object as itself; anything else under `value` (MCP types the structured arm as an object).
pub fn normalize(value: Value) -> Map<String, Value> {
    match value {
        Value::Object(o) => o,
        other => Map::from_iter([("value".to_owned(), other)]),
    }
}

fn pretty(structured: &Map<String, Value>) -> String {
    serde_json::to_string_pretty(structured).unwrap_or_else(|e| format!("<unprintable: {e}>"))
}

/// A successful tool answer.
pub fn success(output: ToolOutput) -> CallToolResult {
    match output {
        ToolOutput::Value(v) => {
            let structured = normalize(v);
            let mut r = CallToolResult::success(vec![ContentBlock::text(pretty(&structured))]);
            r.structured_content = Some(Value::Object(structured));
            r
        }
        ToolOutput::Image(OkImage { bytes, mime, detail }) => {
            with_text(vec![ContentBlock::image(base64(&bytes), mime)], Some(detail))
        }
        ToolOutput::Content(OkContent { blocks, value }) => {
            with_text(blocks.into_iter().map(block).collect(), value)
        }
    }
}

/// `content` with `value` as `structuredContent`, and as a first text block when `content` has
/// no text block.
fn with_text(mut content: Vec<ContentBlock>, value: Option<Value>) -> CallToolResult {
    let structured = value.map(normalize);
    if let Some(structured) = &structured
        && !content.iter().any(|b| b.as_text().is_some())
    {
        content.insert(0, ContentBlock::text(pretty(structured)));
    }
    let mut r = CallToolResult::success(content);
    r.structured_content = structured.map(Value::Object);
    r
}

fn base64(bytes: &[u8]) -> String {
    base64::engine::general_purpose::STANDARD.encode(bytes)
}

/// One block of a several-block answer, as MCP content.
pub(crate) fn block(b: Block) -> ContentBlock {
    match b {
        Block::Text(t) => ContentBlock::text(t),
        Block::Image { bytes, mime } => ContentBlock::image(base64(&bytes), mime),
        Block::Audio { bytes, mime } => ContentBlock::audio(base64(&bytes), mime),
        Block::Embedded { uri, mime, body } => ContentBlock::resource(
            match body {
                EmbeddedBody::Text(t) => ResourceContents::text(t, uri),
                EmbeddedBody::Blob(bytes) => ResourceContents::blob(base64(&bytes), uri),
            }
            .with_mime_type(mime),
        ),
        Block::Link { uri, name, mime } => {
            let mut link = Resource::new(uri, name);
            link.mime_type = mime;
            ContentBlock::resource_link(link)
        }
    }
}

/// The protocol's answer to a request whose handler panicked (JSON-RPC's internal error, with
/// the panic's message): a panic is the server's fault, not the tool's answer.
pub(crate) fn panicked(payload: &(dyn std::any::Any + Send)) -> rmcp::ErrorData {
    let failure = crate::failure::panicked(payload);
    rmcp::ErrorData::internal_error(branded(&format!("the request failed: {}", failure.message)), None)
}

/// A failed tool answer: `isError`, the branded message, and the detail when there is one.
pub fn failure(f: Failure) -> CallToolResult {
    let mut r = CallToolResult::error(vec![ContentBlock::text(branded(&f.message))]);
    r.structured_content = f.detail.map(|d| Value::Object(normalize(d)));
    r
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::failure::FailureKind;
    use serde_json::json;

    #[test]
    fn scalars_travel_wrapped_and_text_matches() {
        let r = success(ToolOutput::Value(json!(3)));
        assert_eq!(r.structured_content, Some(json!({"value": 3})));
        assert_eq!(r.content[0].as_text().unwrap().text, "{\n  \"value\": 3\n}");
        assert_eq!(r.is_error, Some(false));
    }

    #[test]
    fn brand_is_applied_once() {
        let f = Failure::new(FailureKind::Error, "surface-mcp: already");
        assert_eq!(
            failure(f).content[0].as_text().unwrap().text,
            "surface-mcp: already"
        );
        let f = Failure {
            message: "no".into(),
            detail: Some(json!([1])),
            kind: FailureKind::Refused,
        };
        let r = failure(f);
        assert_eq!(r.content[0].as_text().unwrap().text, "surface-mcp: no");
        assert_eq!(r.structured_content, Some(json!({"value": [1]})));
        assert_eq!(r.is_error, Some(true));
    }

    #[test]
    fn several_blocks_keep_their_order_and_value() {
        let answer = OkContent::new()
            .text("t")
            .audio(vec![1], "audio/wav")
            .embedded_text("x://a", "text/plain", "a")
            .link("x://b", "b")
            .value(json!(7));
        let r = serde_json::to_value(success(ToolOutput::Content(answer))).unwrap();
        let kinds: Vec<&str> = r["content"]
            .as_array()
            .unwrap()
            .iter()
            .map(|b| b["type"].as_str().unwrap())
            .collect();
        assert_eq!(kinds, ["text", "audio", "resource", "resource_link"]);
        assert_eq!(r["content"][1]["data"], "AQ==");
        assert_eq!(r["content"][2]["resource"]["mimeType"], "text/plain");
        assert_eq!(r["structuredContent"], json!({"value": 7}));
    }

    #[test]
    fn images_carry_bytes_once_and_their_facts_as_text_first() {
        let r = success(ToolOutput::Image(crate::ok_image(
            vec![1, 2, 3],
            "image/png",
            json!({"w": 1}),
        )));
        assert_eq!(r.content.len(), 2);
        assert_eq!(r.content[0].as_text().unwrap().text, "{\n  \"w\": 1\n}");
        assert!(r.content[1].as_image().is_some());
        assert_eq!(r.structured_content, Some(json!({"w": 1})));
    }

    #[test]
    fn blocks_without_text_get_the_value_as_text_and_blocks_with_text_stay_as_built() {
        let sound = OkContent::new()
            .audio(vec![1], "audio/wav")
            .value(json!({"s": 2}));
        let r = serde_json::to_value(success(ToolOutput::Content(sound))).unwrap();
        assert_eq!(
            r["content"][0],
            json!({"type": "text", "text": "{\n  \"s\": 2\n}"})
        );
        assert_eq!(r["content"][1]["type"], "audio");
        let texted = OkContent::new()
            .audio(vec![1], "audio/wav")
            .text("mine")
            .value(json!(2));
        let r = serde_json::to_value(success(ToolOutput::Content(texted))).unwrap();
        assert_eq!(r["content"].as_array().unwrap().len(), 2);
        assert_eq!(r["content"][1]["text"], "mine");
        let bare = OkContent::new().audio(vec![1], "audio/wav");
        let r = serde_json::to_value(success(ToolOutput::Content(bare))).unwrap();
        assert_eq!(r["content"].as_array().unwrap().len(), 1, "no value, no text");
    }
}
