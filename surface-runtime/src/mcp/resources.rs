//! Resource placement and contents on the MCP face: where each exposed member is served (its
//! declared URI or template, else the runtime's `surface://` one), the refusals declared URIs
//! add to composition (a clash, a form on a member that is not exposed as a resource, a template
//! on a member that is not a collection), and the `resources/read` contents of each body form.

use crate::bundle::Member;
use crate::expose::Exposure;
use crate::failure::{Failure, FailureKind};
use crate::resource::{ResourceBody, ResourceForm, match_template};
use crate::spec::{MemberKind, MemberSpec};
use crate::table::{Owner, owner_phrase, resource_uri};
use base64::Engine;
use rmcp::model::ResourceContents;
use serde_json::Value;
use std::collections::{HashMap, HashSet};

/// What a resource URI reads.
#[derive(Clone, Debug)]
pub(crate) struct ResourceEntry {
    pub owner: Owner,
    pub member: &'static str,
    /// What a read answers (JSON, text, blob).
    pub body: ResourceBody,
    /// Whether its URI (or template) was declared by the author rather than the runtime's
    /// `surface://` default (defaults never overlap but where `roster_problems` says so).
    pub declared: bool,
    /// The declared scope a caller needs to see and read it (`resource(scope = …)`).
    pub scope: Option<&'static crate::Scope>,
}

/// A collection's item template, `prefix{id}suffix`.
#[derive(Clone, Debug)]
pub(crate) struct TemplateEntry {
    pub prefix: String,
    pub suffix: String,
    pub entry: ResourceEntry,
}

/// Where one member is served.
pub(crate) struct Placed {
    /// The member's own URI (a collection's: the whole collection).
    pub uri: String,
    /// A collection's item template, split at `{id}`.
    pub template: Option<(String, String)>,
    /// Whether the author declared the URI or template.
    pub declared: bool,
}

fn who(entry: &ResourceEntry) -> String {
    format!(
        "member \"{}\" {}",
        entry.member,
        owner_phrase(entry.owner.as_deref())
    )
}

/// Places member `m` (of the core, or of sibling `sibling`) by its declared form.
pub(crate) fn place(
    sibling: Option<&str>,
    m: &MemberSpec,
    form: ResourceForm,
    problems: &mut Vec<String>,
) -> Placed {
    let default = resource_uri(sibling, m.kind, m.name);
    let collection = m.kind == MemberKind::Collection;
    let default_template = collection.then(|| (format!("{default}/"), String::new()));
    let here = format!("member \"{}\" {}", m.name, owner_phrase(sibling));
    match (form.declared_uri(), form.template_parts()) {
        (None, _) => Placed {
            uri: default,
            template: default_template,
            declared: false,
        },
        (Some(_), Some((prefix, suffix))) if collection => Placed {
            uri: default,
            template: Some((prefix.to_owned(), suffix.to_owned())),
            declared: true,
        },
        (Some(t), Some(_)) => {
            problems.push(format!(
                "{here} declares the URI template \"{t}\", but only a collection's items are addressed by `{{id}}` — declare a plain URI (ResourceForm::uri)"
            ));
            Placed {
                uri: default,
                template: None,
                declared: false,
            }
        }
        (Some(uri), None) if !collection => Placed {
            uri: uri.to_owned(),
            template: None,
            declared: true,
        },
        (Some(uri), None) => {
            problems.push(format!(
                "{here} is a collection and declares the plain URI \"{uri}\" — declare its item template with `{{id}}` (ResourceForm::template)"
            ));
            Placed {
                uri: default,
                template: default_template,
                declared: false,
            }
        }
    }
}

/// Refuses a declared form whose key is not exposed as a resource by `member`.
pub(crate) fn unexposed_forms(sibling: Option<&str>, member: &Member, problems: &mut Vec<String>) {
    for (key, _) in &member.forms {
        let exposed = member
            .expose
            .entries()
            .iter()
            .any(|e| e.key == *key && e.exposure == Exposure::Resource);
        if !exposed {
            problems.push(format!(
                "a resource form is declared for \"{key}\" {}, which its expose map does not expose as a resource",
                owner_phrase(sibling)
            ));
        }
    }
}

/// The URIs and item templates one composition has claimed so far. Only a URI or template its
/// author declared can overlap another member's (the default ones are distinct by
/// construction), so a claim is checked against every claim only when it is declared, and
/// against the declared ones otherwise: a roster of many siblings composes in time linear in
/// its members, where scanning every claim per claim grew with their square.
#[derive(Default)]
pub(crate) struct Claims {
    resources: HashMap<String, ResourceEntry>,
    templates: Vec<TemplateEntry>,
    /// Every template's `(prefix, suffix)`.
    shown: HashSet<(String, String)>,
    declared_uris: Vec<String>,
    /// Indexes into `templates` of the declared ones.
    declared_templates: Vec<usize>,
}

impl Claims {
    /// The claimed URIs and templates.
    pub(crate) fn into_parts(self) -> (HashMap<String, ResourceEntry>, Vec<TemplateEntry>) {
        (self.resources, self.templates)
    }

