//! The rules of the schema bridge (see the parent module's doc): every local `$ref` inlined
//! (recursion cut where it would loop), `null` alternatives stripped, lone members folded,
//! objects opened and numeric formats dropped.

use schemars::Schema;
use schemars::transform::{Transform, transform_subschemas};
use serde_json::{Map, Value};

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

/// [`bridge`](super::bridge): every reference inlined and every rule applied, from the root.
pub(super) fn normalize(raw: Value) -> Value {
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

/// The generator transform behind "`Option<T>` adds no `null`".
#[derive(Clone, Debug)]
pub(super) struct NoNullAlternatives;

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
pub(super) fn is_null_arm(arm: &Value) -> bool {
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
