//! A tool's input schemas compared node by node: fields added or removed, types narrowed or
//! widened, enums, bounds, variants, objects opened or closed.

use super::changes::Changes;
use serde_json::Value;
use std::collections::BTreeSet;

/// Compares one tool's input schemas, node by node.
pub(super) struct Schemas<'a> {
    pub(super) what: &'a str,
    pub(super) changes: &'a mut Changes,
}

fn field(path: &str, key: &str) -> String {
    if path.is_empty() {
        key.to_owned()
    } else {
        format!("{path}.{key}")
    }
}

fn types(schema: &Value) -> BTreeSet<String> {
    match schema.get("type") {
        Some(Value::String(t)) => [t.clone()].into(),
        Some(Value::Array(ts)) => ts.iter().filter_map(Value::as_str).map(str::to_owned).collect(),
        _ => BTreeSet::new(),
    }
}

/// Whether a schema typed `types` accepts values of type `t` (an integer is a number).
fn accepts(types: &BTreeSet<String>, t: &str) -> bool {
    types.contains(t) || (t == "integer" && types.contains("number"))
}

const LOWER_BOUNDS: [&str; 4] = ["minimum", "exclusiveMinimum", "minLength", "minItems"];
const UPPER_BOUNDS: [&str; 4] = ["maximum", "exclusiveMaximum", "maxLength", "maxItems"];

