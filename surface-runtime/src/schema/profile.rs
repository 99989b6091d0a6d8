//! Schema profiles: rewrite the advertised input schemas for what one kind of host accepts.
//!
//! Hosts disagree on the JSON Schema they take for tool inputs. The bridge
//! ([`super::bridge`]) emits one **portable** shape most hosts read (no `$ref`, no `null`,
//! open objects, optional fields left out of `required`). A server can choose another profile
//! with `McpServer::schema_profile`; the profile rewrites every advertised input schema, and a
//! tool whose input cannot be expressed in it refuses the bundle at `start()`, naming the tool
//! and the field — so a `cargo test` that starts the server (or calls
//! `surface::testing::check_profile`) fails before a host ever sees the schema.
//!
//! # Profiles and the rules they follow
//!
//! - [`SchemaProfile::Portable`] — the bridge's output, unchanged (the default).
//!
//! - [`SchemaProfile::OpenAiStrict`] — OpenAI's strict function calling / Structured Outputs
//!   (<https://platform.openai.com/docs/guides/function-calling#strict-mode> and
//!   <https://platform.openai.com/docs/guides/structured-outputs#supported-schemas>):
//!   - "all fields or function parameters must be specified as `required`": every property is
//!     listed in `required`; a field that was optional becomes nullable ("emulate an optional
//!     parameter by using a union type with `null`"): `"type": ["T", "null"]`, or a `null` arm
//!     in `anyOf` when it has no single `type` (and `null` joins its `enum`). The host then sends
//!     `null` for a field it leaves out, and the server reads that `null` as "absent" before
//!     decoding, so `Option<T>` and `#[serde(default)]` fields keep their meaning.
//!   - "`additionalProperties: false` must always be set in objects": every object is closed.
//!     An object whose keys are free (a map, `HashMap<String, T>`) therefore cannot be
//!     expressed, and neither can one with no declared properties.
//!   - supported types are string, number, boolean, integer, object, array, enum and `anyOf`:
//!     a schema with no type at all (any JSON value, `serde_json::Value`) cannot be expressed;
//!     `oneOf` becomes `anyOf` (the bridge only emits `oneOf` for arms that exclude each other,
//!     so nothing changes for a valid input); `allOf`, `not`, `if`/`then`/`else`,
//!     `patternProperties`, `dependentRequired`/`dependentSchemas` and tuples (`prefixItems`)
//!     cannot be expressed.
//!   - keywords the guide lists as not supported (`minLength`, `maxLength`, `minProperties`,
//!     `maxProperties`, `uniqueItems`, `contains`, `unevaluatedItems`, `propertyNames`) and
//!     the annotations strict mode does not take (`default`, `examples`, `deprecated`,
//!     `readOnly`, `writeOnly`, `$comment`) are removed: the server still enforces them when
//!     it decodes the input.
//!   - "up to 10 levels of nesting" and "up to 5000 object properties total": deeper or larger
//!     inputs cannot be expressed.
//!
//! - [`SchemaProfile::Gemini`] — the Gemini API's function declarations, whose `parameters`
//!   is the OpenAPI-subset `Schema` object (<https://ai.google.dev/api/caching#Schema>,
//!   <https://ai.google.dev/gemini-api/docs/function-calling>). That object has the fields
//!   `type`, `format`, `title`, `description`, `nullable`, `enum`, `maxItems`, `minItems`,
//!   `properties`, `required`, `minProperties`, `maxProperties`, `minLength`, `maxLength`,
//!   `pattern`, `example`, `anyOf`, `propertyOrdering`, `default`, `items`, `minimum` and
//!   `maximum`, and no others; so:
//!   - any other keyword is removed when it only constrains or annotates (`exclusiveMinimum`,
//!     `multipleOf`, `uniqueItems`, `examples`, `const` after the rewrite below, …), and the
//!     input cannot be expressed when the keyword carries structure (`additionalProperties`
//!     with a schema — a map —, `allOf`, `not`, `if`/`then`/`else`, `prefixItems`,
//!     `patternProperties`).
//!   - `type` is one value, so a type list becomes `anyOf` arms, and a schema with no type
//!     (any JSON value) cannot be expressed; `oneOf` becomes `anyOf`.
//!   - `enum` holds strings ("Possible values of the element of Type.STRING with enum
//!     format"): a string `const` becomes a one-value `enum`; a non-string `enum` or `const`
//!     cannot be expressed.
//!   - `format` for strings is `enum` or `date-time` only: other string formats are removed.
//!
//! ```
//! use serde_json::json;
//! use surface_runtime::schema::input_schema;
//! use surface_runtime::schema::profile::SchemaProfile;
//!
//! #[derive(schemars::JsonSchema)]
//! struct Spawn {
//!     name: String,
//!     nice: Option<i8>,
//! }
//!
//! let strict = SchemaProfile::OpenAiStrict.advertise(&input_schema::<Spawn>()).unwrap();
//! assert_eq!(
//!     serde_json::Value::Object(strict.schema),
//!     json!({
//!         "type": "object",
//!         "properties": {
//!             "name": { "type": "string" },
//!             "nice": { "type": ["integer", "null"], "minimum": -128, "maximum": 127 }
//!         },
//!         "required": ["name", "nice"],
//!         "additionalProperties": false
//!     })
//! );
//! ```

