//! The elicitation form: which types may be one ([`ElicitForm`], checked field by field at
//! compile time by `#[derive(Elicit)]`), and the JSON Schema a form is asked with.

use super::error::AskError;
use schemars::JsonSchema;
use serde::de::DeserializeOwned;
use serde_json::{Map, Value, json};

/// A type that can be an elicitation form: derive it with `#[derive(Elicit)]` (beside
/// `Deserialize` and `JsonSchema`), which checks each field's type at compile time.
#[diagnostic::on_unimplemented(
    message = "`{Self}` is not an elicitation form",
    label = "derive `surface::Elicit` on it",
    note = "a form is a struct whose fields are strings, numbers, integers, booleans, enums of unit variants, lists of such enums, or `Option`s of these"
)]
pub trait ElicitForm: JsonSchema + DeserializeOwned + Send + 'static {}

/// A type that can be one field of an elicitation form.
#[diagnostic::on_unimplemented(
    message = "`{Self}` cannot be a field of an elicitation form",
    label = "not a string, number, integer, boolean or choice",
    note = "a form is flat: ask for a nested value in an elicitation of its own; an enum of unit variants becomes a choice with `#[derive(Elicit)]`"
)]
pub trait ElicitField {
    /// What `#[derive(Elicit)]` names to check a field's type: a projection, not a generic
    /// bound, so the error is at the field with no note naming generated code.
    #[doc(hidden)]
    const __QUALIFIES: () = ();
}

/// An enum of unit variants that can be chosen in a form (and listed, for a multi-select).
#[diagnostic::on_unimplemented(
    message = "`{Self}` is not a choice of an elicitation form",
    label = "a list in a form holds choices only",
    note = "derive `surface::Elicit` on an enum of unit variants"
)]
pub trait ElicitChoice: ElicitField {}

macro_rules! fields {
    ($($t:ty),*) => { $(impl ElicitField for $t {})* };
}
fields!(
    String, bool, i8, i16, i32, i64, i128, isize, u8, u16, u32, u64, u128, usize, f32, f64
);
impl<T: ElicitField> ElicitField for Option<T> {}
impl<T: ElicitChoice> ElicitField for Vec<T> {}

/// The elicitation form of `T`: its JSON Schema, checked flat and rewritten into the shapes
/// elicitation allows (titled enums as `oneOf` of `const`/`title`, lists of enum values as
/// `array` of `enum` or `anyOf`). `BadForm` names the first field that cannot be in a form.
pub fn form_schema<T: JsonSchema>() -> Result<Value, AskError> {
    let generator = schemars::generate::SchemaSettings::draft2020_12()
        .with(|s| s.inline_subschemas = true)
        .into_generator();
    let root = generator.into_root_schema_for::<T>().to_value();
    form_from_schema(&root)
}

/// [`form_schema`] for a schema already in hand.
pub fn form_from_schema(schema: &Value) -> Result<Value, AskError> {
    let bad = |why: String| AskError::BadForm(why);
    if schema.get("type") != Some(&json!("object")) {
        return Err(bad("the form must be a struct of named fields".into()));
    }
    let mut properties = Map::new();
    for (name, field) in schema
        .get("properties")
        .and_then(Value::as_object)
        .into_iter()
        .flatten()
    {
        let field = primitive(field).map_err(|why| bad(format!("field `{name}`: {why}")))?;
        properties.insert(name.clone(), field);
    }
    let mut form = Map::new();
    form.insert("type".into(), json!("object"));
    for key in ["title", "description"] {
        if let Some(v) = schema.get(key) {
            form.insert(key.into(), v.clone());
        }
    }
    form.insert("properties".into(), Value::Object(properties));
    if let Some(required) = schema.get("required") {
        form.insert("required".into(), required.clone());
    }
    Ok(Value::Object(form))
}

