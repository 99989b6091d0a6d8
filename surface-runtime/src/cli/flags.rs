//! Flags as a pure function of a tool's advertised input schema, and back: the arguments a
//! command line gave, as the JSON object `tools/call` would carry.
//!
//! One `--<property>` per property, its help the property's description with `(required)`
//! and `(default: …)`; an enum's values are the flag's possible values; a boolean is the
//! tristate `--x` / `--no-x` (neither: the key is omitted); an array's flag repeats, one item
//! each; integers, numbers and strings parse as such; anything else is one JSON value.

use clap::builder::PossibleValuesParser;
use clap::{Arg, ArgAction, ArgMatches};
use serde_json::{Map, Value};

/// How one property is written on the command line.
#[derive(Clone, Debug, PartialEq)]
pub(crate) enum Shape {
    /// `--x` / `--no-x`.
    Bool,
    /// One of these values (strings as themselves, anything else as its JSON text).
    Enum(Vec<Value>),
    Integer,
    Number,
    String,
    /// The flag repeats, one item each.
    Array(Box<Shape>),
    /// One JSON value.
    Json,
}

/// One property of a tool's input, as a flag.
#[derive(Clone, Debug)]
pub(crate) struct Field {
    pub name: String,
    pub shape: Shape,
    pub help: String,
    pub required: bool,
}

/// The argument id of property `name` (ids never collide with the command's own arguments).
pub(crate) fn id(name: &str) -> String {
    format!("field:{name}")
}

fn no_id(name: &str) -> String {
    format!("field-not:{name}")
}

fn shape(schema: &Value, nested: bool) -> Shape {
    let Value::Object(s) = schema else {
        return Shape::Json;
    };
    if let Some(values) = s.get("enum").and_then(Value::as_array)
        && !values.is_empty()
        && values.iter().all(|v| !v.is_object() && !v.is_array())
    {
        return Shape::Enum(values.clone());
    }
    if let Some(c) = s.get("const")
        && !c.is_object()
        && !c.is_array()
    {
        return Shape::Enum(vec![c.clone()]);
    }
    match s.get("type").and_then(Value::as_str) {
        Some("boolean") if !nested => Shape::Bool,
        Some("integer") => Shape::Integer,
        Some("number") => Shape::Number,
        Some("string") => Shape::String,
        Some("array") if !nested => {
            Shape::Array(Box::new(s.get("items").map_or(Shape::Json, |i| shape(i, true))))
        }
        _ => Shape::Json,
    }
}

/// The flags of an input schema, in the order of its `properties` keys (sorted by name).
pub(crate) fn fields(schema: &Map<String, Value>) -> Vec<Field> {
    let required = crate::schema::required_names(schema);
    let Some(properties) = schema.get("properties").and_then(Value::as_object) else {
        return Vec::new();
    };
    properties
        .iter()
        .map(|(name, p)| {
            let is_required = required.contains(&name.as_str());
            let mut help = p
                .get("description")
                .and_then(Value::as_str)
                .unwrap_or("")
                .trim()
                .to_owned();
            let mut note = |text: String| {
                if !help.is_empty() {
                    help.push(' ');
                }
                help.push_str(&text);
            };
            if is_required {
                note("(required)".to_owned());
            }
            if let Some(default) = p.get("default") {
                note(format!("(default: {default})"));
            }
            Field {
                name: name.clone(),
                shape: shape(p, false),
                help,
                required: is_required,
            }
        })
        .collect()
}

fn scalar(shape: &Shape, text: &str) -> Result<Value, String> {
    match shape {
        Shape::Integer => text
            .parse::<i64>()
            .map(Value::from)
            .or_else(|_| text.parse::<u64>().map(Value::from))
            .map_err(|_| format!("`{text}` is not an integer")),
        Shape::Number => text
            .parse::<f64>()
            .ok()
            .and_then(serde_json::Number::from_f64)
            .map(Value::Number)
            .ok_or_else(|| format!("`{text}` is not a number")),
        Shape::String => Ok(Value::String(text.to_owned())),
        Shape::Enum(values) => values
            .iter()
            .find(|v| enum_text(v) == text)
            .cloned()
            .ok_or_else(|| format!("`{text}` is not one of the values")),
        Shape::Bool | Shape::Array(_) | Shape::Json => {
            serde_json::from_str(text).map_err(|e| format!("`{text}` is not JSON: {e}"))
        }
    }
}

fn enum_text(v: &Value) -> String {
    match v {
        Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}

fn value_name(shape: &Shape) -> &'static str {
    match shape {
        Shape::Integer => "INTEGER",
        Shape::Number => "NUMBER",
        Shape::String => "TEXT",
        Shape::Enum(_) | Shape::Bool => "VALUE",
        Shape::Array(item) => value_name(item),
        Shape::Json => "JSON",
    }
}

