//! The schema bridge: turns what `schemars` generates into the JSON Schemas
//! that MCP hosts (Claude, Gemini, Codex, …) read in `tools/list`.
//!
//! # What it accepts
//!
//! [`bridge`] accepts any root schema that `schemars` 1.x emits, whatever the
//! settings (draft 2020-12, draft 07, OpenAPI 3): a root object with its
//! definitions under `$defs` or `definitions`, local references (`#`,
//! `#/$defs/Name`, `#/definitions/Name`, percent- and `~`-escaped), and
//! `null` alternatives written as `type` arrays, `anyOf`/`oneOf` arms,
//! `enum` members or `nullable`. Hand-written schemas in the same shape work
//! too.
//!
//! # Pipeline
//!
//! 1. [`generator`] builds a draft 2020-12 `schemars` generator that emits no
//!    `$schema` and no `null` alternatives for `Option<T>`.
//! 2. [`bridge`] normalises the root schema, following the rules below.
//! 3. [`input_schema`] makes sure the top level is an object, wrapping any
//!    other shape under a `value` property; [`unwrap_input`] undoes that
//!    wrapping on the arguments a host sends back.
//!
//! [`schema_for`] is steps 1 and 2 together. Schemas are meant to be computed
//! once per process and cached by the caller, so the code favours clarity
//! over speed; it does clone each definition once per place it is inlined,
//! which is the size of the output anyway.
//!
//! # Rules
//!
//! - The dialect is draft 2020-12, but no `$schema` key is left anywhere, and
//!   the root `title` (the Rust type name `schemars` puts there) is dropped.
//!   Titles further down are kept.
//! - Every `$ref` is inlined and no `$defs`/`definitions` are left, because
//!   several hosts do not resolve references. Keywords next to a `$ref`
//!   (`description`, `default`, …) are merged into the inlined schema and win
//!   over the definition's own annotations. A reference that would recurse
//!   into a definition being inlined cannot be inlined: the object property
//!   (or the `anyOf`/`oneOf` arm) whose schema contains it is dropped, and
//!   the property leaves `required`. When neither exists up to the root, the
//!   reference becomes `{}` (any value).
//! - Objects are left open: `additionalProperties: false` and
//!   `unevaluatedProperties: false` are removed (hosts reject or mangle
//!   arguments against closed objects); nothing closes an object.
//! - Integers are plain `{"type": "integer"}`: `format` is removed from
//!   integer and number schemas (`uint32`, `int64`, `double`, … mean nothing
//!   to hosts), while `minimum`/`maximum` stay.
//! - No `null`: a `"null"` member leaves a `type` array (a single remaining
//!   type becomes a string), a `{"type": "null"}` arm leaves `anyOf`/`oneOf`
//!   (a single remaining arm is folded into the schema around it), `null`
//!   leaves `enum`, and `nullable` goes. A property that accepted `null` is
//!   no longer `required`, so `Option<T>` fields are optional and typed as
//!   `T`; the host omits them instead of sending `null`.
//! - A lone `allOf` member (as draft 07 output wraps `$ref` siblings) is
//!   folded into the schema around it, for the hosts that reject `allOf`.
//! - `default` and `description` (from `#[serde(default)]` and doc comments)
//!   are kept, including across inlining.
//!
//! Folding one schema into another never loses a constraint: when both
//! carry the same validation keyword with different values, the inner schema
//! goes under `allOf` instead.

use schemars::generate::SchemaSettings;
use schemars::{JsonSchema, SchemaGenerator};
use serde_json::{Map, Value};
use std::fmt;

mod normalize;
pub mod profile;

use normalize::NoNullAlternatives;
#[cfg(test)]
use normalize::is_null_arm;
pub(crate) use normalize::percent_decode;

/// The property a non-object input travels under once wrapped.
const VALUE: &str = "value";

