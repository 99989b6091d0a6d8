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
use schemars::transform::{Transform, transform_subschemas};
use schemars::{JsonSchema, Schema, SchemaGenerator};
use serde_json::{Map, Value};
use std::fmt;

pub mod profile;

/// The property a non-object input travels under once wrapped.
const VALUE: &str = "value";

/// Where `schemars` keeps definitions: `$defs` for draft 2020-12 and
/// 2019-09, `definitions` for draft 07.
const SECTIONS: [&str; 2] = ["$defs", "definitions"];

/// Keywords that only annotate a schema: when two schemas are folded into
/// one, the outer value wins (a field's doc comment over its type's).
const ANNOTATIONS: [&str; 8] = [
    "$comment",
    "default",
    "deprecated",
    "description",
    "examples",
    "readOnly",
    "title",
    "writeOnly",
];

/// Keywords holding exactly one subschema.
const SINGLE_SUBSCHEMAS: [&str; 10] = [
    "additionalProperties",
    "contains",
    "contentSchema",
    "else",
    "if",
    "not",
    "propertyNames",
    "then",
    "unevaluatedItems",
    "unevaluatedProperties",
];

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
    let mut root = raw;
    let definitions = match &mut root {
        Value::Object(node) => SECTIONS
            .into_iter()
            .filter_map(|section| match node.remove(section) {
                Some(Value::Object(entries)) => Some((section, entries)),
                _ => None,
            })
            .collect(),
        _ => Vec::new(),
    };
    let mut inliner = Inliner {
        definitions,
        stack: vec![Target::Root],
    };
    // There is nothing above the root to drop, so a recursion reaching it
    // stays as the `{}` left where the reference was.
    inliner.walk(&mut root);
    if let Value::Object(node) = &mut root {
        node.remove("title");
    }
    root
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
        profile::drop_nulls(&mut input);
    }
    Ok(input)
}

/// The generator transform behind "`Option<T>` adds no `null`".
#[derive(Clone, Debug)]
struct NoNullAlternatives;

impl Transform for NoNullAlternatives {
    fn transform(&mut self, schema: &mut Schema) {
        if let Some(node) = schema.as_object_mut() {
            strip_null(node);
        }
        transform_subschemas(self, schema);
    }
}

/// What a local `$ref` points at.
#[derive(Debug, PartialEq)]
enum Target {
    /// `#`: `schemars` refers to the root type this way when it recurses.
    Root,
    /// `#/<section>/<name>`, with the name unescaped.
    Definition(&'static str, String),
}

/// What walking a schema found out, for the schema holding it.
#[derive(Clone, Copy, Debug, Default)]
struct Walked {
    /// The schema contains a reference that recurses, left as a hole: the
    /// nearest property or union arm holding it should be dropped.
    recursive: bool,
    /// The schema accepted `null` before it was stripped: as a property it
    /// should not stay `required`.
    nullable: bool,
}

/// Inlines references while normalising, keeping track of the definitions
/// being inlined to spot recursion.
struct Inliner {
    definitions: Vec<(&'static str, Map<String, Value>)>,
    stack: Vec<Target>,
}

impl Inliner {
    /// Normalises one schema in place, its subschemas included.
    fn walk(&mut self, schema: &mut Value) -> Walked {
        // Boolean schemas have nothing to normalise.
        let Value::Object(node) = schema else {
            return Walked::default();
        };
        node.remove("$schema");
        for section in SECTIONS {
            // Only the root's definitions are reachable by our references.
            node.remove(section);
        }
        // Simplified before descending, so that whatever gets folded in is
        // walked like the rest of the node. A lone `allOf` member is how
        // draft 07 output carries `$ref` siblings, and some hosts reject
        // `allOf`.
        fold_lone_member(node, "allOf");
        let nullable = strip_null(node);
        let mut walked = Walked {
            recursive: self.walk_subschemas(node),
            nullable,
        };
        if let Some(reference) = node.remove("$ref") {
            let inlined = self.inline(&reference, node);
            walked.recursive |= inlined.recursive;
            walked.nullable |= inlined.nullable;
        }
        // After inlining, which may have brought in the `type` these need.
        open_object(node);
        drop_numeric_format(node);
        walked
    }

    /// Walks every subschema of `node`, dropping the properties and union
    /// arms that recurse; returns whether a recursion must go further up.
    fn walk_subschemas(&mut self, node: &mut Map<String, Value>) -> bool {
        let mut recursive = false;
        for key in SINGLE_SUBSCHEMAS {
            if let Some(subschema) = node.get_mut(key) {
                recursive |= self.walk(subschema).recursive;
            }
        }
        for key in ["items", "prefixItems", "allOf"] {
            match node.get_mut(key) {
                // `items` is an array only in draft 07 tuples.
                Some(Value::Array(subschemas)) => {
                    for subschema in subschemas {
                        recursive |= self.walk(subschema).recursive;
                    }
                }
                Some(subschema) => recursive |= self.walk(subschema).recursive,
                None => {}
            }
        }
        for key in ["patternProperties", "dependentSchemas"] {
            if let Some(Value::Object(entries)) = node.get_mut(key) {
                let dropped = self.walk_entries(entries).0;
                entries.retain(|name, _| !dropped.contains(name));
            }
        }
        if let Some(Value::Object(properties)) = node.get_mut("properties") {
            let (dropped, nullable) = self.walk_entries(properties);
            properties.retain(|name, _| !dropped.contains(name));
            unrequire(node, &dropped);
            unrequire(node, &nullable);
        }
        for key in ["anyOf", "oneOf"] {
            recursive |= self.walk_union(node, key);
        }
        recursive
    }

