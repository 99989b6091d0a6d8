use super::*;
use crate::schema::{input_schema, no_input_schema, unwrap_input};
use schemars::JsonSchema;
use serde_json::json;
use std::collections::HashMap;

#[allow(dead_code)]
#[derive(JsonSchema)]
#[serde(rename_all = "kebab-case", tag = "kind")]
enum Shape {
    Circle { r: f64 },
    Square { side: f64, label: Option<String> },
}

#[allow(dead_code)]
#[derive(JsonSchema)]
struct Draw {
    /// What to draw.
    shapes: Vec<Shape>,
    #[serde(default)]
    layer: u8,
    state: Option<State>,
    tags: Option<Vec<String>>,
}

#[allow(dead_code)]
#[derive(JsonSchema)]
#[serde(rename_all = "lowercase")]
enum State {
    Running,
    Stopped,
}

fn advertised(profile: SchemaProfile, input: &InputSchema) -> Value {
    Value::Object(profile.advertise(input).expect("expressible").schema)
}

#[test]
fn strict_requires_every_property_closes_every_object_and_nulls_the_optional_ones() {
    let strict = advertised(SchemaProfile::OpenAiStrict, &input_schema::<Draw>());
    assert_eq!(
        strict,
        json!({
            "type": "object",
            "properties": {
                "shapes": {
                    "description": "What to draw.",
                    "type": "array",
                    "items": { "anyOf": [
                        {
                            "type": "object",
                            "properties": {
                                "kind": { "type": "string", "const": "circle" },
                                "r": { "type": "number" }
                            },
                            "required": ["kind", "r"],
                            "additionalProperties": false
                        },
                        {
                            "type": "object",
                            "properties": {
                                "kind": { "type": "string", "const": "square" },
                                "side": { "type": "number" },
                                "label": { "type": ["string", "null"] }
                            },
                            "required": ["kind", "label", "side"],
                            "additionalProperties": false
                        }
                    ] }
                },
                "layer": { "type": ["integer", "null"], "minimum": 0, "maximum": 255 },
                "state": { "type": ["string", "null"], "enum": ["running", "stopped", null] },
                "tags": { "type": ["array", "null"], "items": { "type": "string" } }
            },
            "required": ["layer", "shapes", "state", "tags"],
            "additionalProperties": false
        })
    );
    // Rewriting a strict schema again changes nothing.
    let again = SchemaProfile::OpenAiStrict
        .advertise(
            &SchemaProfile::OpenAiStrict
                .advertise(&input_schema::<Draw>())
                .unwrap(),
        )
        .unwrap();
    assert_eq!(Value::Object(again.schema), strict);
}

#[test]
fn strict_nulls_read_as_absent() {
    let strict = SchemaProfile::OpenAiStrict
        .advertise(&input_schema::<Draw>())
        .unwrap();
    let args = json!({"shapes": [{"kind": "square", "side": 1.0, "label": null}], "layer": null, "state": null, "tags": null});
    let Value::Object(args) = args else { unreachable!() };
    assert_eq!(
        unwrap_input(&strict, Some(args.clone())),
        Ok(json!({"shapes": [{"kind": "square", "side": 1.0}]}))
    );
    // The portable schema leaves a `null` for the decoder to refuse.
    assert_eq!(
        unwrap_input(&input_schema::<Draw>(), Some(args.clone())),
        Ok(Value::Object(args))
    );
}

#[allow(dead_code)]
#[derive(JsonSchema)]
struct Loose {
    labels: HashMap<String, String>,
    meta: serde_json::Value,
    pair: (u8, String),
    ok: bool,
}

#[test]
fn strict_names_every_field_it_cannot_express() {
    let refused = SchemaProfile::OpenAiStrict
        .check("tag_set", &input_schema::<Loose>())
        .unwrap_err();
    let fields: Vec<&str> = refused.fields.iter().map(|f| f.field.as_str()).collect();
    assert_eq!(fields, ["labels", "meta", "pair"]);
    assert_eq!(
        refused.to_string(),
        "tool \"tag_set\" cannot be advertised under the openai-strict schema profile: \
         field `labels` has free keys (a map), which strict mode cannot express (every object needs `additionalProperties: false`); \
         field `meta` is any JSON value, which strict mode cannot express (every schema needs a type); \
         field `pair` uses `prefixItems`, which the openai-strict profile cannot express \
         — change the input type or serve another profile"
    );
}

#[test]
fn strict_refuses_past_ten_levels_of_objects() {
    fn nest(depth: usize) -> Value {
        if depth == 0 {
            return json!({"type": "string"});
        }
        json!({"type": "object", "properties": {"n": nest(depth - 1)}, "required": ["n"]})
    }
    let input = |depth| InputSchema {
        schema: nest(depth).as_object().unwrap().clone(),
        wrapped: false,
        nulls_are_absent: false,
    };
    assert!(SchemaProfile::OpenAiStrict.advertise(&input(10)).is_ok());
    let refused = SchemaProfile::OpenAiStrict.advertise(&input(11)).unwrap_err();
    assert_eq!(refused[0].field, "n.n.n.n.n.n.n.n.n.n");
}

#[test]
fn no_input_stays_an_empty_closed_object() {
    assert_eq!(
        advertised(SchemaProfile::OpenAiStrict, &no_input_schema()),
        json!({"type": "object", "properties": {}, "required": [], "additionalProperties": false})
    );
    assert_eq!(
        advertised(SchemaProfile::Gemini, &no_input_schema()),
        json!({"type": "object", "properties": {}})
    );
}

#[allow(dead_code)]
#[derive(JsonSchema)]
struct Spawn {
    name: String,
    nice: Option<i8>,
    id: Option<u64>,
    when: Option<String>,
}

#[test]
fn gemini_keeps_the_schema_object_fields_only() {
    let mut input = input_schema::<Spawn>();
    input.schema["properties"]["when"]["format"] = json!("date-time");
    input.schema["properties"]["name"]["format"] = json!("hostname");
    input.schema["properties"]["name"]["examples"] = json!(["web"]);
    input.schema["properties"]["id"]["exclusiveMinimum"] = json!(0);
    assert_eq!(
        advertised(SchemaProfile::Gemini, &input),
        json!({
            "type": "object",
            "properties": {
                "name": { "type": "string" },
                "nice": { "type": "integer", "minimum": -128, "maximum": 127 },
                "id": { "type": "integer", "minimum": 0 },
                "when": { "type": "string", "format": "date-time" }
            },
            "required": ["name"]
        })
    );
    let gemini = advertised(SchemaProfile::Gemini, &input_schema::<Draw>());
    let arms = &gemini["properties"]["shapes"]["items"]["anyOf"];
    assert_eq!(
        arms[0]["properties"]["kind"],
        json!({"type": "string", "enum": ["circle"]})
    );
    let refused = SchemaProfile::Gemini
        .advertise(&input_schema::<Loose>())
        .unwrap_err();
    let fields: Vec<&str> = refused.iter().map(|f| f.field.as_str()).collect();
    assert_eq!(fields, ["labels", "meta", "pair"]);
}

#[test]
fn names_parse_back() {
    for profile in SchemaProfile::ALL {
        assert_eq!(profile.name().parse(), Ok(profile));
    }
    assert!(
        "strict"
            .parse::<SchemaProfile>()
            .unwrap_err()
            .contains("openai-strict")
    );
}