use super::InputSchema;
use serde_json::{Map, Value};
use std::fmt;
use std::str::FromStr;

/// Which host's schema rules the advertised input schemas follow. See the
/// [module docs](self) for each profile's rules and where they come from.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum SchemaProfile {
    /// The bridge's portable schemas, unchanged (the default).
    #[default]
    Portable,
    /// OpenAI strict function calling: every property required, optional ones nullable,
    /// every object closed.
    OpenAiStrict,
    /// The Gemini API's OpenAPI-subset `Schema` object.
    Gemini,
}

/// Why one field of an input cannot be expressed in a profile.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Inexpressible {
    /// Where: the field's path from the input's top (`meta`, `items[].tags`), or `""` for the
    /// input itself.
    pub field: String,
    /// Why, naming the rule.
    pub reason: String,
}

impl fmt::Display for Inexpressible {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.field.is_empty() {
            write!(f, "the input itself {}", self.reason)
        } else {
            write!(f, "field `{}` {}", self.field, self.reason)
        }
    }
}

/// A tool whose input a profile cannot express: the tool, the profile and every field.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ProfileError {
    /// The tool's name on the wire.
    pub tool: String,
    /// The profile that was asked for.
    pub profile: SchemaProfile,
    /// Every field that cannot be expressed.
    pub fields: Vec<Inexpressible>,
}

impl fmt::Display for ProfileError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let fields: Vec<String> = self.fields.iter().map(ToString::to_string).collect();
        write!(
            f,
            "tool \"{}\" cannot be advertised under the {} schema profile: {} — change the input type or serve another profile",
            self.tool,
            self.profile,
            fields.join("; ")
        )
    }
}

impl std::error::Error for ProfileError {}

impl fmt::Display for SchemaProfile {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for SchemaProfile {
    type Err = String;

