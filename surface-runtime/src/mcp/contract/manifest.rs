//! [`Manifest`]: the MCP face as a checked-in JSON manifest, captured from a served bundle and
//! compared with another.

use super::changes::Changes;
use super::schemas::Schemas;
use crate::mcp::ServedMcp;
use serde_json::{Map, Value};
use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

/// The manifest format's name and version, its first key.
pub const FORMAT: &str = "surface-contract/1";

/// The MCP face of a server, by name: what [`Manifest::of`] captures and the manifest file holds.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Manifest {
    /// Each tool as `tools/list` lists it (without `name`), by name.
    pub tools: BTreeMap<String, Value>,
    /// Each resource as `resources/list` lists it (without `uri`), by URI.
    pub resources: BTreeMap<String, Value>,
    /// Each template as `resources/templates/list` lists it (without `uriTemplate`), by
    /// template.
    pub templates: BTreeMap<String, Value>,
    /// Each scope an exposure names, by wire string: `{"impliedBy": [broader scopes]}`.
    pub scopes: BTreeMap<String, Value>,
}

/// What a JSON value is, for a sentence.
fn kind(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

/// Moves `key` out of a listed entry: the map key of the manifest.
fn keyed(items: impl IntoIterator<Item = Value>, key: &str) -> BTreeMap<String, Value> {
    items
        .into_iter()
        .filter_map(|mut item| {
            let name = item.as_object_mut()?.remove(key)?;
            Some((name.as_str()?.to_owned(), item))
        })
        .collect()
}

fn listed<T: serde::Serialize>(items: &[T]) -> Vec<Value> {
    items
        .iter()
        .filter_map(|i| serde_json::to_value(i).ok())
        .collect()
}

impl Manifest {
    /// The face `served` advertises now (its current generation's three lists).
    pub fn of(served: &ServedMcp) -> Manifest {
        let generation = served.shared.current();
        let mut scopes = BTreeMap::new();
        let mut scoped = |mut section: BTreeMap<String, Value>,
                          scope_of: &dyn Fn(&str) -> Option<&'static crate::Scope>| {
            for (key, value) in section.iter_mut() {
                if let (Some(scope), Some(object)) = (scope_of(key), value.as_object_mut()) {
                    object.insert("scope".to_owned(), scope.wire.into());
                    scopes.insert(
                        scope.wire.to_owned(),
                        serde_json::json!({ "impliedBy": scope.implied_by }),
                    );
                }
            }
            section
        };
        let tools = scoped(keyed(listed(&generation.tool_list), "name"), &|n| {
            generation.tool_scope(n)
        });
        let resources = scoped(keyed(listed(&generation.resource_list), "uri"), &|u| {
            generation.uri_scope(u)
        });
        let templates = scoped(keyed(listed(&generation.template_list), "uriTemplate"), &|t| {
            generation.template_scope(t)
        });
        Manifest {
            tools,
            resources,
            templates,
            scopes,
        }
    }

    /// The manifest file's text: pretty JSON, keys sorted, ending in a newline.
    pub fn to_json(&self) -> String {
        let mut root = Map::new();
        root.insert("format".to_owned(), FORMAT.into());
        let section = |m: &BTreeMap<String, Value>| Value::Object(m.clone().into_iter().collect());
        root.insert("tools".to_owned(), section(&self.tools));
        root.insert("resources".to_owned(), section(&self.resources));
        root.insert("templates".to_owned(), section(&self.templates));
        root.insert("scopes".to_owned(), section(&self.scopes));
        let mut text = serde_json::to_string_pretty(&Value::Object(root)).unwrap_or_default();
        text.push('\n');
        text
    }

    /// Parses a manifest file's text: a JSON object with the `tools`, `resources` and
    /// `templates` objects [`Manifest::to_json`] writes (and `format`, if present, this one).
    /// Anything else (`null`, `[]`, `{}`, a number) is refused with a sentence: an empty or
    /// corrupt file must not pass the gate as a face with nothing to break.
    pub fn from_json(text: &str) -> Result<Manifest, String> {
        let root: Value = serde_json::from_str(text).map_err(|e| format!("the manifest is not JSON: {e}"))?;
        let Value::Object(root) = root else {
            return Err(format!(
                "the manifest is {}, not an object with `tools`, `resources` and `templates` (write one with `write`)",
                kind(&root)
            ));
        };
        if let Some(format) = root.get("format")
            && format != FORMAT
        {
            return Err(format!(
                "the manifest's format is {format}, and this surface reads \"{FORMAT}\""
            ));
        }
        let section = |name: &str| -> Result<BTreeMap<String, Value>, String> {
            match root.get(name) {
                None => Err(format!(
                    "the manifest has no `{name}` object: it is not a manifest `write` wrote"
                )),
                Some(Value::Object(m)) => Ok(m.clone().into_iter().collect()),
                Some(other) => Err(format!(
                    "the manifest's `{name}` is {}, not an object",
                    kind(other)
                )),
            }
        };
        Ok(Manifest {
            tools: section("tools")?,
            resources: section("resources")?,
            templates: section("templates")?,
            // Manifests written before scopes have none.
            scopes: match root.get("scopes") {
                None => BTreeMap::new(),
                Some(_) => section("scopes")?,
            },
        })
    }

    /// Reads a manifest file.
    pub fn read(path: &Path) -> Result<Manifest, String> {
        let text = std::fs::read_to_string(path)
            .map_err(|e| format!("{} could not be read: {e}", path.display()))?;
        Manifest::from_json(&text).map_err(|e| format!("{}: {e}", path.display()))
    }

    /// Writes this manifest to `path`.
    pub fn write(&self, path: &Path) -> Result<(), String> {
        std::fs::write(path, self.to_json())
            .map_err(|e| format!("{} could not be written: {e}", path.display()))
    }

    /// What changed from `old` (the checked-in manifest) to `new` (the live face).
    pub fn compare(old: &Manifest, new: &Manifest) -> Changes {
        let mut changes = Changes::default();
        for (name, before) in &old.tools {
            let what = format!("tool \"{name}\"");
            match new.tools.get(name) {
                None => changes.breaking.push(format!("{what} was removed (or renamed)")),
                Some(after) => {
                    compare_tool(&what, before, after, &mut changes);
                    compare_scope(&what, (before, old), (after, new), &mut changes);
                }
            }
        }
        for name in new.tools.keys().filter(|n| !old.tools.contains_key(*n)) {
            changes.additive.push(format!("tool \"{name}\" was added"));
        }
        compare_addressed("resource", &old.resources, &new.resources, &mut changes);
        compare_addressed("template", &old.templates, &new.templates, &mut changes);
        let addressed = [
            ("resource", &old.resources, &new.resources),
            ("template", &old.templates, &new.templates),
        ];
        for (kind, before_all, after_all) in addressed {
            for (uri, before) in before_all {
                if let Some(after) = after_all.get(uri) {
                    compare_scope(
                        &format!("{kind} \"{uri}\""),
                        (before, old),
                        (after, new),
                        &mut changes,
                    );
                }
            }
        }
        changes
    }
}

