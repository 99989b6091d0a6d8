//! `completion/complete`: a prompt argument completes from the values its input type allows
//! (an `enum` of strings), the `{id}` of a collection's item template from the collection's live
//! keys; both prefix-filtered, at most 100 values, with `total` and `hasMore`.

use super::generation::Generation;
use crate::failure::Failure;
use rmcp::model::{CompleteRequestParams, CompleteResult, CompletionInfo, Reference};
use serde_json::Value;

/// The values that complete `request` on `generation` (none when nothing is known).
pub(crate) async fn complete(
    generation: &Generation,
    request: &CompleteRequestParams,
) -> Result<CompleteResult, Failure> {
    let typed = &request.argument.value;
    let candidates = match &request.r#ref {
        Reference::Prompt(p) => match generation.prompts.get(&p.name) {
            Some(entry) => prompt_values(&(entry.descriptor().input)().schema, &request.argument.name),
            None => Vec::new(),
        },
        Reference::Resource(r) => {
            let template = generation
                .templates
                .iter()
                .find(|t| format!("{}{{id}}{}", t.prefix, t.suffix) == r.uri);
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
                        Err(f) => return Err(generation.link.after(&lease, f).await),
                    }
                }
                _ => Vec::new(),
            }
        }
        // A reference kind newer than this runtime: nothing to offer.
        _ => Vec::new(),
    };
    Ok(CompleteResult::new(capped(candidates, typed)))
}

/// The string `enum` values of property `name`, when it has them.
fn prompt_values(schema: &serde_json::Map<String, Value>, name: &str) -> Vec<String> {
    schema
        .get("properties")
        .and_then(|p| p.get(name))
        .and_then(|p| p.get("enum"))
        .and_then(Value::as_array)
        .map(|values| {
            values
                .iter()
                .filter_map(Value::as_str)
                .map(str::to_owned)
                .collect()
        })
        .unwrap_or_default()
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
}
