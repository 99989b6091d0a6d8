//! The contract: the whole MCP face of a server as a checked-in JSON manifest, and a gate that
//! fails on breaking changes to it.
//!
//! A user's agents and prompts depend on tool names, input schemas and resource URIs.
//! [`Manifest::of`] captures what a served bundle advertises now — every tool (name, title,
//! description, input and output schemas, annotations), resource and resource template, exactly
//! as `tools/list`, `resources/list` and `resources/templates/list` answer — and
//! [`Manifest::compare`] sorts the differences from a checked-in manifest into
//! [`Changes::breaking`] and [`Changes::additive`]:
//!
//! | breaking (fails the check) | additive (printed) |
//! |---|---|
//! | a tool, resource or template removed (or renamed) | a tool, resource or template added |
//! | a required input field added, or an optional one made required | an optional input field added, a required one made optional |
//! | an input field removed | |
//! | a field's type narrowed (`number` → `integer`, a type or enum value dropped, a bound tightened, a variant removed, an object closed) | a type widened, an enum value added, a bound loosened, a variant added |
//! | a read-only tool turned mutating (`readOnlyHint` true → false) or made destructive | a mutating tool made read-only; a title or description changed |
//! | a resource's MIME type changed | |
//! | an exposure's scope narrowed (one added, or changed to one fewer callers hold, or a broader scope no longer implying it) | a scope dropped or widened |
//!
//! Each tool, resource and template records the scope a caller needs (`"scope": "ops.read"`,
//! absent when it needs none), and `scopes` records each declared scope with the broader
//! ones implying it, so a change of hierarchy is judged too.
//!
//! [`check`] is the gate for `cargo test`; [`command`] is the `check` / `write` command line
//! a small bin or example wraps (this repository's: `cargo run --example contract -- check`).
//! The manifest holds no server version and no instructions: they change without breaking
//! anything an agent relies on. (surface serves no prompts yet; when it does, they join it.)
//!
//! ```
//! use serde_json::json;
//! use surface_runtime::mcp::contract::Manifest;
//!
//! let old = Manifest::from_json(&json!({
//!     "tools": { "proc_kill": {
//!         "inputSchema": { "type": "object", "properties": { "pid": { "type": "integer" } }, "required": ["pid"] },
//!         "annotations": { "readOnlyHint": false }
//!     } },
//!     "resources": {}, "templates": {}
//! }).to_string()).unwrap();
//! let mut new = old.clone();
//! new.tools.get_mut("proc_kill").unwrap()["inputSchema"]["properties"]["signal"] = json!({ "type": "string" });
//! new.tools.get_mut("proc_kill").unwrap()["inputSchema"]["required"] = json!(["pid", "signal"]);
//! let changes = Manifest::compare(&old, &new);
//! assert_eq!(changes.breaking, ["tool \"proc_kill\": required input field `signal` was added"]);
//! ```

use super::ServedMcp;
use serde_json::{Map, Value};
use std::collections::{BTreeMap, BTreeSet};
use std::fmt;
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

/// What changed between a manifest and the live face.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Changes {
    /// Changes that can break an agent or a prompt written against the manifest.
    pub breaking: Vec<String>,
    /// Changes nothing written against the manifest can notice going wrong.
    pub additive: Vec<String>,
}

impl Changes {
    /// Whether nothing changed at all.
    pub fn is_empty(&self) -> bool {
        self.breaking.is_empty() && self.additive.is_empty()
    }
}

impl fmt::Display for Changes {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for b in &self.breaking {
            writeln!(f, "breaking: {b}")?;
        }
        for a in &self.additive {
            writeln!(f, "additive: {a}")?;
        }
        Ok(())
    }
}

/// Why a contract check failed.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ContractError {
    /// The manifest could not be read or parsed.
    Manifest(String),
    /// The live face breaks the manifest; every change is listed (additive ones too).
    Breaking(Changes),
}

impl fmt::Display for ContractError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ContractError::Manifest(why) => write!(f, "surface-contract: {why}"),
            ContractError::Breaking(changes) => write!(
                f,
                "surface-contract: the live face breaks the manifest ({} breaking change(s)); restore what agents rely on, or write a new manifest on purpose:\n{changes}",
                changes.breaking.len()
            ),
        }
    }
}

impl std::error::Error for ContractError {}

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

/// Compares one tool's input schemas, node by node.
struct Schemas<'a> {
    what: &'a str,
    changes: &'a mut Changes,
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

    fn compare(&mut self, old: &Value, new: &Value, path: &str) {
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

/// Compares the face `served` advertises now with the manifest at `path`: `Ok` with every
/// (additive) change when nothing breaks, or the breaking changes. For `cargo test`:
///
/// ```no_run
/// # fn served() -> surface_runtime::mcp::ServedMcp { unimplemented!() }
/// let changes = surface_runtime::mcp::contract::check(&served(), "examples/ops.contract.json".as_ref())
///     .unwrap_or_else(|e| panic!("{e}"));
/// print!("{changes}"); // additive changes are printed, not failed on
/// ```
pub fn check(served: &ServedMcp, path: &Path) -> Result<Changes, ContractError> {
    let manifest = Manifest::read(path).map_err(ContractError::Manifest)?;
    let changes = Manifest::compare(&manifest, &Manifest::of(served));
    if changes.breaking.is_empty() {
        Ok(changes)
    } else {
        Err(ContractError::Breaking(changes))
    }
}

/// The `check` / `write` command line of a contract bin: `check [PATH]` compares the live face
/// with the manifest (default `default_path`) and fails on a breaking change, printing additive
/// ones; `write [PATH]` writes the manifest. Answers the text to print and whether it
/// succeeded. A bin is three lines:
///
/// ```no_run
/// # fn served() -> surface_runtime::mcp::ServedMcp { unimplemented!() }
/// let (ok, text) = surface_runtime::mcp::contract::command(&served(), std::env::args().skip(1), "ops.contract.json".as_ref());
/// print!("{text}");
/// std::process::exit(if ok { 0 } else { 1 });
/// ```
pub fn command(
    served: &ServedMcp,
    args: impl IntoIterator<Item = String>,
    default_path: &Path,
) -> (bool, String) {
    let args: Vec<String> = args.into_iter().collect();
    let path = args.get(1).map_or(default_path, |p| Path::new(p.as_str()));
    match args.first().map(String::as_str) {
        Some("write") => match Manifest::of(served).write(path) {
            Ok(()) => (true, format!("surface-contract: wrote {}\n", path.display())),
            Err(e) => (false, format!("surface-contract: {e}\n")),
        },
        Some("check") => match check(served, path) {
            Ok(changes) if changes.is_empty() => (
                true,
                format!("surface-contract: the live face matches {}\n", path.display()),
            ),
            Ok(changes) => (
                true,
                format!(
                    "{changes}surface-contract: no breaking change against {} ({} additive; `write` to record them)\n",
                    path.display(),
                    changes.additive.len()
                ),
            ),
            Err(e) => (false, format!("{e}\n")),
        },
        _ => (
            false,
            format!(
                "usage: contract check|write [PATH]   (PATH defaults to {})\n",
                default_path.display()
            ),
        ),
    }
}