    /// `portable`, `openai-strict` or `gemini`.
    fn from_str(s: &str) -> Result<Self, String> {
        Self::ALL
            .into_iter()
            .find(|p| p.name() == s)
            .ok_or_else(|| format!("unknown schema profile \"{s}\" (portable, openai-strict, gemini)"))
    }
}

/// OpenAI's documented limits for one strict schema.
const STRICT_MAX_DEPTH: usize = 10;
const STRICT_MAX_PROPERTIES: usize = 5000;

/// Keywords strict mode does not take and the server enforces anyway.
const STRICT_DROPPED: &[&str] = &[
    "minLength",
    "maxLength",
    "minProperties",
    "maxProperties",
    "uniqueItems",
    "contains",
    "minContains",
    "maxContains",
    "unevaluatedItems",
    "unevaluatedProperties",
    "propertyNames",
    "default",
    "examples",
    "deprecated",
    "readOnly",
    "writeOnly",
    "$comment",
];

/// Keywords that carry structure no profile but the portable one can express.
const STRUCTURAL: &[&str] = &[
    "allOf",
    "not",
    "if",
    "then",
    "else",
    "patternProperties",
    "dependentRequired",
    "dependentSchemas",
    "prefixItems",
];

/// The fields of the Gemini API's `Schema` object.
const GEMINI_FIELDS: &[&str] = &[
    "type",
    "format",
    "title",
    "description",
    "nullable",
    "enum",
    "maxItems",
    "minItems",
    "properties",
    "required",
    "minProperties",
    "maxProperties",
    "minLength",
    "maxLength",
    "pattern",
    "example",
    "anyOf",
    "propertyOrdering",
    "default",
    "items",
    "minimum",
    "maximum",
];

impl SchemaProfile {
    /// Every profile.
    ///
    /// ```
    /// # use surface_runtime::schema::profile::SchemaProfile;
    /// let names: Vec<&str> = SchemaProfile::ALL.iter().map(|p| p.name()).collect();
    /// assert_eq!(names, ["portable", "openai-strict", "gemini"]);
    /// ```
    pub const ALL: [SchemaProfile; 3] = [
        SchemaProfile::Portable,
        SchemaProfile::OpenAiStrict,
        SchemaProfile::Gemini,
    ];

    /// The profile's name (`portable`, `openai-strict`, `gemini`).
    pub fn name(&self) -> &'static str {
        match self {
            SchemaProfile::Portable => "portable",
            SchemaProfile::OpenAiStrict => "openai-strict",
            SchemaProfile::Gemini => "gemini",
        }
    }

    /// Rewrites an advertised input schema (as the bridge made it) for this profile, or
    /// names every field it cannot express.
    ///
    /// ```
    /// use std::collections::HashMap;
    /// use surface_runtime::schema::input_schema;
    /// use surface_runtime::schema::profile::SchemaProfile;
    ///
    /// #[derive(schemars::JsonSchema)]
    /// struct Tag {
    ///     labels: HashMap<String, String>,
    /// }
    ///
    /// let refused = SchemaProfile::OpenAiStrict.advertise(&input_schema::<Tag>()).unwrap_err();
    /// assert_eq!(refused[0].field, "labels");
    /// assert!(SchemaProfile::Portable.advertise(&input_schema::<Tag>()).is_ok());
    /// ```
    pub fn advertise(&self, input: &InputSchema) -> Result<InputSchema, Vec<Inexpressible>> {
        let mut rewrite = Rewrite {
            profile: *self,
            problems: Vec::new(),
            properties: 0,
        };
        let schema = match self {
            SchemaProfile::Portable => return Ok(input.clone()),
            SchemaProfile::OpenAiStrict => rewrite.strict(&Value::Object(input.schema.clone()), "", 1),
            SchemaProfile::Gemini => rewrite.gemini(&Value::Object(input.schema.clone()), ""),
        };
        if rewrite.profile == SchemaProfile::OpenAiStrict && rewrite.properties > STRICT_MAX_PROPERTIES {
            rewrite.problems.push(Inexpressible {
                field: String::new(),
                reason: format!(
                    "has {} object properties in all, past strict mode's {STRICT_MAX_PROPERTIES}",
                    rewrite.properties
                ),
            });
        }
        if !rewrite.problems.is_empty() {
            return Err(rewrite.problems);
        }
        let Value::Object(schema) = schema else {
            unreachable!("an object schema rewrites to an object schema")
        };
        Ok(InputSchema {
            schema,
            wrapped: input.wrapped,
            nulls_are_absent: input.nulls_are_absent || *self == SchemaProfile::OpenAiStrict,
        })
    }

    /// Checks a tool's input against this profile, naming the tool in the error.
    ///
    /// ```
    /// use surface_runtime::schema::input_schema;
    /// use surface_runtime::schema::profile::SchemaProfile;
    ///
    /// let refused = SchemaProfile::Gemini
    ///     .check("tag_set", &input_schema::<serde_json::Value>())
    ///     .unwrap_err();
    /// assert_eq!(
    ///     refused.to_string(),
    ///     "tool \"tag_set\" cannot be advertised under the gemini schema profile: field `value` is any JSON value, which has no Gemini form (the Schema object needs a `type`) — change the input type or serve another profile"
    /// );
    /// ```
    pub fn check(&self, tool: &str, input: &InputSchema) -> Result<InputSchema, ProfileError> {
        self.advertise(input).map_err(|fields| ProfileError {
            tool: tool.to_owned(),
            profile: *self,
            fields,
        })
    }
}

