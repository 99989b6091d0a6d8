//! The writing half of the MCP face's JSON-RPC codec: a server message as the bytes serde would
//! write for it, for a stdio line, an HTTP body and an SSE event alike ([`write_message`]).
//!
//! A tool's answer (a `tools/call` response) is most of what a busy server writes, and serde
//! reaches its bytes through rmcp's untagged and tagged enums, one `Write` call per key, quote
//! and escape. Here it is written by hand: the fixed keys as literal bytes, the text blocks and
//! the structured value straight into the buffer. Anything else — an error, another result, a
//! block with annotations or `_meta` — goes through serde, so the bytes are the same either way
//! (the tests hold the two writers equal). The fields written are rmcp 3.11's; a field a later
//! rmcp adds to a result or a text block shows in serde's bytes and fails those tests.

use rmcp::model::{
    CallToolResult, ContentBlock, JsonRpcMessage, RequestId, ServerJsonRpcMessage, ServerResult,
};
use serde_json::Value;

/// Appends `message` as JSON to `out` (no newline).
pub fn write_message(message: &ServerJsonRpcMessage, out: &mut Vec<u8>) -> serde_json::Result<()> {
    match message {
        JsonRpcMessage::Response(response) => match &response.result {
            ServerResult::CallToolResult(answer) => write_tool_answer(&response.id, answer, out),
            _ => serde_json::to_writer(out, message),
        },
        _ => serde_json::to_writer(out, message),
    }
}