fn compare_addressed(
    kind: &str,
    old: &BTreeMap<String, Value>,
    new: &BTreeMap<String, Value>,
    changes: &mut Changes,
) {
    for (uri, before) in old {
        let what = format!("{kind} \"{uri}\"");
        let Some(after) = new.get(uri) else {
            changes.breaking.push(format!("{what} was removed (or renamed)"));
            continue;
        };
        if before.get("mimeType") != after.get("mimeType") {
            changes.breaking.push(format!(
                "{what}: its MIME type changed from {} to {}",
                shown(before.get("mimeType")),
                shown(after.get("mimeType"))
            ));
        }
        for key in ["name", "title", "description"] {
            if before.get(key) != after.get(key) {
                changes.additive.push(format!("{what}: its {key} changed"));
            }
        }
    }
    for uri in new.keys().filter(|u| !old.contains_key(*u)) {
        changes.additive.push(format!("{kind} \"{uri}\" was added"));
    }
}

/// Who holds what reaches `scope` under `manifest`'s hierarchy: it and the broader scopes.
fn holders(scope: &str, manifest: &Manifest) -> BTreeSet<String> {
    let broader = manifest
        .scopes
        .get(scope)
        .and_then(|s| s.get("impliedBy"))
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(Value::as_str)
        .map(str::to_owned);
    std::iter::once(scope.to_owned()).chain(broader).collect()
}

/// An exposure's scope: narrowed (fewer callers reach it) is breaking, widened is additive.
fn compare_scope(
    what: &str,
    (before, old): (&Value, &Manifest),
    (after, new): (&Value, &Manifest),
    changes: &mut Changes,
) {
    let scope = |v: &Value| v.get("scope").and_then(Value::as_str).map(str::to_owned);
    match (scope(before), scope(after)) {
        (None, None) => {}
        (None, Some(b)) => changes.breaking.push(format!("{what} now needs the scope {b}")),
        (Some(a), None) => changes
            .additive
            .push(format!("{what} no longer needs the scope {a}")),
        (Some(a), Some(b)) => {
            let (reached, reach) = (holders(&a, old), holders(&b, new));
            let lost: Vec<&str> = reached.difference(&reach).map(String::as_str).collect();
            if !lost.is_empty() {
                changes.breaking.push(format!(
                    "{what}: its scope narrowed from {a} to {b} (a caller holding {} no longer reaches it)",
                    lost.join(" or ")
                ));
            } else if a != b || reach.len() > reached.len() {
                changes
                    .additive
                    .push(format!("{what}: its scope widened from {a} to {b}"));
            }
        }
    }
}

fn shown(v: Option<&Value>) -> String {
    v.map_or_else(|| "none".to_owned(), Value::to_string)
}

fn hint(tool: &Value, name: &str) -> Option<bool> {
    tool.get("annotations")?.get(name)?.as_bool()
}

fn compare_tool(what: &str, before: &Value, after: &Value, changes: &mut Changes) {
    let read_only = |t: &Value| hint(t, "readOnlyHint") == Some(true);
    match (read_only(before), read_only(after)) {
        (true, false) => changes
            .breaking
            .push(format!("{what} was read-only and now mutates")),
        (false, true) => changes.additive.push(format!("{what} now is read-only")),
        _ => {}
    }
    // Absent, `destructiveHint` means "may be destructive" (the MCP default).
    let destructive = |t: &Value| !read_only(t) && hint(t, "destructiveHint") != Some(false);
    if !destructive(before) && destructive(after) && read_only(before) == read_only(after) {
        changes.breaking.push(format!("{what} now is destructive"));
    }
    for key in ["title", "description"] {
        if before.get(key) != after.get(key) {
            changes.additive.push(format!("{what}: its {key} changed"));
        }
    }
    let empty = Value::Object(Map::new());
    let input = |t: &'_ Value| t.get("inputSchema").cloned().unwrap_or_else(|| empty.clone());
    Schemas { what, changes }.compare(&input(before), &input(after), "");
}
