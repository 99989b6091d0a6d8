//! Skills on the MCP face (the skills extension, `io.modelcontextprotocol/skills`, SEP-2640):
//! the skill table of a generation (each member's skills at `skill://[<sibling>/]<name>/SKILL.md`,
//! every URI and every key they use checked once), `skills/list`, `skills/get` and the
//! `resources/read` of a `SKILL.md`.
//!
//! A skill is one file, its `SKILL.md`, rendered once per generation (the served names of what
//! it uses depend on where its member sits), so its entry's digest and size are fixed for the
//! generation. A caller reaches a skill when its scopes reach every tool and resource the skill
//! uses; any other skill answers as if it did not exist (over HTTP, a `403` step-up first).

use super::resources::ResourceEntry;
use crate::Principal;
use crate::Scope;
use crate::bundle::{Member, Siblings};
use crate::expose::Exposure;
use crate::scopes::reaches;
use crate::table::ToolTarget;
use crate::table::{ToolRow, owner_phrase};
use rmcp::model::{
    GetSkillResult, ListSkillsResult, ReadResourceResult, Resource, ResourceContents, Skill,
    SkillFrontmatter, SkillResource, SkillResources,
};
use std::collections::HashMap;
use std::sync::Arc;

/// The MIME type of a `SKILL.md` (the extension's SHOULD).
const MARKDOWN: &str = "text/markdown";
/// The largest skill every conforming host must load (the extension's limit, 16 MiB).
const MAX_SKILL_BYTES: usize = 16 * 1024 * 1024;

/// One served skill: its entry, its file, and the scopes a caller needs to be shown it.
pub(crate) struct SkillEntry {
    pub uri: String,
    pub text: String,
    pub entry: Skill,
    pub resource: Resource,
    /// The scope of each tool and resource it uses that names one.
    pub scopes: Vec<&'static Scope>,
}

/// The skills of a generation, by `SKILL.md` URI and in listing order.
#[derive(Default)]
pub(crate) struct Skills {
    by_uri: HashMap<String, Arc<SkillEntry>>,
    list: Vec<Arc<SkillEntry>>,
}

impl Skills {
    pub(crate) fn is_empty(&self) -> bool {
        self.list.is_empty()
    }

    pub(crate) fn get(&self, uri: &str) -> Option<&Arc<SkillEntry>> {
        self.by_uri.get(uri)
    }

    /// The `resources/list` rows of the skills' files.
    pub(crate) fn resources(&self) -> impl Iterator<Item = Resource> + '_ {
        self.list.iter().map(|s| s.resource.clone())
    }
}

/// What the members' skills serve, in core-then-siblings order; every mistake a sentence in
/// `problems`.
pub(crate) fn skill_table(
    core: Option<&Member>,
    siblings: &Siblings,
    rows: &[ToolRow],
    resources: &HashMap<String, ResourceEntry>,
    problems: &mut Vec<String>,
) -> Skills {
    let members = core
        .map(|c| (None, c))
        .into_iter()
        .chain(siblings.iter().map(|(k, m)| (Some(k.as_str()), m)));
    let mut skills = Skills::default();
    for (sibling, member) in members {
        for (skill, foreign) in &member.skills {
            let owner = owner_phrase(sibling);
            if let Some(surface) = foreign {
                problems.push(format!(
                    "skill \"{}\" {owner} is declared over `{surface}`'s expose map, not `{}`'s: hand it to the member that serves `{surface}`",
                    skill.name, member.spec.name
                ));
                continue;
            }
            let uri = match sibling {
                Some(key) => format!("skill://{key}/{}/SKILL.md", skill.name),
                None => format!("skill://{}/SKILL.md", skill.name),
            };
            if skills.by_uri.contains_key(&uri) || resources.contains_key(&uri) {
                problems.push(format!(
                    "skill \"{}\" {owner} is served at {uri}, which is already served: give one of them another name",
                    skill.name
                ));
                continue;
            }
            let mut served = Vec::new();
            let mut scopes = Vec::new();
            for key in skill.uses {
                let line = match member.expose.get(key) {
                    Some(Exposure::Tool { .. }) => {
                        tool_name(rows, sibling, key).map(|n| format!("tool `{n}`"))
                    }
                    Some(Exposure::Resource) => resource_line(resources, sibling, key),
                    None => None,
                };
                let Some(line) = line else {
                    problems.push(format!(
                        "skill \"{}\" {owner} uses \"{key}\", which the expose map of {} does not expose: expose it, or leave it out of the skill",
                        skill.name, member.spec.name
                    ));
                    continue;
                };
                served.push(line);
                scopes.extend(member.expose.scope_of(key));
            }
            let text = skill.skill_md(&served);
            if text.len() > MAX_SKILL_BYTES {
                problems.push(format!(
                    "skill \"{}\" {owner} is {} bytes, over the 16 MiB a host must accept: shorten its instructions",
                    skill.name,
                    text.len()
                ));
                continue;
            }
            let entry = Skill::new(
                uri.clone(),
                SkillFrontmatter::new(skill.name, skill.description),
                SkillResources::Files(vec![SkillResource::from_bytes(uri.clone(), text.as_bytes())]),
            );
            let resource = Resource::new(uri.clone(), skill.name)
                .with_description(skill.description)
                .with_mime_type(MARKDOWN);
            let served = Arc::new(SkillEntry {
                uri: uri.clone(),
                text,
                entry,
                resource,
                scopes,
            });
            skills.by_uri.insert(uri, served.clone());
            skills.list.push(served);
        }
    }
    skills
}