    /// Walks the subschemas of a name-to-schema map; returns the names that
    /// recurse and the names that accepted `null`.
    fn walk_entries(&mut self, entries: &mut Map<String, Value>) -> (Vec<String>, Vec<String>) {
        let mut recursive = Vec::new();
        let mut nullable = Vec::new();
        for (name, subschema) in entries.iter_mut() {
            let walked = self.walk(subschema);
            if walked.recursive {
                recursive.push(name.clone());
            } else if walked.nullable {
                nullable.push(name.clone());
            }
        }
        (recursive, nullable)
    }

    /// Walks the arms of `node[key]`, dropping those that recurse. Only when
    /// every arm recurses does the recursion go further up: dropping them
    /// all would leave a union nothing matches.
    fn walk_union(&mut self, node: &mut Map<String, Value>, key: &str) -> bool {
        let Some(Value::Array(arms)) = node.get_mut(key) else {
            return false;
        };
        let recursive: Vec<bool> = arms.iter_mut().map(|arm| self.walk(arm).recursive).collect();
        if !recursive.contains(&true) {
            return false;
        }
        if !recursive.contains(&false) {
            return true;
        }
        let mut flags = recursive.into_iter();
        arms.retain(|_| !flags.next().unwrap_or(false));
        fold_lone_member(node, key);
        false
    }