/// A `tools/call` response, in the field order rmcp's `Serialize` gives it.
fn write_tool_answer(id: &RequestId, answer: &CallToolResult, out: &mut Vec<u8>) -> serde_json::Result<()> {
    out.extend_from_slice(br#"{"jsonrpc":"2.0","id":"#);
    match id {
        RequestId::Number(n) => out.extend_from_slice(itoa::Buffer::new().format(*n).as_bytes()),
        RequestId::String(s) => write_str(s, out),
    }
    out.extend_from_slice(br#","result":{"#);
    if let Some(result_type) = &answer.result_type {
        out.extend_from_slice(br#""resultType":"#);
        write_str(result_type.as_str(), out);
        out.push(b',');
    }
    out.extend_from_slice(br#""content":["#);
    for (i, block) in answer.content.iter().enumerate() {
        if i > 0 {
            out.push(b',');
        }
        match block {
            ContentBlock::Text(text) if text.meta.is_none() && text.annotations.is_none() => {
                out.extend_from_slice(br#"{"type":"text","text":"#);
                write_str(&text.text, out);
                out.push(b'}');
            }
            other => serde_json::to_writer(&mut *out, other)?,
        }
    }
    out.push(b']');
    if let Some(structured) = &answer.structured_content {
        out.extend_from_slice(br#","structuredContent":"#);
        write_value(structured, out);
    }
    if let Some(is_error) = answer.is_error {
        out.extend_from_slice(if is_error {
            br#","isError":true"#
        } else {
            br#","isError":false"#
        });
    }
    if let Some(meta) = &answer.meta {
        out.extend_from_slice(br#","_meta":"#);
        serde_json::to_writer(&mut *out, meta)?;
    }
    out.extend_from_slice(b"}}");
    Ok(())
}

/// `value` as serde_json writes it (compact, an object's keys in its map's order).
fn write_value(value: &Value, out: &mut Vec<u8>) {
    match value {
        Value::Null => out.extend_from_slice(b"null"),
        Value::Bool(true) => out.extend_from_slice(b"true"),
        Value::Bool(false) => out.extend_from_slice(b"false"),
        Value::Number(n) => write_number(n, out),
        Value::String(s) => write_str(s, out),
        Value::Array(items) => {
            out.push(b'[');
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.push(b',');
                }
                write_value(item, out);
            }
            out.push(b']');
        }
        Value::Object(map) => {
            out.push(b'{');
            for (i, (key, item)) in map.iter().enumerate() {
                if i > 0 {
                    out.push(b',');
                }
                write_str(key, out);
                out.push(b':');
                write_value(item, out);
            }
            out.push(b'}');
        }
    }
}

/// `n` as serde_json writes it. An integer by `itoa`, serde_json's own digits; anything else by
/// the number's `Display`, which is its serialization and stays so under serde_json's
/// `arbitrary_precision` (which another crate in a program may turn on), where a number keeps
/// the digits it was read with — so a `-0` read there goes through `Display` too.
fn write_number(n: &serde_json::Number, out: &mut Vec<u8>) {
    if let Some(u) = n.as_u64() {
        out.extend_from_slice(itoa::Buffer::new().format(u).as_bytes());
    } else if let Some(i) = n.as_i64().filter(|&i| i != 0) {
        out.extend_from_slice(itoa::Buffer::new().format(i).as_bytes());
    } else {
        use std::io::Write;
        write!(out, "{n}").expect("writing to memory cannot fail");
    }
}

/// What a byte becomes inside a JSON string, as serde_json escapes it: 0 for itself, `u` for
/// `\u00XX`, else the letter after the backslash.
const ESCAPE: [u8; 256] = {
    let mut table = [0u8; 256];
    let mut byte = 0;
    while byte < 0x20 {
        table[byte] = b'u';
        byte += 1;
    }
    table[0x08] = b'b';
    table[0x09] = b't';
    table[0x0A] = b'n';
    table[0x0C] = b'f';
    table[0x0D] = b'r';
    table[b'"' as usize] = b'"';
    table[b'\\' as usize] = b'\\';
    table
};

/// `s` as a JSON string, quoted and escaped.
pub(super) fn write_str(s: &str, out: &mut Vec<u8>) {
    const HEX: &[u8; 16] = b"0123456789abcdef";
    let bytes = s.as_bytes();
    // Room for the text, its quotes and a few escapes: most strings need no second reserve.
    out.reserve(bytes.len() + 2 + bytes.len() / 4);
    out.push(b'"');
    // Byte by byte: the text of a structured answer escapes every few bytes, and a short
    // fragment costs more to copy as a slice than to push.
    for &byte in bytes {
        match ESCAPE[byte as usize] {
            0 => out.push(byte),
            b'u' => out.extend_from_slice(&[
                b'\\',
                b'u',
                b'0',
                b'0',
                HEX[(byte >> 4) as usize],
                HEX[(byte & 0xF) as usize],
            ]),
            escape => out.extend_from_slice(&[b'\\', escape]),
        }
    }
    out.push(b'"');
}

#[cfg(test)]
mod tests {
    use super::*;
    use rmcp::model::{Annotations, ResultType, Role};
    use serde_json::json;

    fn both(message: &ServerJsonRpcMessage) -> (String, String) {
        let mut ours = Vec::new();
        write_message(message, &mut ours).unwrap();
        let serde = serde_json::to_string(message).unwrap();
        (String::from_utf8(ours).unwrap(), serde)
    }

    fn answer(id: RequestId, result: CallToolResult) -> ServerJsonRpcMessage {
        ServerJsonRpcMessage::response(ServerResult::CallToolResult(result), id)
    }

    /// Every JSON string shape serde escapes: quotes, backslashes, each control byte, DEL,
    /// multi-byte characters, the empty string.
    fn awkward_strings() -> Vec<String> {
        let controls: String = (0u8..0x20).map(char::from).collect();
        vec![
            String::new(),
            "plain".into(),
            "{\n  \"name\": \"w1\",\n  \"pid\": 3\n}".into(),
            "back\\slash \"quoted\" /solidus/".into(),
            controls,
            "\u{7f} del, é, 日本, 🦀".into(),
            "ends with escape\n".into(),
            "\"".into(),
        ]
    }

    #[test]
    fn a_tool_answer_is_written_as_serde_writes_it() {
        let values = [
            json!({"name": "w1", "pid": 3, "state": "running"}),
            json!({"cpu": 0.0, "procs": 2, "neg": -7, "big": u64::MAX, "small": i64::MIN, "f": 1.5e-300}),
            json!([
                1e21,
                1e-7,
                123456789.125,
                f64::MAX,
                f64::MIN_POSITIVE,
                5e-324,
                0.1 + 0.2,
                -0.0,
                1e15,
                1e16
            ]),
            json!({"nested": {"a": [1, [], {}, null, true, false, "x"], "b": {}}, "empty": []}),
            json!({"value": null}),
            json!([1, 2, 3]),
            json!("a string"),
            Value::Null,
        ];
        let ids = [
            RequestId::Number(0),
            RequestId::Number(-42),
            RequestId::Number(i64::MAX),
            RequestId::String("id \"with\" \\ escapes\n".into()),
        ];
        for text in awkward_strings() {
            for value in &values {
                for id in &ids {
                    let mut result = CallToolResult::success(vec![ContentBlock::text(text.clone())]);
                    result.structured_content = Some(value.clone());
                    let (ours, serde) = both(&answer(id.clone(), result.clone()));
                    assert_eq!(ours, serde);
                    result.result_type = None;
                    result.is_error = Some(true);
                    let (ours, serde) = both(&answer(id.clone(), result));
                    assert_eq!(ours, serde);
                }
            }
            let mut value = serde_json::Map::new();
            value.insert(text.clone(), Value::String(text.clone()));
            let mut result = CallToolResult::success(vec![]);
            result.structured_content = Some(Value::Object(value));
            let (ours, serde) = both(&answer(RequestId::Number(1), result));
            assert_eq!(ours, serde, "keys are escaped as values are");
        }
    }

    #[test]
    fn unusual_blocks_and_fields_keep_serde_bytes() {
        let annotated = ContentBlock::Text(
            rmcp::model::TextContent::new("noted")
                .with_annotations(Annotations::default().with_audience(vec![Role::User])),
        );
        let mut result = CallToolResult::success(vec![
            ContentBlock::text("first"),
            annotated,
            ContentBlock::image("AQID", "image/png"),
            ContentBlock::text("last"),
        ]);
        result.meta = Some(rmcp::model::MetaObject::from(
            json!({"k": "v"}).as_object().unwrap().clone(),
        ));
        result.result_type = Some(ResultType::COMPLETE);
        let (ours, serde) = both(&answer(RequestId::Number(9), result.clone()));
        assert_eq!(ours, serde);
        result.is_error = None;
        result.content.clear();
        let (ours, serde) = both(&answer(RequestId::Number(9), result));
        assert_eq!(ours, serde);
    }

    #[test]
    fn other_messages_are_serde_s() {
        let error = ServerJsonRpcMessage::error(
            rmcp::ErrorData::invalid_params("no \"such\" tool", Some(json!({"x": 1}))),
            Some(RequestId::Number(3)),
        );
        let (ours, serde) = both(&error);
        assert_eq!(ours, serde);
        let empty = ServerJsonRpcMessage::response(ServerResult::empty(()), RequestId::Number(4));
        let (ours, serde) = both(&empty);
        assert_eq!(ours, serde);
    }
}
