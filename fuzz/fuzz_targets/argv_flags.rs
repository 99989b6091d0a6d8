//! The argv face's flag parser: for a tool's input schema and an argv, the flags clap builds
//! from the schema never panic, and what they spell names only the schema's properties.
#![no_main]

use libfuzzer_sys::fuzz_target;
use serde_json::{Map, Value, json};
use surface_runtime::cli::__parse_flags;

fn schemas() -> Vec<Map<String, Value>> {
    [
        json!({"type": "object", "properties": {"pid": {"type": "integer", "minimum": 1}}, "required": ["pid"]}),
        json!({"type": "object", "properties": {"name": {"type": "string"}, "paused": {"type": "boolean"}}}),
        json!({"type": "object", "properties": {"state": {"enum": ["running", "sleeping"]}, "ids": {"type": "array", "items": {"type": "integer"}}}}),
        json!({"type": "object", "properties": {"ratio": {"type": "number"}, "blob": {"type": "object"}, "tags": {"type": "array", "items": {"enum": ["a", "b"]}}}}),
    ]
    .into_iter()
    .filter_map(|v| v.as_object().cloned())
    .collect()
}

fuzz_target!(|data: &[u8]| {
    let Some((&which, rest)) = data.split_first() else {
        return;
    };
    let schemas = schemas();
    let schema = &schemas[usize::from(which) % schemas.len()];
    let argv: Vec<String> = String::from_utf8_lossy(rest)
        .split('\0')
        .map(str::to_owned)
        .collect();
    if let Ok(object) = __parse_flags(schema, &argv) {
        let properties = schema["properties"].as_object().expect("properties");
        for key in object.keys() {
            assert!(properties.contains_key(key), "a flag spelled a key the schema lacks: {key}");
        }
    }
});
