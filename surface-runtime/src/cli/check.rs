//! The local check of a tool's input against the schema it advertises, run before anything is
//! dialled: a wrong argument is a usage error the served surface never sees.
//!
//! Procedures do not go through it: their input is decoded by the served side's own decoder
//! (`SurfaceProcedures::input_decoder`), which says everything the schema says and what it
//! cannot (integer widths, a type's own `Deserialize`). It serves the tools the face has no
//! such decoder for before their run: bespoke and root tools, and mirrors.
//!
//! It reads the bridged schemas `crate::schema` produces (references inlined, no `$defs`):
//! `type`, `enum`, `const`, `properties`, `required`, `additionalProperties`, `items`,
//! `prefixItems`, numeric bounds, length bounds, `anyOf`, `oneOf`, `allOf`. `pattern` and
//! `format` are left to the served side's decoder, which runs again on arrival.

use serde_json::{Map, Value};

/// What is wrong, and where (`""` for the whole input, `pid`, `items[2].name`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Mismatch {
    pub field: String,
    pub message: String,
}

fn join(path: &str, key: &str) -> String {
    if path.is_empty() {
        key.to_owned()
    } else {
        format!("{path}.{key}")
    }
}

fn kind_of(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "boolean",
        Value::Number(n) if n.is_i64() || n.is_u64() => "integer",
        Value::Number(_) => "number",
        Value::String(_) => "string",
        Value::Array(_) => "array",
        Value::Object(_) => "object",
    }
}

fn has_type(v: &Value, ty: &str) -> bool {
    match ty {
        "integer" => match v {
            Value::Number(n) => n.is_i64() || n.is_u64() || n.as_f64().is_some_and(|f| f.fract() == 0.0),
            _ => false,
        },
        "number" => v.is_number(),
        other => kind_of(v) == other,
    }
}

/// Checks `value` against `schema`; the first mismatch found, with its path.
pub(crate) fn check(value: &Value, schema: &Value) -> Result<(), Mismatch> {
    walk(value, schema, "")
}

fn fail(path: &str, message: String) -> Result<(), Mismatch> {
    Err(Mismatch {
        field: path.to_owned(),
        message,
    })
}

fn walk(value: &Value, schema: &Value, path: &str) -> Result<(), Mismatch> {
    let Value::Object(s) = schema else {
        // `true` accepts anything; `false` nothing.
        return match schema {
            Value::Bool(false) => fail(path, "no value is allowed here".into()),
            _ => Ok(()),
        };
    };
    if let Some(allowed) = s.get("enum").and_then(Value::as_array)
        && !allowed.contains(value)
    {
        let list: Vec<String> = allowed.iter().map(Value::to_string).collect();
        return fail(path, format!("expected one of {}, got {value}", list.join(", ")));
    }
    if let Some(c) = s.get("const")
        && c != value
    {
        return fail(path, format!("expected {c}, got {value}"));
    }
    match s.get("type") {
        Some(Value::String(ty)) if !has_type(value, ty) => {
            return fail(path, format!("expected {ty}, got {} {value}", kind_of(value)));
        }
        Some(Value::Array(types)) if !types.iter().filter_map(Value::as_str).any(|t| has_type(value, t)) => {
            let names: Vec<&str> = types.iter().filter_map(Value::as_str).collect();
            return fail(
                path,
                format!("expected {}, got {} {value}", names.join(" or "), kind_of(value)),
            );
        }
        _ => {}
    }
    match value {
        Value::Object(o) => object(o, s, path)?,
        Value::Array(items) => array(items, s, path)?,
        Value::Number(n) => number(n.as_f64().unwrap_or(f64::NAN), s, path)?,
        Value::String(text) => string(text, s, path)?,
        _ => {}
    }
    if let Some(all) = s.get("allOf").and_then(Value::as_array) {
        for arm in all {
            walk(value, arm, path)?;
        }
    }
    if let Some(any) = s.get("anyOf").and_then(Value::as_array) {
        arms(value, any, path, false)?;
    }
    if let Some(one) = s.get("oneOf").and_then(Value::as_array) {
        arms(value, one, path, true)?;
    }
    Ok(())
}

fn arms(value: &Value, arms: &[Value], path: &str, exactly_one: bool) -> Result<(), Mismatch> {
    let mut first = None;
    let mut fits = 0;
    for arm in arms {
        match walk(value, arm, path) {
            Ok(()) => fits += 1,
            Err(e) => {
                first.get_or_insert(e);
            }
        }
    }
    match (fits, first) {
        (0, Some(e)) => Err(e),
        (n, _) if exactly_one && n > 1 => fail(path, format!("{value} fits more than one alternative")),
        _ => Ok(()),
    }
}