/// An input schema as advertised in `tools/list`, plus whether the real input
/// travels wrapped under `"value"`.
///
/// MCP requires a tool's input schema to describe an object, so inputs of any
/// other shape are advertised as `{"value": <input>}`; `wrapped` tells
/// [`unwrap_input`] to take them out again.
///
/// # Example
///
/// ```
/// use surface_runtime::schema::{InputSchema, input_schema};
///
/// let schema: InputSchema = input_schema::<u32>();
/// assert!(schema.wrapped);
/// assert_eq!(schema.schema["required"], serde_json::json!(["value"]));
/// ```
#[derive(Clone, Debug, PartialEq)]
pub struct InputSchema {
    /// The bridged schema, always with `"type": "object"` at the top.
    pub schema: Map<String, Value>,
    /// Whether the input is advertised under a `value` property.
    pub wrapped: bool,
    /// Whether a `null` property in the arguments means "left out" (a [`profile`] that makes
    /// optional fields nullable sets it): [`unwrap_input`] removes such properties.
    pub nulls_are_absent: bool,
}

/// The arguments a host sent do not fit the input schema.
///
/// # Example
///
/// ```
/// use surface_runtime::schema::{InputError, input_schema, unwrap_input};
///
/// let error: InputError = unwrap_input(&input_schema::<u32>(), None).unwrap_err();
/// assert_eq!(error.field, "value");
/// assert_eq!(error.to_string(), "argument `value`: missing required field");
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct InputError {
    /// The argument at fault, as named in the input schema.
    pub field: String,
    /// What is wrong with it.
    pub message: String,
}

impl fmt::Display for InputError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "argument `{}`: {}", self.field, self.message)
    }
}

impl std::error::Error for InputError {}

/// The `schemars` generator every schema of the crate comes from.
///
/// Draft 2020-12 settings, without the `$schema` key, and with `Option<T>`
/// described as `T`: `schemars` 1.x has no setting for that, so a transform
/// removes the `null` alternatives it adds.
///
/// # Example
///
/// ```
/// use surface_runtime::schema::generator;
///
/// let schema = generator().into_root_schema_for::<Option<u32>>();
/// assert_eq!(schema.get("type"), Some(&serde_json::json!("integer")));
/// assert_eq!(schema.get("$schema"), None);
/// ```
pub fn generator() -> SchemaGenerator {
    SchemaSettings::draft2020_12()
        .with(|settings| settings.meta_schema = None)
        .with_transform(NoNullAlternatives)
        .into_generator()
}

/// The bridged schema of `T`: [`generator`] output passed through [`bridge`].
///
/// # Example
///
/// ```
/// use serde_json::json;
/// use surface_runtime::schema::schema_for;
///
/// #[derive(schemars::JsonSchema)]
/// struct Kill {
///     pid: u32,
/// }
///
/// assert_eq!(
///     schema_for::<Kill>(),
///     json!({
///         "type": "object",
///         "properties": { "pid": { "type": "integer", "minimum": 0 } },
///         "required": ["pid"]
///     })
/// );
/// ```
pub fn schema_for<T: JsonSchema>() -> Value {
    bridge(generator().into_root_schema_for::<T>().to_value())
}

/// Normalises a root schema as `schemars` emits it (definitions included)
/// into the shape MCP hosts read; see the module documentation for the rules.
///
/// # Example
///
/// ```
/// use serde_json::json;
/// use surface_runtime::schema::bridge;
///
/// let raw = json!({
///     "$schema": "https://json-schema.org/draft/2020-12/schema",
///     "title": "Count",
///     "type": "object",
///     "properties": { "state": { "$ref": "#/$defs/State" } },
///     "required": ["state"],
///     "$defs": { "State": { "type": ["string", "null"] } }
/// });
/// assert_eq!(
///     bridge(raw),
///     json!({ "type": "object", "properties": { "state": { "type": "string" } } })
/// );
/// ```
pub fn bridge(raw: Value) -> Value {
    normalize::normalize(raw)
}

/// The input schema of `T` for `tools/list`: [`schema_for`], wrapped under a
/// required `value` property unless it already has `"type": "object"` at the
/// top (scalars, arrays, enums and unions get wrapped).
///
/// # Example
///
/// ```
/// use serde_json::json;
/// use surface_runtime::schema::input_schema;
///
/// let schema = input_schema::<Vec<String>>();
/// assert!(schema.wrapped);
/// assert_eq!(
///     serde_json::Value::Object(schema.schema),
///     json!({
///         "type": "object",
///         "properties": { "value": { "type": "array", "items": { "type": "string" } } },
///         "required": ["value"]
///     })
/// );
/// ```
pub fn input_schema<T: JsonSchema>() -> InputSchema {
    wrap_input(schema_for::<T>())
}