impl Schemas<'_> {
    /// `tool "x": input field `path` <change>` (no field for the input itself).
    fn sentence(&self, path: &str, change: &str) -> String {
        match path {
            "" => format!("{}: {change}", self.what),
            _ => format!("{}: input field `{path}` {change}", self.what),
        }
    }

    fn breaking(&mut self, path: &str, change: String) {
        let sentence = self.sentence(path, &change);
        self.changes.breaking.push(sentence);
    }

    fn additive(&mut self, path: &str, change: String) {
        let sentence = self.sentence(path, &change);
        self.changes.additive.push(sentence);
    }

    pub(super) fn compare(&mut self, old: &Value, new: &Value, path: &str) {
        self.compare_types(old, new, path);
        self.compare_enums(old, new, path);
        self.compare_bounds(old, new, path);
        self.compare_objects(old, new, path);
        if let (Some(a), Some(b)) = (old.get("items"), new.get("items")) {
            self.compare(a, b, &format!("{path}[]"));
        }
        let arms = |s: &Value| {
            s.get("anyOf")
                .or_else(|| s.get("oneOf"))
                .and_then(Value::as_array)
                .cloned()
        };
        if let (Some(a), Some(b)) = (arms(old), arms(new)) {
            for (i, (x, y)) in a.iter().zip(&b).enumerate() {
                self.compare(x, y, &format!("{path}(variant {})", i + 1));
            }
            match a.len().cmp(&b.len()) {
                std::cmp::Ordering::Greater => {
                    self.breaking(path, format!("lost {} variant(s)", a.len() - b.len()))
                }
                std::cmp::Ordering::Less => {
                    self.additive(path, format!("gained {} variant(s)", b.len() - a.len()))
                }
                std::cmp::Ordering::Equal => {}
            }
        }
    }

    fn compare_types(&mut self, old: &Value, new: &Value, path: &str) {
        let (before, after) = (types(old), types(new));
        if before.is_empty() && after.is_empty() {
            return;
        }
        let list = |t: &BTreeSet<String>| {
            if t.is_empty() {
                "any".to_owned()
            } else {
                t.iter().cloned().collect::<Vec<_>>().join(" | ")
            }
        };
        // No `type` accepts every type.
        let lost = !after.is_empty() && (before.is_empty() || before.iter().any(|t| !accepts(&after, t)));
        let gained = after.is_empty() || after.iter().any(|t| !accepts(&before, t));
        if lost {
            let change = format!("type narrowed from {} to {}", list(&before), list(&after));
            self.breaking(path, change);
        } else if gained {
            let change = format!("type widened from {} to {}", list(&before), list(&after));
            self.additive(path, change);
        }
    }

    fn compare_enums(&mut self, old: &Value, new: &Value, path: &str) {
        let values = |s: &Value| -> Option<Vec<Value>> {
            match (s.get("enum"), s.get("const")) {
                (Some(Value::Array(v)), _) => Some(v.clone()),
                (_, Some(c)) => Some(vec![c.clone()]),
                _ => None,
            }
        };
        match (values(old), values(new)) {
            (None, Some(_)) => self.breaking(path, "now only takes listed values".to_owned()),
            (Some(_), None) => self.additive(path, "no longer restricted to listed values".to_owned()),
            (Some(a), Some(b)) => {
                let dropped: Vec<String> = a
                    .iter()
                    .filter(|v| !b.contains(v))
                    .map(Value::to_string)
                    .collect();
                if !dropped.is_empty() {
                    self.breaking(path, format!("no longer takes {}", dropped.join(", ")));
                }
                let added: Vec<String> = b
                    .iter()
                    .filter(|v| !a.contains(v))
                    .map(Value::to_string)
                    .collect();
                if !added.is_empty() {
                    self.additive(path, format!("now also takes {}", added.join(", ")));
                }
            }
            (None, None) => {}
        }
    }

    fn compare_bounds(&mut self, old: &Value, new: &Value, path: &str) {
        let bound = |s: &Value, k: &str| s.get(k).and_then(Value::as_f64);
        for (keys, tighter) in [(LOWER_BOUNDS, 1.0), (UPPER_BOUNDS, -1.0)] {
            for k in keys {
                let change = match (bound(old, k), bound(new, k)) {
                    (None, Some(b)) => Some((true, format!("gained `{k}: {b}`"))),
                    (Some(a), None) => Some((false, format!("lost `{k}: {a}`"))),
                    (Some(a), Some(b)) if a != b => {
                        Some(((b - a) * tighter > 0.0, format!("`{k}` moved from {a} to {b}")))
                    }
                    _ => None,
                };
                match change {
                    Some((true, c)) => self.breaking(path, c),
                    Some((false, c)) => self.additive(path, c),
                    None => {}
                }
            }
        }
    }

    fn compare_objects(&mut self, old: &Value, new: &Value, path: &str) {
        let props = |s: &Value| {
            s.get("properties")
                .and_then(Value::as_object)
                .cloned()
                .unwrap_or_default()
        };
        let required = |s: &Value| -> BTreeSet<String> {
            let names = s
                .get("required")
                .and_then(Value::as_array)
                .cloned()
                .unwrap_or_default();
            names
                .iter()
                .filter_map(Value::as_str)
                .map(str::to_owned)
                .collect()
        };
        let (before, after) = (props(old), props(new));
        let (was_required, is_required) = (required(old), required(new));
        for (name, schema) in &after {
            let at = field(path, name);
            match before.get(name) {
                None if is_required.contains(name) => {
                    self.breaking_at_tool(format!("required input field `{at}` was added"))
                }
                None => self.additive_at_tool(format!("optional input field `{at}` was added")),
                Some(prior) => {
                    if is_required.contains(name) && !was_required.contains(name) {
                        self.breaking(&at, "became required".to_owned());
                    }
                    if !is_required.contains(name) && was_required.contains(name) {
                        self.additive(&at, "became optional".to_owned());
                    }
                    if let Some(description) = schema.get("description")
                        && prior.get("description") != Some(description)
                    {
                        self.additive(&at, "changed its description".to_owned());
                    }
                    self.compare(prior, schema, &at);
                }
            }
        }
        for name in before.keys().filter(|n| !after.contains_key(*n)) {
            self.breaking_at_tool(format!("input field `{}` was removed", field(path, name)));
        }
        let closed = |s: &Value| s.get("additionalProperties") == Some(&Value::Bool(false));
        if !before.is_empty() || !after.is_empty() {
            match (closed(old), closed(new)) {
                (false, true) => self.breaking(path, "closed to fields it does not list".to_owned()),
                (true, false) => self.additive(path, "open to fields it does not list".to_owned()),
                _ => {}
            }
        }
    }

    fn breaking_at_tool(&mut self, change: String) {
        self.changes.breaking.push(format!("{}: {change}", self.what));
    }

    fn additive_at_tool(&mut self, change: String) {
        self.changes.additive.push(format!("{}: {change}", self.what));
    }
}