/// Keywords a primitive field keeps, beside its type (and, for enums, its choices).
const KEPT: &[&str] = &[
    "title",
    "description",
    "default",
    "minLength",
    "maxLength",
    "minimum",
    "maximum",
    "minItems",
    "maxItems",
    "enumNames",
];

/// One field of a form, rewritten; an error says why it cannot be one.
fn primitive(field: &Value) -> Result<Value, String> {
    let field = without_null(field);
    let Some(object) = field.as_object() else {
        return Err("an unconstrained value cannot be a form field".into());
    };
    let mut out = Map::new();
    for key in KEPT {
        if let Some(v) = object.get(*key) {
            out.insert((*key).into(), v.clone());
        }
    }
    if let Some(choices) = titled_choices(field) {
        out.insert("type".into(), json!("string"));
        out.insert("oneOf".into(), Value::Array(choices));
        return Ok(Value::Object(out));
    }
    // `Option<T>` is `"type": ["T", "null"]`: the field is simply not required.
    let ty = match object.get("type") {
        Some(Value::Array(types)) => {
            let mut named = types.iter().filter_map(Value::as_str).filter(|t| *t != "null");
            match (named.next(), named.next()) {
                (Some(t), None) => Some(t),
                _ => None,
            }
        }
        other => other.and_then(Value::as_str),
    };
    match ty {
        Some("string") => {
            // Only the formats elicitation knows travel (`email`, `uri`, `date`, `date-time`).
            if let Some(f) = object.get("format")
                && matches!(f.as_str(), Some("email" | "uri" | "date" | "date-time"))
            {
                out.insert("format".into(), f.clone());
            }
            if let Some(e) = object.get("enum") {
                out.insert("enum".into(), string_enum(e)?);
            }
            out.insert("type".into(), json!("string"));
        }
        Some(t @ ("number" | "integer" | "boolean")) => {
            out.insert("type".into(), json!(t));
        }
        Some("array") => {
            let items = object.get("items").map(without_null).unwrap_or(&Value::Null);
            let items = if let Some(choices) = titled_choices(items) {
                json!({ "anyOf": choices })
            } else if let Some(e) = items.get("enum") {
                json!({ "type": "string", "enum": string_enum(e)? })
            } else {
                return Err("a list in a form must be a list of enum values".into());
            };
            out.insert("type".into(), json!("array"));
            out.insert("items".into(), items);
        }
        Some("object") => {
            return Err("a nested object cannot be a form field — ask for it in a second elicitation".into());
        }
        _ => return Err("only strings, numbers, integers, booleans and enums can be form fields".into()),
    }
    Ok(Value::Object(out))
}

/// The schema without a `null` alternative (an `Option` field is a form field not required).
fn without_null(schema: &Value) -> &Value {
    let is_null = |s: &Value| s.get("type") == Some(&json!("null"));
    if let Some(any) = schema.get("anyOf").and_then(Value::as_array)
        && any.len() == 2
        && let Some(i) = any.iter().position(is_null)
    {
        return &any[1 - i];
    }
    schema
}

/// A unit enum's variants as `[{const, title}]` when at least one has a title (or a doc comment);
/// `None` for anything else.
fn titled_choices(schema: &Value) -> Option<Vec<Value>> {
    let variants = schema
        .get("oneOf")
        .or_else(|| schema.get("anyOf"))
        .and_then(Value::as_array)?;
    let mut choices = Vec::new();
    for v in variants {
        let value = v
            .get("const")
            .or_else(|| v.get("enum").and_then(|e| e.get(0)))?
            .as_str()?;
        let title = v
            .get("title")
            .or_else(|| v.get("description"))
            .and_then(Value::as_str);
        choices.push(json!({ "const": value, "title": title.unwrap_or(value) }));
    }
    Some(choices)
}

fn string_enum(values: &Value) -> Result<Value, String> {
    match values.as_array() {
        Some(values) if values.iter().all(Value::is_string) => Ok(Value::Array(values.clone())),
        _ => Err("an enum in a form must be of strings".into()),
    }
}
