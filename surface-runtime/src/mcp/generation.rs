//! Composition: (core, siblings, root tools) → one immutable [`Generation`].
//!
//! Boot and every reroster run through [`compose`]. A generation holds the flat tables, the
//! indices (by URI, by tool name, template by collection), the three list answers built once,
//! and the bundle of clients it dispatches over. A refused composition changes nothing: the
//! caller keeps serving the generation it had.

use super::clients::Clients;
use super::resources::{self, ResourceEntry, TemplateEntry};
use crate::bundle::RosterParts;
use crate::bundle::{Member, RootTools, Siblings};
use crate::expose::Exposure;
use crate::schema::profile::SchemaProfile;
use crate::spec::SurfaceSpec;
pub(crate) use crate::table::{Owner, ToolEntry, ToolTarget};
use crate::table::{ToolRow, owner_phrase, scoped_member_name};
use rmcp::model::{Resource, ResourceTemplate, Tool, ToolAnnotations};
use serde_json::Value;
use std::collections::{BTreeMap, HashMap};
use std::fmt;
use std::sync::Arc;

/// Why a bundle was refused. Every problem found is listed, each a sentence naming what
/// collides and how to fix it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CompositionError {
    /// One sentence per problem.
    pub problems: Vec<String>,
}

impl fmt::Display for CompositionError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "surface-mcp: the bundle was refused: {}",
            self.problems.join(crate::rules::PROBLEM_SEPARATOR)
        )
    }
}

impl std::error::Error for CompositionError {}

/// The tools of a generation by served name. foldhash rather than SipHash: every call looks a
/// tool up here, the keys are the server's own, and a lookup of a name a client chose cannot
/// lengthen another's probe.
pub(crate) type ToolTable = HashMap<String, ToolEntry, foldhash::fast::RandomState>;

/// One served roster, immutable once built.
pub(crate) struct Generation {
    pub siblings: Siblings,
    pub link: Clients,
    pub tools: ToolTable,
    pub resources: HashMap<String, ResourceEntry>,
    /// Every collection's item template (`surface://collections/[t/]<k>/{id}` unless declared).
    pub templates: Vec<TemplateEntry>,
    pub tool_list: Arc<Vec<Tool>>,
    pub resource_list: Arc<Vec<Resource>>,
    /// The two lists as told to a client that did not declare the MCP Apps extension: no UI
    /// meta, no views (the same lists when no view is served).
    pub plain_tool_list: Arc<Vec<Tool>>,
    pub plain_resource_list: Arc<Vec<Resource>>,
    pub template_list: Arc<Vec<ResourceTemplate>>,
    /// Prompts by served name, and the `prompts/list` answer.
    pub prompts: HashMap<String, super::prompts::PromptEntry>,
    pub prompt_list: Arc<Vec<rmcp::model::Prompt>>,
    /// The MCP Apps views served (none with the UI off).
    pub views: super::views::Served,
    /// The members' skills (skills.rs).
    pub skills: super::skills::Skills,
    /// One reader of each watched member's feed, routing changes to its watchers (hub.rs).
    pub hubs: super::hub::Hubs,
}

impl super::hub::Source for Generation {
    fn hubs(&self) -> &super::hub::Hubs {
        &self.hubs
    }
    fn link(&self) -> &Clients {
        &self.link
    }
}

/// The fixed part of a bundle: what never moves across rerosters.
#[derive(Clone)]
pub(crate) struct Fixed {
    pub core: Option<Member>,
    pub root_tools: RootTools,
    /// Prompts over the whole bundle, bare-named.
    pub root_prompts: Vec<Arc<dyn crate::bundle::RootPrompt>>,
    /// How every advertised input schema is rewritten (schema/profile.rs).
    pub profile: SchemaProfile,
    /// The declared MCP Apps views and how they are served (views.rs).
    pub ui: super::views::Ui,
}