    /// Claims `uri`, refusing one another member (or a collection's template) already holds.
    pub(crate) fn claim(&mut self, uri: String, entry: ResourceEntry, problems: &mut Vec<String>) {
        if let Some(first) = self.resources.get(&uri) {
            problems.push(format!(
                "resource URI \"{uri}\" is claimed by both {} and {} — declare another URI for one",
                who(first),
                who(&entry)
            ));
            return;
        }
        let overlaps = |t: &TemplateEntry| match_template(&t.prefix, &t.suffix, &uri).is_some();
        let overlapping = if entry.declared {
            self.templates.iter().find(|t| overlaps(t))
        } else {
            self.declared_templates
                .iter()
                .map(|&i| &self.templates[i])
                .find(|t| overlaps(t))
        };
        if let Some(t) = overlapping {
            problems.push(format!(
                "resource URI \"{uri}\" of {} is also an item of {}'s template \"{}{{id}}{}\" — declare another URI for one",
                who(&entry),
                who(&t.entry),
                t.prefix,
                t.suffix
            ));
            return;
        }
        if entry.declared {
            self.declared_uris.push(uri.clone());
        }
        self.resources.insert(uri, entry);
    }

    /// Claims an item template, refusing one another collection (or a member's URI) already
    /// holds.
    pub(crate) fn claim_template(&mut self, template: TemplateEntry, problems: &mut Vec<String>) {
        let shown = format!("{}{{id}}{}", template.prefix, template.suffix);
        let key = (template.prefix.clone(), template.suffix.clone());
        if self.shown.contains(&key) {
            if let Some(first) = self
                .templates
                .iter()
                .find(|t| t.prefix == template.prefix && t.suffix == template.suffix)
            {
                problems.push(format!(
                    "resource template \"{shown}\" is claimed by both {} and {} — declare another template for one",
                    who(&first.entry),
                    who(&template.entry)
                ));
            }
            return;
        }
        let overlaps = |uri: &str| match_template(&template.prefix, &template.suffix, uri).is_some();
        let overlapping = if template.entry.declared {
            self.resources.iter().find(|(uri, _)| overlaps(uri))
        } else {
            self.declared_uris
                .iter()
                .filter_map(|uri| self.resources.get_key_value(uri))
                .find(|(uri, _)| overlaps(uri))
        };
        if let Some((uri, e)) = overlapping {
            problems.push(format!(
                "resource URI \"{uri}\" of {} is also an item of {}'s template \"{shown}\" — declare another URI for one",
                who(e),
                who(&template.entry)
            ));
            return;
        }
        self.shown.insert(key);
        if template.entry.declared {
            self.declared_templates.push(self.templates.len());
        }
        self.templates.push(template);
    }
}

/// The `resources/read` contents of `value` in `body`'s form.
pub(crate) fn contents(body: ResourceBody, uri: String, value: Value) -> Result<ResourceContents, Failure> {
    Ok(match body {
        ResourceBody::Json => {
            let text = serde_json::to_string_pretty(&value).unwrap_or_else(|e| format!("<unprintable: {e}>"));
            ResourceContents::text(text, uri).with_mime_type(body.mime())
        }
        ResourceBody::Text(mime) => {
            let text = match value {
                Value::String(s) => s,
                other => {
                    serde_json::to_string_pretty(&other).unwrap_or_else(|e| format!("<unprintable: {e}>"))
                }
            };
            ResourceContents::text(text, uri).with_mime_type(mime)
        }
        ResourceBody::Blob(mime) => {
            let bytes = bytes_of(value)?;
            let data = base64::engine::general_purpose::STANDARD.encode(bytes);
            ResourceContents::blob(data, uri).with_mime_type(mime)
        }
    })
}

/// The bytes of a blob member's value: a byte array (how serde writes `Vec<u8>`) or a string.
fn bytes_of(value: Value) -> Result<Vec<u8>, Failure> {
    match value {
        Value::String(s) => Ok(s.into_bytes()),
        Value::Array(items) => items
            .iter()
            .map(|v| v.as_u64().and_then(|n| u8::try_from(n).ok()))
            .collect::<Option<Vec<u8>>>()
            .ok_or_else(not_bytes),
        _ => Err(not_bytes()),
    }
}

fn not_bytes() -> Failure {
    Failure::new(
        FailureKind::Error,
        "a blob resource's value must be bytes (a Vec<u8>) or a string",
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn bodies_read_in_their_form() {
        let text = contents(ResourceBody::Text("text/plain"), "t://a".into(), json!("hi")).unwrap();
        assert_eq!(
            serde_json::to_value(text).unwrap(),
            json!({"uri": "t://a", "mimeType": "text/plain", "text": "hi"})
        );
        let blob = contents(ResourceBody::Blob("image/png"), "t://b".into(), json!([1, 2, 3])).unwrap();
        assert_eq!(
            serde_json::to_value(blob).unwrap(),
            json!({"uri": "t://b", "mimeType": "image/png", "blob": "AQID"})
        );
        assert!(contents(ResourceBody::Blob("image/png"), "t://b".into(), json!([256])).is_err());
    }
}
