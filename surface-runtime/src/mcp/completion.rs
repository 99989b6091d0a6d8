//! `completion/complete`: a prompt argument completes from the values its input type allows
//! (an `enum` of strings), the `{id}` of a collection's item template from the collection's live
//! keys; both prefix-filtered, at most 100 values, with `total` and `hasMore`. A reference to a
//! prompt or template this server does not serve (or not to this caller: outside its scopes) is
//! refused (`-32602`), as `prompts/get` of it is.

use super::generation::Generation;
use crate::failure::Failure;
use rmcp::model::{CompleteRequestParams, CompleteResult, CompletionInfo, Reference};
use serde_json::Value;

/// Why `completion/complete` answers no completion at all.
pub(crate) enum Refusal {
    /// The reference names no served prompt or template (`-32602`).
    Unknown(String),
    /// Reading the live keys failed.
    Failed(Failure),
}

impl From<Failure> for Refusal {
    fn from(f: Failure) -> Self {
        Refusal::Failed(f)
    }
}

/// The values that complete `request` on `generation` (none when the argument has no known
/// values).
pub(crate) async fn complete(
    generation: &Generation,
    request: &CompleteRequestParams,
    principal: Option<&crate::Principal>,
) -> Result<CompleteResult, Refusal> {
    let typed = &request.argument.value;
    let candidates = match &request.r#ref {
        Reference::Prompt(p) => match generation.prompts.get(&p.name) {
            Some(entry) => prompt_values(&(entry.descriptor().input)().schema, &request.argument.name),
            None => return Err(Refusal::Unknown(format!("unknown prompt \"{}\"", p.name))),
        },
        Reference::Resource(r) => {
            // A template outside the caller's scopes is unknown to it.
            let template = generation
                .templates
                .iter()
                .find(|t| format!("{}{{id}}{}", t.prefix, t.suffix) == r.uri)
                .filter(|_| generation.reaches_template(&r.uri, principal));
            match template {
                Some(t) if request.argument.name == "id" => {
                    let lease = generation.link.lease().await?;
                    let keys = lease
                        .bundle
                        .dispatch_for(t.entry.owner.as_deref())?
                        .read(t.entry.member)
                        .await;
                    match keys {
                        Ok(keys) => ids(keys),
                        Err(f) => return Err(Refusal::Failed(generation.link.after(&lease, f).await)),
                    }
                }
                Some(_) => Vec::new(),
                None => {
                    return Err(Refusal::Unknown(format!(
                        "unknown resource template \"{}\"",
                        r.uri
                    )));
                }
            }
        }
        // A reference kind newer than this runtime: nothing to offer.
        _ => Vec::new(),
    };
    Ok(CompleteResult::new(capped(candidates, typed)))
}

/// The string values property `name` allows, when it lists them: an `enum`, or `oneOf`/`anyOf`
/// arms of one `const` each (what schemars writes for an enum whose variants have doc comments).
fn prompt_values(schema: &serde_json::Map<String, Value>, name: &str) -> Vec<String> {
    let Some(property) = schema.get("properties").and_then(|p| p.get(name)) else {
        return Vec::new();
    };
    let strings = |values: &[Value]| -> Vec<String> {
        values
            .iter()
            .filter_map(Value::as_str)
            .map(str::to_owned)
            .collect()
    };
    if let Some(values) = property.get("enum").and_then(Value::as_array) {
        return strings(values);
    }
    let arms = ["oneOf", "anyOf"]
        .iter()
        .find_map(|k| property.get(*k).and_then(Value::as_array));
    let Some(arms) = arms else {
        return Vec::new();
    };
    let consts: Vec<Value> = arms
        .iter()
        .flat_map(|arm| match (arm.get("const"), arm.get("enum")) {
            (Some(c), _) => vec![c.clone()],
            (None, Some(Value::Array(values))) => values.clone(),
            _ => Vec::new(),
        })
        .collect();
    strings(&consts)
}

/// A collection read's keys as item ids.
fn ids(keys: Value) -> Vec<String> {
    match keys {
        Value::Array(keys) => keys
            .into_iter()
            .map(|k| match k {
                Value::String(s) => s,
                other => other.to_string(),
            })
            .collect(),
        _ => Vec::new(),
    }
}

/// The candidates starting with `typed`, sorted, at most 100, with the total and whether more.
fn capped(candidates: Vec<String>, typed: &str) -> CompletionInfo {
    let mut matching: Vec<String> = candidates.into_iter().filter(|c| c.starts_with(typed)).collect();
    matching.sort();
    let total = matching.len();
    matching.truncate(CompletionInfo::MAX_VALUES);
    let mut info = CompletionInfo::default();
    info.has_more = Some(total > matching.len());
    info.total = Some(u32::try_from(total).unwrap_or(u32::MAX));
    info.values = matching;
    info
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn completions_are_prefix_filtered_and_capped() {
        let many: Vec<String> = (0..150).map(|i| format!("k{i:03}")).collect();
        let info = capped(many, "k");
        assert_eq!(info.values.len(), 100);
        assert_eq!((info.total, info.has_more), (Some(150), Some(true)));
        let info = capped(vec!["park".into(), "paris".into(), "zoo".into()], "par");
        assert_eq!(info.values, ["paris", "park"]);
        assert_eq!(info.has_more, Some(false));
        assert_eq!(ids(serde_json::json!(["a", 7])), ["a", "7"]);
    }

    #[test]
    fn an_enum_with_documented_variants_completes_too() {
        let schema = serde_json::json!({"properties": {
            "plain": {"type": "string", "enum": ["a", "b"]},
            "documented": {"oneOf": [
                {"const": "running", "description": "Processes that run.", "type": "string"},
                {"const": "sleeping", "description": "Processes that sleep.", "type": "string"}
            ]}
        }});
        let schema = schema.as_object().unwrap();
        assert_eq!(prompt_values(schema, "plain"), ["a", "b"]);
        assert_eq!(prompt_values(schema, "documented"), ["running", "sleeping"]);
        assert!(prompt_values(schema, "missing").is_empty());
    }
}