pub(crate) fn compose(
    fixed: &Fixed,
    siblings: Siblings,
    link: impl FnOnce() -> Clients,
) -> Result<Generation, CompositionError> {
    let roster = RosterParts {
        core: fixed.core.as_ref(),
        siblings: &siblings,
        root: &fixed.root_tools,
    };
    let mut problems = roster.problems();
    let mut claims = resources::Claims::default();
    let mut resource_list = Vec::new();
    let mut template_list = Vec::new();
    for (sibling, member) in roster.members() {
        project_member(
            sibling,
            member,
            &mut problems,
            &mut claims,
            &mut resource_list,
            &mut template_list,
        );
    }
    let (resources, templates) = claims.into_parts();
    let mut rows = roster.tool_table(&mut problems);
    if fixed.profile != SchemaProfile::Portable {
        for row in &mut rows {
            match fixed.profile.check(&row.name, &row.entry.input) {
                Ok(input) => row.entry.input = Arc::new(input),
                Err(e) => problems.push(e.to_string()),
            }
        }
    }
    let skills = super::skills::skill_table(fixed.core.as_ref(), &siblings, &rows, &resources, &mut problems);
    resource_list.extend(skills.resources());
    let views = super::views::compose(&fixed.ui, &rows, &resources, &templates, &mut problems);
    let plain_tool_list: Arc<Vec<Tool>> = Arc::new(rows.iter().map(advertise).collect());
    let (tool_list, plain_resource_list, resource_list) = if views.is_empty() {
        let resource_list = Arc::new(resource_list);
        (plain_tool_list.clone(), resource_list.clone(), resource_list)
    } else {
        let tool_list = rows
            .iter()
            .zip(plain_tool_list.iter())
            .map(|(r, plain)| {
                let mut tool = plain.clone();
                tool.meta = views.tool_meta(r.entry.view);
                tool
            })
            .collect();
        let plain_resource_list = Arc::new(resource_list.clone());
        resource_list.extend(views.list());
        (Arc::new(tool_list), plain_resource_list, Arc::new(resource_list))
    };
    let tools: ToolTable = rows.into_iter().map(|r| (r.name, r.entry)).collect();

    let (prompts, prompt_list) =
        super::prompts::prompt_table(fixed.core.as_ref(), &siblings, &fixed.root_prompts, &mut problems);
    if !problems.is_empty() {
        return Err(CompositionError { problems });
    }
    // Dial (or build the in-process clients) only for a roster that composes.
    Ok(Generation {
        siblings,
        link: link(),
        tools,
        resources,
        templates,
        tool_list,
        resource_list,
        plain_tool_list,
        plain_resource_list,
        template_list: Arc::new(template_list),
        prompts,
        prompt_list: Arc::new(prompt_list),
        views,
        skills,
        hubs: Default::default(),
    })
}

fn project_member(
    sibling: Option<&str>,
    member: &Member,
    problems: &mut Vec<String>,
    claims: &mut resources::Claims,
    resource_list: &mut Vec<Resource>,
    template_list: &mut Vec<ResourceTemplate>,
) {
    let spec: &SurfaceSpec = member.spec;
    let owner: Owner = sibling.map(str::to_owned);
    resources::unexposed_forms(sibling, member, problems);
    for entry in member.expose.entries() {
        match (entry.exposure, spec.member(entry.key), spec.procedure(entry.key)) {
            (Exposure::Resource, Some(m), _) => {
                let form = member.form(m.name);
                let placed = resources::place(sibling, m, form, problems);
                let mime = form.body().mime();
                let name = scoped_member_name(sibling, m.name);
                let mut resource = Resource::new(placed.uri.clone(), name.clone()).with_mime_type(mime);
                if !m.doc.is_empty() {
                    resource = resource.with_description(m.doc);
                }
                resource_list.push(resource);
                let re = ResourceEntry {
                    owner: owner.clone(),
                    member: m.name,
                    body: form.body(),
                    declared: placed.declared,
                    scope: member.expose.scope_of(entry.key),
                };
                if let Some((prefix, suffix)) = placed.template {
                    let mut template =
                        ResourceTemplate::new(format!("{prefix}{{id}}{suffix}"), name).with_mime_type(mime);
                    if !m.doc.is_empty() {
                        template = template.with_description(m.doc);
                    }
                    template_list.push(template);
                    let template = TemplateEntry {
                        prefix,
                        suffix,
                        entry: re.clone(),
                    };
                    claims.claim_template(template, problems);
                }
                claims.claim(placed.uri, re, problems);
            }
            // The tool table (crate::table) names and claims exposed procedures.
            (Exposure::Tool { .. }, _, Some(_)) => {}
            // `expose!` rules these out at compile time; an erased map built by hand may not.
            (exposure, _, _) => problems.push(format!(
                "expose key \"{}\" {} names no {} of {}",
                entry.key,
                owner_phrase(sibling),
                if exposure == Exposure::Resource {
                    "member"
                } else {
                    "procedure"
                },
                spec.name
            )),
        }
    }
}