struct Rewrite {
    profile: SchemaProfile,
    problems: Vec<Inexpressible>,
    properties: usize,
}

fn join(path: &str, key: &str) -> String {
    if path.is_empty() {
        key.to_owned()
    } else {
        format!("{path}.{key}")
    }
}

fn has_type(node: &Map<String, Value>) -> bool {
    ["type", "enum", "const", "anyOf", "oneOf"]
        .iter()
        .any(|k| node.contains_key(*k))
}

impl Rewrite {
    fn refuse(&mut self, path: &str, reason: impl Into<String>) {
        self.problems.push(Inexpressible {
            field: path.to_owned(),
            reason: reason.into(),
        });
    }

    fn refuse_structural(&mut self, path: &str, node: &Map<String, Value>) {
        for keyword in STRUCTURAL {
            if node.contains_key(*keyword) {
                let reason = format!(
                    "uses `{keyword}`, which the {} profile cannot express",
                    self.profile
                );
                self.refuse(path, reason);
            }
        }
    }

    /// The OpenAI strict form of `schema` at `path`, `depth` levels of objects deep.
    fn strict(&mut self, schema: &Value, path: &str, depth: usize) -> Value {
        let Some(node) = schema.as_object().filter(|n| has_type(n)) else {
            self.refuse(
                path,
                "is any JSON value, which strict mode cannot express (every schema needs a type)",
            );
            return schema.clone();
        };
        self.refuse_structural(path, node);
        let mut out = Map::new();
        for (key, value) in node {
            match key.as_str() {
                k if STRICT_DROPPED.contains(&k) || STRUCTURAL.contains(&k) => {}
                "oneOf" | "anyOf" => {
                    let arms = value.as_array().into_iter().flatten();
                    let arms = arms.map(|arm| self.strict(arm, path, depth)).collect();
                    out.insert("anyOf".to_owned(), Value::Array(arms));
                }
                "items" => {
                    let items = self.strict(value, &format!("{path}[]"), depth);
                    out.insert(key.clone(), items);
                }
                "properties" | "required" | "additionalProperties" => {}
                _ => {
                    out.insert(key.clone(), value.clone());
                }
            }
        }
        let is_object =
            node.get("type").and_then(Value::as_str) == Some("object") || node.contains_key("properties");
        if is_object {
            self.strict_object(node, &mut out, path, depth);
        }
        Value::Object(out)
    }

    fn strict_object(
        &mut self,
        node: &Map<String, Value>,
        out: &mut Map<String, Value>,
        path: &str,
        depth: usize,
    ) {
        if depth > STRICT_MAX_DEPTH {
            self.refuse(
                path,
                format!("nests objects deeper than strict mode's {STRICT_MAX_DEPTH} levels"),
            );
        }
        match node.get("additionalProperties") {
            None | Some(Value::Bool(false)) => {}
            Some(_) => self.refuse(
                path,
                "has free keys (a map), which strict mode cannot express (every object needs `additionalProperties: false`)",
            ),
        }
        let Some(properties) = node.get("properties").and_then(Value::as_object) else {
            if node.get("additionalProperties").is_none() {
                self.refuse(
                    path,
                    "is an object with no declared properties, which strict mode cannot express",
                );
            }
            return;
        };
        let required = super::required_names(node);
        let mut rewritten = Map::new();
        for (name, property) in properties {
            self.properties += 1;
            let field = join(path, name);
            let mut property = self.strict(property, &field, depth + 1);
            if !required.contains(&name.as_str()) {
                nullable(&mut property);
            }
            rewritten.insert(name.clone(), property);
        }
        // Sorted, so the answer is the same whether or not `serde_json` keeps insertion order.
        let mut all: Vec<&String> = properties.keys().collect();
        all.sort();
        let all: Vec<Value> = all.into_iter().map(|k| Value::String(k.clone())).collect();
        out.insert("properties".to_owned(), Value::Object(rewritten));
        out.insert("required".to_owned(), Value::Array(all));
        out.insert("additionalProperties".to_owned(), Value::Bool(false));
    }