/// The served name of procedure `key` of the member at `sibling`.
fn tool_name<'a>(rows: &'a [ToolRow], sibling: Option<&str>, key: &str) -> Option<&'a str> {
    rows.iter()
        .find(|r| {
            matches!(&r.entry.target, ToolTarget::Procedure { owner, procedure, .. }
                if owner.as_deref() == sibling && *procedure == key)
        })
        .map(|r| r.name.as_str())
}

/// "resource `<uri>`" for member `key` of the member at `sibling`.
fn resource_line(
    resources: &HashMap<String, ResourceEntry>,
    sibling: Option<&str>,
    key: &str,
) -> Option<String> {
    let ours = |e: &ResourceEntry| e.owner.as_deref() == sibling && e.member == key;
    let (uri, _) = resources.iter().find(|(_, e)| ours(e))?;
    Some(format!("resource `{uri}`"))
}

impl SkillEntry {
    /// Whether `principal` reaches every tool and resource this skill uses.
    pub(crate) fn reached_by(&self, principal: Option<&Principal>) -> bool {
        self.scopes.iter().all(|s| reaches(Some(s), principal))
    }

    /// The one scope that grants all it needs, if one does (else the first it needs).
    pub(crate) fn scope(&self) -> Option<&'static Scope> {
        let covers = |s: &Scope| self.scopes.iter().all(|t| t.granted_by(&[s.wire]));
        self.scopes
            .iter()
            .copied()
            .find(|s| covers(s))
            .or_else(|| self.scopes.first().copied())
    }

    /// The `resources/read` answer of its `SKILL.md`.
    pub(crate) fn read(&self) -> ReadResourceResult {
        ReadResourceResult::new(vec![
            ResourceContents::text(self.text.clone(), self.uri.clone()).with_mime_type(MARKDOWN),
        ])
    }
}

impl Skills {
    /// `skills/list`: every skill `principal` reaches.
    pub(crate) fn list_reached(&self, principal: Option<&Principal>) -> ListSkillsResult {
        let skills = self
            .list
            .iter()
            .filter(|s| s.reached_by(principal))
            .map(|s| s.entry.clone())
            .collect();
        ListSkillsResult::with_all_items(skills)
    }

    /// `skills/get`: the entry of the skill at `uri`, or `-32602` when none is served there for
    /// `principal` (the extension's code for an unknown skill).
    pub(crate) fn get_reached(
        &self,
        uri: &str,
        principal: Option<&Principal>,
    ) -> Result<GetSkillResult, rmcp::ErrorData> {
        match self.get(uri) {
            Some(s) if s.reached_by(principal) => Ok(GetSkillResult::new(s.entry.clone())),
            _ => Err(rmcp::ErrorData::invalid_params(
                super::results::branded(&format!("no skill is served at {uri}")),
                Some(serde_json::json!({ "uri": uri })),
            )),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_scope_covers_what_it_implies() {
        const READ: Scope = Scope {
            name: "read",
            wire: "ops.read",
            implied_by: &["ops.admin"],
        };
        const ADMIN: Scope = Scope {
            name: "admin",
            wire: "ops.admin",
            implied_by: &[],
        };
        let entry = |scopes: Vec<&'static Scope>| SkillEntry {
            uri: String::new(),
            text: String::new(),
            entry: Skill::new(
                "skill://a/SKILL.md",
                SkillFrontmatter::new("a", "b"),
                SkillResources::Dynamic,
            ),
            resource: Resource::new("skill://a/SKILL.md", "a"),
            scopes,
        };
        assert_eq!(
            entry(vec![&READ, &ADMIN]).scope().map(|s| s.wire),
            Some("ops.admin")
        );
        assert_eq!(entry(vec![&READ]).scope().map(|s| s.wire), Some("ops.read"));
        assert_eq!(entry(Vec::new()).scope().map(|s| s.wire), None);
    }
}