fn object(o: &Map<String, Value>, s: &Map<String, Value>, path: &str) -> Result<(), Mismatch> {
    let properties = s.get("properties").and_then(Value::as_object);
    for name in s.get("required").and_then(Value::as_array).into_iter().flatten() {
        if let Some(name) = name.as_str()
            && !o.contains_key(name)
        {
            return fail(&join(path, name), "missing required field".into());
        }
    }
    for (key, v) in o {
        match properties.and_then(|p| p.get(key)) {
            Some(sub) => walk(v, sub, &join(path, key))?,
            None => match s.get("additionalProperties") {
                Some(Value::Bool(false)) => {
                    let known: Vec<&str> = properties
                        .into_iter()
                        .flat_map(|p| p.keys())
                        .map(String::as_str)
                        .collect();
                    return fail(
                        &join(path, key),
                        format!("unknown field, expected one of: {}", known.join(", ")),
                    );
                }
                Some(extra @ Value::Object(_)) => walk(v, extra, &join(path, key))?,
                _ => {}
            },
        }
    }
    Ok(())
}

fn array(items: &[Value], s: &Map<String, Value>, path: &str) -> Result<(), Mismatch> {
    let bound = |k: &str| s.get(k).and_then(Value::as_u64);
    if let Some(min) = bound("minItems")
        && (items.len() as u64) < min
    {
        return fail(
            path,
            format!("expected at least {min} items, got {}", items.len()),
        );
    }
    if let Some(max) = bound("maxItems")
        && (items.len() as u64) > max
    {
        return fail(path, format!("expected at most {max} items, got {}", items.len()));
    }
    let prefix = s.get("prefixItems").and_then(Value::as_array);
    for (i, item) in items.iter().enumerate() {
        let at = format!("{path}[{i}]");
        match prefix.and_then(|p| p.get(i)) {
            Some(sub) => walk(item, sub, &at)?,
            None => {
                if let Some(sub) = s.get("items") {
                    walk(item, sub, &at)?;
                }
            }
        }
    }
    Ok(())
}

fn number(n: f64, s: &Map<String, Value>, path: &str) -> Result<(), Mismatch> {
    let bound = |k: &str| s.get(k).and_then(Value::as_f64);
    if let Some(min) = bound("minimum")
        && n < min
    {
        return fail(path, format!("expected at least {min}, got {n}"));
    }
    if let Some(max) = bound("maximum")
        && n > max
    {
        return fail(path, format!("expected at most {max}, got {n}"));
    }
    if let Some(min) = bound("exclusiveMinimum")
        && n <= min
    {
        return fail(path, format!("expected more than {min}, got {n}"));
    }
    if let Some(max) = bound("exclusiveMaximum")
        && n >= max
    {
        return fail(path, format!("expected less than {max}, got {n}"));
    }
    Ok(())
}

fn string(text: &str, s: &Map<String, Value>, path: &str) -> Result<(), Mismatch> {
    let len = text.chars().count() as u64;
    if let Some(min) = s.get("minLength").and_then(Value::as_u64)
        && len < min
    {
        return fail(path, format!("expected at least {min} characters, got {len}"));
    }
    if let Some(max) = s.get("maxLength").and_then(Value::as_u64)
        && len > max
    {
        return fail(path, format!("expected at most {max} characters, got {len}"));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn kill() -> Value {
        json!({"type": "object", "properties": {"pid": {"type": "integer", "minimum": 0}}, "required": ["pid"]})
    }

    #[test]
    fn names_the_field_at_fault() {
        assert_eq!(check(&json!({"pid": 2}), &kill()), Ok(()));
        let e = check(&json!({"pid": "x"}), &kill()).unwrap_err();
        assert_eq!(e.field, "pid");
        assert_eq!(e.message, "expected integer, got string \"x\"");
        assert_eq!(
            check(&json!({}), &kill()).unwrap_err().message,
            "missing required field"
        );
        assert_eq!(
            check(&json!({"pid": -1}), &kill()).unwrap_err().message,
            "expected at least 0, got -1"
        );
    }

    #[test]
    fn closed_objects_enums_and_unions() {
        let s = json!({
            "type": "object",
            "properties": {
                "mode": {"enum": ["a", "b"]},
                "tags": {"type": "array", "items": {"type": "string"}, "maxItems": 2},
                "either": {"anyOf": [{"type": "integer"}, {"type": "string"}]}
            },
            "additionalProperties": false
        });
        assert_eq!(
            check(&json!({"mode": "a", "tags": ["x"], "either": 3}), &s),
            Ok(())
        );
        assert_eq!(check(&json!({"mode": "c"}), &s).unwrap_err().field, "mode");
        assert_eq!(
            check(&json!({"tags": ["x", 1]}), &s).unwrap_err().field,
            "tags[1]"
        );
        assert_eq!(
            check(&json!({"tags": ["x", "y", "z"]}), &s).unwrap_err().field,
            "tags"
        );
        assert_eq!(check(&json!({"either": true}), &s).unwrap_err().field, "either");
        assert_eq!(check(&json!({"other": 1}), &s).unwrap_err().field, "other");
    }
}
