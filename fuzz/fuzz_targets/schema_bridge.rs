//! The schema bridge on any JSON a `schemars` schema could be: it must not panic or recurse
//! without bound (cyclic `$ref`s, refs to missing definitions, odd `type`s), the advertised
//! input schema is always an object, and arguments unwrap without panicking.
#![no_main]

use libfuzzer_sys::fuzz_target;
use serde_json::Value;
use surface_runtime::schema::{bridge, unwrap_input, wrap_input};

fuzz_target!(|data: &[u8]| {
    // First line: the schema; the rest: arguments a host might send.
    let (schema, args) = match data.iter().position(|&b| b == b'\n') {
        Some(at) => (&data[..at], &data[at + 1..]),
        None => (data, &[][..]),
    };
    let Ok(raw) = serde_json::from_slice::<Value>(schema) else {
        return;
    };
    let bridged = bridge(raw);
    // Serializing walks the whole result: a cycle left in it would never end.
    let text = serde_json::to_string(&bridged).expect("a bridged schema serializes");
    assert!(
        text.len() <= 64 * schema.len().max(64) * 64,
        "bridge blew up {} bytes into {}",
        schema.len(),
        text.len()
    );
    let input = wrap_input(bridged);
    assert_eq!(input.schema.get("type").and_then(Value::as_str), Some("object"));
    let args = serde_json::from_slice::<Value>(args).ok().and_then(|v| match v {
        Value::Object(map) => Some(map),
        _ => None,
    });
    let had_args = args.is_some();
    match unwrap_input(&input, args) {
        Ok(value) => assert!(input.wrapped || value.is_object()),
        Err(e) => assert!(
            input.wrapped && !e.field.is_empty(),
            "only a wrapped input can miss `value` (had args: {had_args})"
        ),
    }
});