fn advertise(row: &ToolRow) -> Tool {
    let mut tool = Tool::new_with_raw(
        row.name.clone(),
        (!row.description.is_empty()).then(|| row.description.to_owned().into()),
        Arc::new(row.entry.input.schema.clone()),
    )
    .with_annotations(
        ToolAnnotations::new()
            .read_only(!row.mutates)
            .destructive(row.mutates),
    );
    if let Some(t) = row.title {
        tool = tool.with_title(t);
    }
    // A procedure answering an object (a struct) advertises its schema, from the same bridge
    // as the inputs: its `structuredContent` is that object as serialized. Any other answer
    // travels wrapped under `value` (results.rs) and advertises none.
    if let Some(output) = row.output
        && let Value::Object(schema) = output()
        && schema.get("type").and_then(Value::as_str) == Some("object")
        && never_null(&schema)
    {
        tool = tool.with_raw_output_schema(Arc::new(schema));
    }
    tool
}

/// Whether every object in `schema` requires all its properties. The bridge types an
/// `Option<T>` field as an optional `T` (no `null`), which is right for what a host sends but
/// not for what a procedure answers (`None` serializes as `null`): an output schema is
/// advertised only when no property can be optional, so `structuredContent` always matches it.
fn never_null(schema: &serde_json::Map<String, Value>) -> bool {
    let all_required = match schema.get("properties").and_then(Value::as_object) {
        Some(properties) => {
            let required = crate::schema::required_names(schema);
            properties.keys().all(|k| required.contains(&k.as_str()))
        }
        None => true,
    };
    all_required
        && schema.values().all(|v| match v {
            Value::Object(o) => never_null(o),
            Value::Array(items) => items.iter().all(|i| i.as_object().is_none_or(never_null)),
            _ => true,
        })
}

impl Generation {
    /// The resource at `uri`, and the item id when it addresses one collection item.
    pub fn resolve_uri(&self, uri: &str) -> Option<(ResourceEntry, Option<String>)> {
        if let Some(e) = self.resources.get(uri) {
            return Some((e.clone(), None));
        }
        self.templates.iter().find_map(|t| {
            let id = crate::resource::match_template(&t.prefix, &t.suffix, uri)?;
            Some((t.entry.clone(), Some(id)))
        })
    }

    /// Every sibling key, in order.
    pub fn sibling_keys(&self) -> Vec<String> {
        self.siblings.keys().cloned().collect()
    }
}

/// Every name a generation serves, with the sibling that owns it (`None`: the core or root).
pub(crate) fn served_names(g: &Generation) -> BTreeMap<String, Owner> {
    let tools = g.tools.iter().map(|(n, e)| (n.clone(), e.target.owner()));
    let resources = g.resources.iter().map(|(u, e)| (u.clone(), e.owner.clone()));
    let templates = g
        .templates
        .iter()
        .map(|t| (format!("{}{{id}}{}", t.prefix, t.suffix), t.entry.owner.clone()));
    tools.chain(resources).chain(templates).collect()
}