/// The clap arguments of one field (two for a boolean).
pub(crate) fn args(field: &Field) -> Vec<Arg> {
    let name = field.name.clone();
    let base = Arg::new(id(&name)).long(name.clone()).help(field.help.clone());
    match &field.shape {
        Shape::Bool => vec![
            base.action(ArgAction::SetTrue),
            Arg::new(no_id(&name))
                .long(format!("no-{name}"))
                .action(ArgAction::SetTrue)
                .conflicts_with(id(&name))
                .help(format!("Sends `{name}: false`")),
        ],
        shape => {
            let item = match shape {
                Shape::Array(item) => item.as_ref().clone(),
                other => other.clone(),
            };
            let mut arg = base.value_name(value_name(shape)).required(false);
            arg = match &item {
                Shape::Enum(values) => {
                    arg.value_parser(PossibleValuesParser::new(values.iter().map(enum_text)))
                }
                _ => arg,
            };
            if matches!(shape, Shape::Array(_)) {
                arg = arg.action(ArgAction::Append);
            } else {
                arg = arg.action(ArgAction::Set);
            }
            // Validate while clap parses, so a bad value is a usage error naming the flag.
            if !matches!(item, Shape::Enum(_)) {
                arg = arg.value_parser(move |text: &str| scalar(&item, text).map(|_| text.to_owned()));
            }
            if field.required {
                arg = arg.required_unless_present("input");
            }
            vec![arg]
        }
    }
}

/// The object the given flags describe; `None` when no flag of the tool was given.
pub(crate) fn object(fields: &[Field], matches: &ArgMatches) -> Map<String, Value> {
    let mut out = Map::new();
    for field in fields {
        let name = &field.name;
        match &field.shape {
            Shape::Bool => {
                if matches.get_flag(&id(name)) {
                    out.insert(name.clone(), Value::Bool(true));
                } else if matches.get_flag(&no_id(name)) {
                    out.insert(name.clone(), Value::Bool(false));
                }
            }
            Shape::Array(item) => {
                if let Some(texts) = matches.get_many::<String>(&id(name)) {
                    let items = texts
                        .map(|t| scalar(item, t).expect("clap validated it"))
                        .collect();
                    out.insert(name.clone(), Value::Array(items));
                }
            }
            shape => {
                if let Some(text) = matches.get_one::<String>(&id(name)) {
                    out.insert(name.clone(), scalar(shape, text).expect("clap validated it"));
                }
            }
        }
    }
    out
}

/// Every argument id the fields use (what `--input` conflicts with).
pub(crate) fn ids(fields: &[Field]) -> Vec<String> {
    fields
        .iter()
        .flat_map(|f| match f.shape {
            Shape::Bool => vec![id(&f.name), no_id(&f.name)],
            _ => vec![id(&f.name)],
        })
        .collect()
}

/// Every long flag the fields take (to refuse a property that collides with another flag).
pub(crate) fn longs(fields: &[Field]) -> Vec<String> {
    fields
        .iter()
        .flat_map(|f| match f.shape {
            Shape::Bool => vec![f.name.clone(), format!("no-{}", f.name)],
            _ => vec![f.name.clone()],
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn shapes_follow_the_schema() {
        let schema = json!({
            "type": "object",
            "properties": {
                "pid": {"type": "integer", "description": "The process."},
                "force": {"type": "boolean"},
                "mode": {"type": "string", "enum": ["soft", "hard"], "default": "soft"},
                "tags": {"type": "array", "items": {"type": "string"}},
                "meta": {"type": "object"}
            },
            "required": ["pid"]
        });
        let f = fields(schema.as_object().unwrap());
        let shapes: Vec<(&str, &Shape)> = f.iter().map(|f| (f.name.as_str(), &f.shape)).collect();
        // Sorted by name: the schema's object keys are.
        assert_eq!(
            shapes,
            [
                ("force", &Shape::Bool),
                ("meta", &Shape::Json),
                ("mode", &Shape::Enum(vec![json!("soft"), json!("hard")])),
                ("pid", &Shape::Integer),
                ("tags", &Shape::Array(Box::new(Shape::String))),
            ]
        );
        assert_eq!(f[3].help, "The process. (required)");
        assert_eq!(f[2].help, "(default: \"soft\")");
        assert_eq!(
            longs(&f)[..3],
            ["force".to_owned(), "no-force".to_owned(), "meta".to_owned()]
        );
    }
}