/// The advertised input schema for an already bridged schema: an object schema as it is,
/// anything else wrapped under `value` (see [`input_schema`]).
///
/// ```
/// use surface_runtime::schema::wrap_input;
/// let wrapped = wrap_input(serde_json::json!({"type": "integer"}));
/// assert!(wrapped.wrapped);
/// assert_eq!(wrapped.schema["required"], serde_json::json!(["value"]));
/// ```
pub fn wrap_input(bridged: Value) -> InputSchema {
    match bridged {
        Value::Object(schema) if schema.get("type").and_then(Value::as_str) == Some("object") => {
            InputSchema {
                schema,
                wrapped: false,
                nulls_are_absent: false,
            }
        }
        other => {
            let mut properties = Map::new();
            properties.insert(VALUE.to_owned(), other);
            let mut schema = Map::new();
            schema.insert("type".to_owned(), "object".into());
            schema.insert("properties".to_owned(), Value::Object(properties));
            schema.insert("required".to_owned(), Value::Array(vec![VALUE.into()]));
            InputSchema {
                schema,
                wrapped: true,
                nulls_are_absent: false,
            }
        }
    }
}

/// Removes every object property whose value is `null`, at any depth: under a profile that
/// sends `null` for "left out", so that decoding sees the field absent.
fn drop_nulls(value: &mut Value) {
    match value {
        Value::Object(map) => {
            map.retain(|_, v| !v.is_null());
            map.values_mut().for_each(drop_nulls);
        }
        Value::Array(items) => items.iter_mut().for_each(drop_nulls),
        _ => {}
    }
}

/// The names an object schema lists under `required` (none when it lists nothing).
pub(crate) fn required_names(node: &Map<String, Value>) -> Vec<&str> {
    node.get("required")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(Value::as_str)
        .collect()
}

/// The input schema of a tool that takes no input: exactly
/// `{"type": "object", "properties": {}}`, not wrapped.
///
/// # Example
///
/// ```
/// use serde_json::json;
/// use surface_runtime::schema::no_input_schema;
///
/// let schema = no_input_schema();
/// assert!(!schema.wrapped);
/// assert_eq!(
///     serde_json::Value::Object(schema.schema),
///     json!({ "type": "object", "properties": {} })
/// );
/// ```
pub fn no_input_schema() -> InputSchema {
    let mut schema = Map::new();
    schema.insert("type".to_owned(), "object".into());
    schema.insert("properties".to_owned(), Value::Object(Map::new()));
    InputSchema {
        schema,
        wrapped: false,
        nulls_are_absent: false,
    }
}

/// The input a tool receives, from the `arguments` a host sent for `schema`.
///
/// A wrapped input is `arguments["value"]`, which must be there. Otherwise
/// the input is the arguments object itself, `{}` when the host sent none.
/// Deserialising the result into the tool's type is left to the caller.
///
/// # Example
///
/// ```
/// use serde_json::{Map, json};
/// use surface_runtime::schema::{input_schema, no_input_schema, unwrap_input};
///
/// let mut arguments = Map::new();
/// arguments.insert("value".to_owned(), json!(7));
/// assert_eq!(unwrap_input(&input_schema::<u32>(), Some(arguments)), Ok(json!(7)));
/// assert_eq!(unwrap_input(&no_input_schema(), None), Ok(json!({})));
/// ```
pub fn unwrap_input(schema: &InputSchema, args: Option<Map<String, Value>>) -> Result<Value, InputError> {
    let mut input = if !schema.wrapped {
        Value::Object(args.unwrap_or_default())
    } else {
        args.and_then(|mut args| args.remove(VALUE))
            .ok_or_else(|| InputError {
                field: VALUE.to_owned(),
                message: "missing required field".to_owned(),
            })?
    };
    if schema.nulls_are_absent {
        drop_nulls(&mut input);
    }
    Ok(input)
}

#[cfg(test)]
mod tests;
