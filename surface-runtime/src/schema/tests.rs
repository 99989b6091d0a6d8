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
