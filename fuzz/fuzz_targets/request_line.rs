//! One stdio line as a hostile client sends it: `decode_line` never panics, every line that is
//! not a notification gets an answer (a message for rmcp, or an error line that echoes a usable
//! `id`), and the allocation-free `outline` agrees with serde_json about what is JSON.
#![no_main]

use libfuzzer_sys::fuzz_target;
use serde_json::Value;
use surface_runtime::mcp::__transport::{Decoded, Kind, decode_line, outline};

fuzz_target!(|line: &[u8]| {
    if line.contains(&b'\n') {
        return; // the transport splits lines before decoding them
    }
    let answer = decode_line(line);
    // The decoder strips a UTF-8 BOM and a trailing CR, as rmcp's transport does.
    let line = line.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(line);
    let line = line.strip_suffix(b"\r").unwrap_or(line);
    let json = serde_json::from_slice::<Value>(line).ok();
    let shape = outline(line);
    if let Some(value) = &json {
        assert!(shape.complete, "outline refused JSON serde_json read");
        let kind = match value {
            Value::Object(_) => Kind::Object,
            Value::Array(_) => Kind::Array,
            _ => shape.kind,
        };
        assert_eq!(shape.kind, kind);
        // With one `"id"` in the text, the outline's raw id is the object's id.
        if let (Value::Object(map), 1) = (value, count(line, br#""id""#)) {
            let raw = shape
                .id
                .map(|raw| serde_json::from_slice::<Value>(raw).expect("a raw id is JSON"));
            assert_eq!(raw.as_ref(), map.get("id"));
        }
    }
    match answer {
        Decoded::Message(_) => {}
        Decoded::Refuse(answer) => {
            let answer: Value = serde_json::from_slice(&answer).expect("an error answer is JSON");
            assert_eq!(answer["jsonrpc"], "2.0");
            let code = answer["error"]["code"].as_i64().expect("an error code");
            assert!(code == -32700 || code == -32600, "code {code}");
            assert!(
                answer.get("id").is_some(),
                "an error answer names its id (or null)"
            );
            // A request whose id was a string or an integer gets that id back.
            if let Some(Value::Object(map)) = &json
                && count(line, br#""id""#) == 1
                && let Some(id @ (Value::String(_) | Value::Number(_))) = map.get("id")
                && (id.is_string() || id.is_i64() || id.is_u64())
            {
                assert_eq!(&answer["id"], id);
            }
        }
        Decoded::Ignore => {
            // Only blank lines and notifications (a method and no id) go unanswered.
            let blank = line.iter().all(|b| b.is_ascii_whitespace());
            let notification = matches!(&json, Some(Value::Object(map)) if map.contains_key("method") && !map.contains_key("id"))
                || (shape.kind == Kind::Object && shape.method.is_some() && shape.id.is_none());
            assert!(blank || notification, "a line went unanswered");
        }
    }
});

fn count(haystack: &[u8], needle: &[u8]) -> usize {
    haystack.windows(needle.len()).filter(|w| *w == needle).count()
}