    /// Replaces the `$ref` just taken out of `node` by the schema it points
    /// at, normalised, with `node`'s own keywords kept on top.
    fn inline(&mut self, reference: &Value, node: &mut Map<String, Value>) -> Walked {
        let Some(target) = reference.as_str().and_then(parse_ref) else {
            // Not a local reference: nothing to inline, and a `$ref` left
            // behind would break hosts, so the node stays as loose as its
            // other keywords make it.
            return Walked::default();
        };
        if self.stack.contains(&target) {
            // Inlining would never end. `node` is left as a hole, and the
            // caller drops what holds it.
            return Walked {
                recursive: true,
                nullable: false,
            };
        }
        let found = match &target {
            // Unreachable: the root is always on the stack.
            Target::Root => None,
            Target::Definition(section, name) => self
                .definitions
                .iter()
                .find(|(found, _)| found == section)
                .and_then(|(_, entries)| entries.get(name)),
        };
        // One clone of this one definition per use, never of them all.
        let Some(mut definition) = found.cloned() else {
            // A dangling reference: treated like a non-local one.
            return Walked::default();
        };
        self.stack.push(target);
        let walked = self.walk(&mut definition);
        self.stack.pop();
        fold_into(node, definition);
        walked
    }
}

/// Reads a local reference: `#`, `#/$defs/Name` or `#/definitions/Name`.
fn parse_ref(reference: &str) -> Option<Target> {
    let pointer = reference.strip_prefix('#')?;
    if pointer.is_empty() {
        return Some(Target::Root);
    }
    SECTIONS.into_iter().find_map(|section| {
        let name = pointer
            .strip_prefix('/')?
            .strip_prefix(section)?
            .strip_prefix('/')?;
        // A deeper pointer (into a definition) is not something `schemars`
        // emits; it is left unresolved.
        if name.contains('/') {
            return None;
        }
        // URI fragment decoding first, then JSON pointer unescaping
        // (RFC 6901: `~1` before `~0`).
        let name = percent_decode(name)?.replace("~1", "/").replace("~0", "~");
        Some(Target::Definition(section, name))
    })
}

/// Decodes `%XX` escapes; `None` if the result is not UTF-8. A `%` not
/// followed by two hex digits stays as it is.
pub(crate) fn percent_decode(text: &str) -> Option<String> {
    let bytes = text.as_bytes();
    let mut decoded = Vec::with_capacity(bytes.len());
    let mut index = 0;
    while index < bytes.len() {
        if let Some(&[b'%', high, low]) = bytes.get(index..index + 3) {
            let digit = |byte: u8| char::from(byte).to_digit(16);
            if let (Some(high), Some(low)) = (digit(high), digit(low)) {
                // Two hex digits make at most 255.
                decoded.push((high * 16 + low) as u8);
                index += 3;
                continue;
            }
        }
        decoded.push(bytes[index]);
        index += 1;
    }
    String::from_utf8(decoded).ok()
}

/// Removes the `null` alternatives of `node` itself (not of its subschemas);
/// returns whether there were any.
fn strip_null(node: &mut Map<String, Value>) -> bool {
    let mut stripped = node.remove("nullable") == Some(Value::Bool(true));
    // Folding an arm in may bring another null alternative along
    // (`Option<Option<T>>` written by hand), hence the loop.
    loop {
        let mut changed = false;
        if let Some(Value::Array(types)) = node.get_mut("type")
            && types.len() > 1
            && types.iter().any(|t| t == "null")
        {
            types.retain(|t| t != "null");
            changed = true;
            if let [only] = types.as_mut_slice() {
                let only = only.take();
                node.insert("type".to_owned(), only);
            }
        }
        if let Some(Value::Array(members)) = node.get_mut("enum")
            && members.len() > 1
            && members.contains(&Value::Null)
        {
            members.retain(|member| !member.is_null());
            changed = true;
        }
        for key in ["anyOf", "oneOf"] {
            let Some(Value::Array(arms)) = node.get_mut(key) else {
                continue;
            };
            if arms.len() < 2 || !arms.iter().any(is_null_arm) {
                continue;
            }
            arms.retain(|arm| !is_null_arm(arm));
            changed = true;
            fold_lone_member(node, key);
        }
        if !changed {
            return stripped;
        }
        stripped = true;
    }
}

/// Whether a union arm is the `{"type": "null"}` that `Option<T>` adds.
fn is_null_arm(arm: &Value) -> bool {
    arm.get("type").and_then(Value::as_str) == Some("null")
}

/// Folds the only member of `node[key]` (`allOf`, `anyOf` or `oneOf`) into
/// `node`, if it has exactly one: the keyword then adds nothing but nesting.
fn fold_lone_member(node: &mut Map<String, Value>, key: &str) {
    if matches!(node.get(key), Some(Value::Array(members)) if members.len() == 1)
        && let Some(Value::Array(mut members)) = node.remove(key)
        && let Some(member) = members.pop()
    {
        fold_into(node, member);
    }
}

/// Merges `inner` (an inlined definition, or the one arm left of a union)
/// into `node`. `node`'s annotations win; if a validation keyword appears in
/// both with different values, `inner` goes under `node`'s `allOf` whole so
/// that neither constraint is lost.
fn fold_into(node: &mut Map<String, Value>, inner: Value) {
    let inner = match inner {
        Value::Object(inner) => inner,
        // `true` allows everything: nothing to add.
        Value::Bool(true) => return,
        // `false` allows nothing; `not: {}` says the same as a keyword.
        Value::Bool(false) => {
            node.insert("not".to_owned(), Value::Object(Map::new()));
            return;
        }
        // Not a schema; keep it visible rather than silently dropping it.
        other => {
            push_all_of(node, other);
            return;
        }
    };
    let conflicts = inner.iter().any(|(key, value)| {
        !ANNOTATIONS.contains(&key.as_str()) && node.get(key).is_some_and(|mine| mine != value)
    });
    if conflicts {
        push_all_of(node, Value::Object(inner));
        return;
    }
    for (key, value) in inner {
        node.entry(key).or_insert(value);
    }
}

/// Adds `subschema` to `node`'s `allOf`, creating it if needed.
fn push_all_of(node: &mut Map<String, Value>, subschema: Value) {
    match node.get_mut("allOf") {
        Some(Value::Array(members)) => members.push(subschema),
        _ => {
            node.insert("allOf".to_owned(), Value::Array(vec![subschema]));
        }
    }
}

/// Removes `names` from `node`'s `required`, and `required` itself if that
/// empties it.
fn unrequire(node: &mut Map<String, Value>, names: &[String]) {
    if names.is_empty() {
        return;
    }
    if let Some(Value::Array(required)) = node.get_mut("required") {
        required.retain(|name| !name.as_str().is_some_and(|name| names.iter().any(|n| n == name)));
        if required.is_empty() {
            node.remove("required");
        }
    }
}

/// Leaves the object open: hosts add or reorder keys, and a closed object
/// turns that into a failed call.
fn open_object(node: &mut Map<String, Value>) {
    for key in ["additionalProperties", "unevaluatedProperties"] {
        if node.get(key) == Some(&Value::Bool(false)) {
            node.remove(key);
        }
    }
}

/// Removes `format` from integer and number schemas: `uint32`, `int64`,
/// `double`, … are `schemars` vocabulary that hosts do not know, and some
/// reject. `minimum`/`maximum` already carry the range.
fn drop_numeric_format(node: &mut Map<String, Value>) {
    let numeric = |t: &Value| matches!(t.as_str(), Some("integer" | "number"));
    let is_numeric = match node.get("type") {
        Some(Value::Array(types)) => !types.is_empty() && types.iter().all(numeric),
        Some(single) => numeric(single),
        None => false,
    };
    if is_numeric {
        node.remove("format");
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use schemars::JsonSchema;
    use serde::{Deserialize, Serialize};
    use serde_json::json;
    use std::collections::BTreeMap;
    use std::path::PathBuf;

    // The test types exist for their schemas; most fields are never read.

    /// Input of proc.spawn.
    #[derive(JsonSchema, Deserialize)]
    #[allow(dead_code)]
    struct Spawn {
        /// Name of the new process.
        name: String,
    }

    #[derive(JsonSchema, Deserialize)]
    #[allow(dead_code)]
    struct Kill {
        pid: u32,
    }

    #[derive(JsonSchema, Deserialize)]
    #[allow(dead_code)]
    struct Count {
        state: Option<String>,
    }

    #[derive(JsonSchema, Deserialize)]
    #[allow(dead_code)]
    struct Node {
        name: String,
        children: Vec<Node>,
        parent: Option<Box<Node>>,
    }

    /// Resource limits.
    #[derive(JsonSchema, Deserialize, Serialize)]
    #[serde(deny_unknown_fields)]
    #[allow(dead_code)]
    struct Limits {
        /// CPU share, in percent.
        cpu: u32,
        /// Memory, in bytes.
        memory: u64,
    }

    impl Default for Limits {
        fn default() -> Self {
            Limits {
                cpu: 100,
                memory: 1 << 30,
            }
        }
    }

    fn three() -> u8 {
        3
    }

    /// Settings of a job.
    #[derive(JsonSchema, Deserialize, Serialize)]
    #[allow(dead_code)]
    struct Defaults {
        /// How often to retry.
        #[serde(default = "three")]
        retries: u8,
        /// Whether to log every step.
        #[serde(default)]
        verbose: bool,
        /// Limits the job starts with.
        #[serde(default)]
        soft: Limits,
        /// Limits the job may never pass.
        hard: Limits,
        /// Seconds before giving up.
        timeout: Option<f64>,
    }

    /// How fast to go.
    #[derive(JsonSchema, Deserialize, Debug, PartialEq)]
    enum Mode {
        Fast,
        Slow,
    }

    /// Whom to signal.
    #[derive(JsonSchema, Deserialize, Debug, PartialEq)]
    #[serde(tag = "kind", rename_all = "snake_case")]
    enum Target {
        /// One process.
        Process { pid: u32 },
        /// Every process of a group.
        Group { name: String },
    }

    /// A process, by id or by name.
    #[derive(JsonSchema, Deserialize)]
    #[serde(untagged)]
    #[allow(dead_code)]
    enum Selector {
        Id(u32),
        Name { name: String },
    }

    #[derive(JsonSchema, Deserialize)]
    #[allow(dead_code)]
    struct Tree {
        root: Branch,
    }

    /// Recursion through two types: `Branch` → `Leaf` → `Branch`.
    #[derive(JsonSchema, Deserialize)]
    #[allow(dead_code)]
    struct Branch {
        label: String,
        leaf: Option<Leaf>,
    }

    #[derive(JsonSchema, Deserialize)]
    #[allow(dead_code)]
    struct Leaf {
        weight: i64,
        branches: Vec<Branch>,
    }

    #[derive(JsonSchema, Deserialize)]
    #[serde(untagged)]
    #[allow(dead_code)]
    enum Expr {
        Literal(u32),
        Sum(Box<Expr>, Box<Expr>),
        Nothing,
    }

    #[derive(JsonSchema, Deserialize)]
    #[allow(dead_code)]
    struct Forest(Vec<Forest>);

    #[derive(JsonSchema, Deserialize)]
    #[allow(dead_code)]
    struct Numbers {
        small: u8,
        count: usize,
        offset: i64,
        ratio: f64,
        share: f32,
    }

    #[derive(JsonSchema, Deserialize)]
    #[allow(dead_code)]
    struct Optionals {
        mode: Option<Mode>,
        target: Option<Target>,
        limits: Option<Limits>,
        tags: Option<Vec<String>>,
    }

    /// Path of a golden file, in the crate's `tests/golden/`.
    fn golden_path(name: &str) -> PathBuf {
        PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/tests/golden")).join(name)
    }

    /// A copy with every object's keys sorted, so that the text of a golden
    /// does not depend on serde_json's `preserve_order` feature.
    fn sorted(value: &Value) -> Value {
        match value {
            Value::Object(map) => {
                let mut entries: Vec<_> = map.iter().collect();
                entries.sort_by(|a, b| a.0.cmp(b.0));
                Value::Object(
                    entries
                        .into_iter()
                        .map(|(key, value)| (key.clone(), sorted(value)))
                        .collect(),
                )
            }
            Value::Array(items) => Value::Array(items.iter().map(sorted).collect()),
            other => other.clone(),
        }
    }

    /// Compares `actual` with `tests/golden/<name>`, both as values and as
    /// pretty text ending in a newline; with `SURFACE_BLESS=1`, rewrites the
    /// golden instead.
    fn golden(name: &str, actual: &Value) {
        let path = golden_path(name);
        let text = format!("{}\n", serde_json::to_string_pretty(&sorted(actual)).unwrap());
        if std::env::var_os("SURFACE_BLESS").is_some_and(|bless| bless == "1") {
            std::fs::create_dir_all(path.parent().unwrap()).unwrap();
            std::fs::write(&path, text).unwrap();
            return;
        }
        let expected = std::fs::read_to_string(&path)
            .unwrap_or_else(|error| panic!("{}: {error} (SURFACE_BLESS=1 creates it)", path.display()));
        let expected_value: Value = serde_json::from_str(&expected).unwrap();
        assert_eq!(
            &expected_value, actual,
            "{name} differs (SURFACE_BLESS=1 accepts the new schema)"
        );
        assert_eq!(expected, text, "{name}: same schema, different text");
    }

    /// Checks the rules that hold everywhere in a bridged schema.
    fn assert_bridged(schema: &Value) {
        fn check(value: &Value, at: &str) {
            match value {
                Value::Object(node) => {
                    for key in ["$ref", "$defs", "definitions", "$schema", "nullable"] {
                        assert!(!node.contains_key(key), "{key} at {at}");
                    }
                    for key in ["additionalProperties", "unevaluatedProperties"] {
                        assert_ne!(node.get(key), Some(&json!(false)), "closed at {at}");
                    }
                    if let Some(Value::Array(types)) = node.get("type") {
                        assert!(!types.contains(&json!("null")), "null type at {at}");
                    }
                    for key in ["anyOf", "oneOf"] {
                        if let Some(Value::Array(arms)) = node.get(key) {
                            assert!(!arms.iter().any(is_null_arm), "null arm at {at}");
                        }
                    }
                    for (key, value) in node {
                        check(value, &format!("{at}/{key}"));
                    }
                }
                Value::Array(items) => {
                    for (index, item) in items.iter().enumerate() {
                        check(item, &format!("{at}/{index}"));
                    }
                }
                _ => {}
            }
        }
        check(schema, "#");
    }

    fn object(value: Value) -> Map<String, Value> {
        match value {
            Value::Object(map) => map,
            other => panic!("not an object: {other}"),
        }
    }

    // Golden files.

    #[test]
    fn golden_spawn_input() {
        let schema = input_schema::<Spawn>();
        assert!(!schema.wrapped);
        golden("spawn_input.json", &Value::Object(schema.schema));
    }

    #[test]
    fn golden_kill_input() {
        let schema = input_schema::<Kill>();
        assert!(!schema.wrapped);
        golden("kill_input.json", &Value::Object(schema.schema));
    }

    #[test]
    fn golden_count_input() {
        let schema = input_schema::<Count>();
        assert!(!schema.wrapped);
        golden("count_input.json", &Value::Object(schema.schema));
    }

    #[test]
    fn golden_recursive() {
        golden("recursive.json", &schema_for::<Node>());
    }

    #[test]
    fn golden_defaults() {
        golden("defaults.json", &schema_for::<Defaults>());
    }

    #[test]
    fn golden_wrapped_scalar() {
        let schema = input_schema::<u32>();
        assert!(schema.wrapped);
        golden("wrapped_scalar.json", &Value::Object(schema.schema));
    }

    #[test]
    fn golden_wrapped_enum() {
        let schema = input_schema::<Mode>();
        assert!(schema.wrapped);
        golden("wrapped_enum.json", &Value::Object(schema.schema));
    }

    #[test]
    fn golden_wrapped_tagged_union() {
        let schema = input_schema::<Target>();
        assert!(schema.wrapped);
        golden("wrapped_tagged.json", &Value::Object(schema.schema));
    }

    #[test]
    fn golden_wrapped_untagged_union() {
        let schema = input_schema::<Selector>();
        assert!(schema.wrapped);
        golden("wrapped_untagged.json", &Value::Object(schema.schema));
    }

    #[test]
    fn golden_no_input() {
        golden("no_input.json", &Value::Object(no_input_schema().schema));
    }

    #[test]
    fn every_test_schema_follows_the_global_rules() {
        for schema in [
            schema_for::<Spawn>(),
            schema_for::<Kill>(),
            schema_for::<Count>(),
            schema_for::<Node>(),
            schema_for::<Defaults>(),
            schema_for::<Mode>(),
            schema_for::<Target>(),
            schema_for::<Selector>(),
            schema_for::<Tree>(),
            schema_for::<Expr>(),
            schema_for::<Forest>(),
            schema_for::<Numbers>(),
            schema_for::<Optionals>(),
        ] {
            assert_bridged(&schema);
        }
    }

    #[test]
    fn bridge_is_idempotent() {
        for schema in [
            schema_for::<Defaults>(),
            schema_for::<Node>(),
            schema_for::<Optionals>(),
            schema_for::<Target>(),
        ] {
            assert_eq!(bridge(schema.clone()), schema);
        }
    }

    // Generator.

    #[test]
    fn generator_is_draft_2020_12_without_schema_key_or_nulls() {
        let raw = generator().into_root_schema_for::<Optionals>().to_value();
        assert!(raw.get("$schema").is_none());
        assert!(raw.get("$defs").is_some(), "2020-12 keeps definitions in $defs");
        let text = raw.to_string();
        assert!(!text.contains("null"), "{text}");
        assert_eq!(raw["properties"]["mode"], json!({ "$ref": "#/$defs/Mode" }));
    }

    // Dialect and titles.

    #[test]
    fn schema_key_is_removed_everywhere() {
        // `schema_for!` uses schemars' default settings, which write `$schema`.
        let raw = schemars::schema_for!(Kill).to_value();
        assert!(raw.get("$schema").is_some());
        let mut raw = raw;
        raw["properties"]["pid"]["$schema"] = json!("https://json-schema.org/draft/2020-12/schema");
        let bridged = bridge(raw);
        assert_bridged(&bridged);
        assert_eq!(bridged, schema_for::<Kill>());
    }

    #[test]
    fn root_title_is_dropped_and_inner_titles_kept() {
        let raw = json!({
            "title": "Spawn",
            "type": "object",
            "properties": { "name": { "title": "Name", "type": "string" } }
        });
        assert_eq!(
            bridge(raw),
            json!({
                "type": "object",
                "properties": { "name": { "title": "Name", "type": "string" } }
            })
        );
        assert!(schema_for::<Spawn>().get("title").is_none());
    }

    // References.

    #[test]
    fn refs_are_inlined_and_defs_removed() {
        let bridged = schema_for::<Defaults>();
        assert_bridged(&bridged);
        assert_eq!(
            bridged["properties"]["hard"]["properties"]["cpu"],
            json!({
                "description": "CPU share, in percent.",
                "type": "integer",
                "minimum": 0
            })
        );
    }

    #[test]
    fn draft_07_definitions_are_inlined_too() {
        // Draft 07 keeps definitions under `definitions` and wraps `$ref`
        // siblings in a one-member `allOf`.
        let raw = SchemaSettings::draft07()
            .into_generator()
            .into_root_schema_for::<Defaults>()
            .to_value();
        assert!(raw.get("definitions").is_some());
        assert!(raw["properties"]["soft"].get("allOf").is_some());
        assert_eq!(bridge(raw), schema_for::<Defaults>());
    }

    #[test]
    fn ref_siblings_are_merged_and_win_over_the_definition() {
        let raw = json!({
            "type": "object",
            "properties": {
                "limits": {
                    "$ref": "#/$defs/Limits",
                    "description": "Field doc.",
                    "default": { "cpu": 1 }
                }
            },
            "$defs": {
                "Limits": {
                    "description": "Type doc.",
                    "type": "object",
                    "properties": { "cpu": { "type": "integer" } }
                }
            }
        });
        assert_eq!(
            bridge(raw)["properties"]["limits"],
            json!({
                "description": "Field doc.",
                "default": { "cpu": 1 },
                "type": "object",
                "properties": { "cpu": { "type": "integer" } }
            })
        );
    }

    #[test]
    fn conflicting_ref_siblings_keep_both_constraints() {
        let raw = json!({
            "$ref": "#/$defs/Small",
            "maximum": 5,
            "$defs": { "Small": { "type": "integer", "maximum": 10 } }
        });
        assert_eq!(
            bridge(raw),
            json!({ "maximum": 5, "allOf": [{ "type": "integer", "maximum": 10 }] })
        );
    }

    #[test]
    fn escaped_ref_names_are_resolved() {
        let raw = json!({
            "type": "object",
            "properties": {
                "a": { "$ref": "#/$defs/Map~1Key~0s" },
                "b": { "$ref": "#/$defs/With%20Space" }
            },
            "$defs": {
                "Map/Key~s": { "type": "string" },
                "With Space": { "type": "boolean" }
            }
        });
        assert_eq!(
            bridge(raw)["properties"],
            json!({ "a": { "type": "string" }, "b": { "type": "boolean" } })
        );
    }

    #[test]
    fn unresolvable_refs_are_dropped() {
        let raw = json!({
            "type": "object",
            "properties": {
                "remote": { "$ref": "https://example.com/schema", "description": "Remote." },
                "missing": { "$ref": "#/$defs/Missing" }
            }
        });
        assert_eq!(
            bridge(raw)["properties"],
            json!({ "remote": { "description": "Remote." }, "missing": {} })
        );
    }

    #[test]
    fn shared_definition_is_inlined_at_each_use() {
        let bridged = schema_for::<Defaults>();
        let soft = &bridged["properties"]["soft"];
        let hard = &bridged["properties"]["hard"];
        assert_eq!(soft["properties"], hard["properties"]);
        assert_eq!(soft["description"], json!("Limits the job starts with."));
        assert_eq!(hard["description"], json!("Limits the job may never pass."));
    }

    // Recursion.

    #[test]
    fn direct_recursion_drops_the_property_and_its_requirement() {
        assert_eq!(
            schema_for::<Node>(),
            json!({
                "type": "object",
                "properties": { "name": { "type": "string" } },
                "required": ["name"]
            })
        );
    }

    #[test]
    fn indirect_recursion_drops_the_innermost_recursing_property() {
        let bridged = schema_for::<Tree>();
        assert_bridged(&bridged);
        let leaf = &bridged["properties"]["root"]["properties"]["leaf"];
        assert_eq!(
            leaf,
            &json!({
                "type": "object",
                "properties": { "weight": { "type": "integer" } },
                "required": ["weight"]
            })
        );
    }

    #[test]
    fn recursion_drops_the_union_arm_holding_it() {
        // `Sum` recurses; `Nothing` is the null arm. Only `Literal` is left.
        assert_eq!(schema_for::<Expr>(), json!({ "type": "integer", "minimum": 0 }));
    }

    #[test]
    fn recursion_with_nothing_to_drop_leaves_any_value() {
        assert_eq!(schema_for::<Forest>(), json!({ "type": "array", "items": {} }));
    }

    #[test]
    fn required_emptied_by_recursion_is_removed() {
        let raw = json!({
            "type": "object",
            "properties": { "me": { "$ref": "#" } },
            "required": ["me"]
        });
        assert_eq!(bridge(raw), json!({ "type": "object", "properties": {} }));
    }

    // Open objects.

    #[test]
    fn objects_are_left_open() {
        let raw = generator().into_root_schema_for::<Limits>().to_value();
        assert_eq!(raw["additionalProperties"], json!(false));
        let bridged = schema_for::<Limits>();
        assert!(bridged.get("additionalProperties").is_none());
        let raw = json!({
            "type": "object",
            "properties": { "inner": { "type": "object", "unevaluatedProperties": false } },
            "additionalProperties": { "type": "object", "additionalProperties": false }
        });
        assert_eq!(
            bridge(raw),
            json!({
                "type": "object",
                "properties": { "inner": { "type": "object" } },
                "additionalProperties": { "type": "object" }
            })
        );
    }

    #[test]
    fn maps_stay_open_with_their_value_schema() {
        let schema = input_schema::<BTreeMap<String, u32>>();
        assert!(!schema.wrapped);
        assert_eq!(
            Value::Object(schema.schema),
            json!({
                "type": "object",
                "additionalProperties": { "type": "integer", "minimum": 0 }
            })
        );
    }

    // Numbers.

    #[test]
    fn numeric_formats_are_removed_and_ranges_kept() {
        assert_eq!(
            schema_for::<Numbers>()["properties"],
            json!({
                "small": { "type": "integer", "minimum": 0, "maximum": 255 },
                "count": { "type": "integer", "minimum": 0 },
                "offset": { "type": "integer" },
                "ratio": { "type": "number" },
                "share": { "type": "number" }
            })
        );
    }

    #[test]
    fn string_formats_are_kept() {
        let raw = json!({ "type": "string", "format": "date-time" });
        assert_eq!(bridge(raw.clone()), raw);
    }

    // Nulls and options.

    #[test]
    fn option_fields_are_optional_and_typed_as_their_inner_type() {
        let bridged = schema_for::<Optionals>();
        assert_bridged(&bridged);
        assert!(bridged.get("required").is_none());
        let properties = &bridged["properties"];
        assert_eq!(
            properties["mode"],
            json!({
                "description": "How fast to go.",
                "type": "string",
                "enum": ["Fast", "Slow"]
            })
        );
        assert_eq!(
            properties["tags"],
            json!({ "type": "array", "items": { "type": "string" } })
        );
        assert!(properties["target"]["oneOf"].is_array());
        assert!(properties["limits"]["properties"].is_object());
    }

    #[test]
    fn null_members_leave_type_arrays() {
        let raw = json!({
            "type": "object",
            "properties": {
                "one": { "type": ["string", "null"] },
                "two": { "type": ["string", "integer", "null"], "format": "x" }
            }
        });
        assert_eq!(
            bridge(raw)["properties"],
            json!({
                "one": { "type": "string" },
                "two": { "type": ["string", "integer"], "format": "x" }
            })
        );
    }

    #[test]
    fn null_arms_leave_unions_and_a_lone_arm_is_folded_in() {
        let raw = json!({
            "type": "object",
            "properties": {
                "limits": {
                    "description": "Field doc.",
                    "default": null,
                    "anyOf": [{ "$ref": "#/$defs/Limits" }, { "type": "null" }]
                },
                "either": {
                    "oneOf": [{ "type": "string" }, { "type": "integer" }, { "type": "null" }]
                }
            },
            "$defs": {
                "Limits": {
                    "description": "Type doc.",
                    "type": "object",
                    "properties": { "cpu": { "type": ["integer", "null"] } }
                }
            }
        });
        assert_eq!(
            bridge(raw)["properties"],
            json!({
                "limits": {
                    "description": "Field doc.",
                    "default": null,
                    "type": "object",
                    "properties": { "cpu": { "type": "integer" } }
                },
                "either": { "oneOf": [{ "type": "string" }, { "type": "integer" }] }
            })
        );
    }

    #[test]
    fn null_leaves_enums_and_nullable_goes() {
        let raw = json!({
            "type": "object",
            "properties": {
                "mode": { "type": ["string", "null"], "enum": ["fast", "slow", null] },
                "legacy": { "type": "string", "nullable": true }
            }
        });
        assert_eq!(
            bridge(raw)["properties"],
            json!({
                "mode": { "type": "string", "enum": ["fast", "slow"] },
                "legacy": { "type": "string" }
            })
        );
    }

    #[test]
    fn nullable_properties_leave_required() {
        let raw = json!({
            "type": "object",
            "properties": {
                "state": { "type": ["string", "null"] },
                "via_ref": { "$ref": "#/$defs/Maybe" },
                "pid": { "type": "integer" }
            },
            "required": ["state", "via_ref", "pid"],
            "$defs": { "Maybe": { "anyOf": [{ "type": "string" }, { "type": "null" }] } }
        });
        let bridged = bridge(raw);
        assert_eq!(bridged["required"], json!(["pid"]));
        assert_eq!(bridged["properties"]["via_ref"], json!({ "type": "string" }));
    }

    #[test]
    fn standalone_null_schemas_are_left_alone() {
        let raw = json!({ "type": "null" });
        assert_eq!(bridge(raw.clone()), raw);
    }

    // Defaults and descriptions.

    #[test]
    fn serde_defaults_survive_inlining() {
        let properties = schema_for::<Defaults>()["properties"].clone();
        assert_eq!(properties["retries"]["default"], json!(3));
        assert_eq!(properties["verbose"]["default"], json!(false));
        assert_eq!(
            properties["soft"]["default"],
            json!({ "cpu": 100, "memory": 1_073_741_824 })
        );
        assert!(properties["hard"].get("default").is_none());
    }

    #[test]
    fn doc_comments_become_descriptions() {
        let bridged = schema_for::<Spawn>();
        assert_eq!(bridged["description"], json!("Input of proc.spawn."));
        assert_eq!(
            bridged["properties"]["name"]["description"],
            json!("Name of the new process.")
        );
    }

    // Input schemas.

    #[test]
    fn objects_are_not_wrapped_and_come_back_as_sent() {
        let schema = input_schema::<Kill>();
        assert!(!schema.wrapped);
        assert_eq!(Value::Object(schema.schema.clone()), schema_for::<Kill>());
        let args = object(json!({ "pid": 42 }));
        let input = unwrap_input(&schema, Some(args)).unwrap();
        assert_eq!(input, json!({ "pid": 42 }));
        let Kill { pid } = serde_json::from_value(input).unwrap();
        assert_eq!(pid, 42);
    }

    #[test]
    fn objects_without_arguments_get_an_empty_object() {
        let input = unwrap_input(&input_schema::<Count>(), None).unwrap();
        assert_eq!(input, json!({}));
        let Count { state } = serde_json::from_value(input).unwrap();
        assert_eq!(state, None);
    }

    #[test]
    fn scalars_arrays_enums_and_unions_are_wrapped() {
        for (schema, inner) in [
            (input_schema::<u32>(), schema_for::<u32>()),
            (input_schema::<String>(), schema_for::<String>()),
            (input_schema::<Vec<Kill>>(), schema_for::<Vec<Kill>>()),
            (input_schema::<Mode>(), schema_for::<Mode>()),
            (input_schema::<Target>(), schema_for::<Target>()),
            (input_schema::<Selector>(), schema_for::<Selector>()),
            (input_schema::<Option<u32>>(), schema_for::<Option<u32>>()),
        ] {
            assert!(schema.wrapped, "{inner}");
            assert_eq!(
                Value::Object(schema.schema),
                json!({
                    "type": "object",
                    "properties": { "value": inner },
                    "required": ["value"]
                })
            );
        }
    }

    #[test]
    fn wrapped_inputs_are_unwrapped() {
        let schema = input_schema::<Target>();
        let args = object(json!({ "value": { "kind": "process", "pid": 7 } }));
        let input = unwrap_input(&schema, Some(args)).unwrap();
        let target: Target = serde_json::from_value(input).unwrap();
        assert_eq!(target, Target::Process { pid: 7 });

        let args = object(json!({ "value": "Slow" }));
        let input = unwrap_input(&input_schema::<Mode>(), Some(args)).unwrap();
        assert_eq!(serde_json::from_value::<Mode>(input).unwrap(), Mode::Slow);
    }

    #[test]
    fn wrapped_inputs_without_value_are_an_error_naming_it() {
        let schema = input_schema::<u32>();
        let missing = InputError {
            field: "value".to_owned(),
            message: "missing required field".to_owned(),
        };
        assert_eq!(unwrap_input(&schema, None), Err(missing.clone()));
        let args = object(json!({ "other": 1 }));
        assert_eq!(unwrap_input(&schema, Some(args)), Err(missing));
    }

    #[test]
    fn input_error_displays_field_and_message() {
        let error = InputError {
            field: "pid".to_owned(),
            message: "not a number".to_owned(),
        };
        assert_eq!(error.to_string(), "argument `pid`: not a number");
        let boxed: Box<dyn std::error::Error> = Box::new(error);
        assert_eq!(boxed.to_string(), "argument `pid`: not a number");
    }

    #[test]
    fn no_input_schema_is_an_empty_open_object() {
        let schema = no_input_schema();
        assert!(!schema.wrapped);
        assert_eq!(
            Value::Object(schema.schema.clone()),
            json!({ "type": "object", "properties": {} })
        );
        assert_eq!(unwrap_input(&schema, None), Ok(json!({})));
    }
}