    /// The Gemini `Schema` form of `schema` at `path`.
    fn gemini(&mut self, schema: &Value, path: &str) -> Value {
        let Some(node) = schema.as_object().filter(|n| has_type(n)) else {
            self.refuse(
                path,
                "is any JSON value, which has no Gemini form (the Schema object needs a `type`)",
            );
            return schema.clone();
        };
        self.refuse_structural(path, node);
        if matches!(node.get("additionalProperties"), Some(v) if v != &Value::Bool(false)) {
            self.refuse(
                path,
                "has free keys (a map), which has no Gemini form (the Schema object has no `additionalProperties`)",
            );
        }
        let mut out = Map::new();
        for (key, value) in node {
            match key.as_str() {
                "oneOf" | "anyOf" => {
                    let arms = value.as_array().into_iter().flatten();
                    let arms = arms.map(|arm| self.gemini(arm, path)).collect();
                    out.insert("anyOf".to_owned(), Value::Array(arms));
                }
                "const" | "enum" => {
                    let values = match value {
                        Value::Array(values) if key == "enum" => values.clone(),
                        one => vec![one.clone()],
                    };
                    if values.iter().all(Value::is_string) {
                        out.insert("enum".to_owned(), Value::Array(values));
                        out.entry("type").or_insert_with(|| "string".into());
                    } else {
                        self.refuse(path, "has a non-string enum or const, which has no Gemini form (enum values are strings)");
                    }
                }
                "type" => match value {
                    Value::Array(types) => {
                        let arms = types.iter().map(|t| serde_json::json!({ "type": t })).collect();
                        out.insert("anyOf".to_owned(), Value::Array(arms));
                    }
                    one => {
                        out.insert(key.clone(), one.clone());
                    }
                },
                "format" => {
                    if matches!(value.as_str(), Some("enum" | "date-time")) {
                        out.insert(key.clone(), value.clone());
                    }
                }
                "items" => {
                    let items = self.gemini(value, &format!("{path}[]"));
                    out.insert(key.clone(), items);
                }
                "properties" => {
                    let properties = value.as_object().into_iter().flatten();
                    let properties = properties
                        .map(|(name, p)| (name.clone(), self.gemini(p, &join(path, name))))
                        .collect();
                    out.insert(key.clone(), Value::Object(properties));
                }
                k if GEMINI_FIELDS.contains(&k) => {
                    out.insert(key.clone(), value.clone());
                }
                _ => {}
            }
        }
        Value::Object(out)
    }
}

/// Makes a strict property accept `null` (the host's way of leaving it out).
fn nullable(schema: &mut Value) {
    let Value::Object(node) = schema else { return };
    let null = Value::String("null".to_owned());
    if let Some(Value::Array(arms)) = node.get_mut("anyOf") {
        if !arms.iter().any(|a| a.get("type") == Some(&null)) {
            arms.push(serde_json::json!({ "type": "null" }));
        }
        return;
    }
    if node.contains_key("const") {
        let arm = Value::Object(std::mem::take(node));
        node.insert(
            "anyOf".to_owned(),
            Value::Array(vec![arm, serde_json::json!({ "type": "null" })]),
        );
        return;
    }
    if let Some(Value::Array(values)) = node.get_mut("enum")
        && !values.contains(&Value::Null)
    {
        values.push(Value::Null);
    }
    match node.get_mut("type") {
        Some(Value::String(t)) => {
            let one = Value::String(std::mem::take(t));
            node.insert("type".to_owned(), Value::Array(vec![one, null]));
        }
        Some(Value::Array(types)) if !types.contains(&null) => types.push(null),
        _ => {}
    }
}

#[cfg(test)]
mod tests;
