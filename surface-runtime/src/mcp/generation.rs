//! Composition: (core, siblings, root tools) → one immutable [`Generation`].
//!
//! Boot and every reroster run through [`compose`]. A generation holds the flat tables, the
//! indices (by URI, by tool name, template by collection), the three list answers built once,
//! and the bundle of clients it dispatches over. A refused composition changes nothing: the
//! caller keeps serving the generation it had.

use super::bundle::{Member, RootTool, RootTools, Siblings, SurfaceTool};
use super::link::Link;
use crate::expose::Exposure;
use crate::schema::profile::SchemaProfile;
use crate::schema::{self, InputSchema};
use crate::spec::{MemberKind, SurfaceSpec};
use rmcp::model::{Resource, ResourceTemplate, Tool, ToolAnnotations};
use std::collections::{BTreeMap, HashMap};
use std::fmt;
use std::sync::Arc;

/// Tool names hosts accept: at most 64 characters of `[A-Za-z0-9_.-]`.
const MAX_TOOL_NAME: usize = 64;

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
            self.problems.join("; ")
        )
    }
}

impl std::error::Error for CompositionError {}

/// Where a name comes from: the core (`None`) or a sibling.
pub(crate) type Owner = Option<String>;

/// What a resource URI reads.
#[derive(Clone, Debug)]
pub(crate) struct ResourceEntry {
    pub owner: Owner,
    pub member: &'static str,
}

/// What a tool name calls.
#[derive(Clone)]
pub(crate) enum ToolTarget {
    Procedure {
        owner: Owner,
        procedure: &'static str,
    },
    Bespoke {
        owner: Owner,
        tool: Arc<dyn SurfaceTool>,
    },
    Root {
        tool: Arc<dyn RootTool>,
    },
}

#[derive(Clone)]
pub(crate) struct ToolEntry {
    pub target: ToolTarget,
    pub input: Arc<InputSchema>,
}

/// One served roster, immutable once built.
pub(crate) struct Generation {
    pub siblings: Siblings,
    pub link: Link,
    pub tools: HashMap<String, ToolEntry>,
    pub resources: HashMap<String, ResourceEntry>,
    /// `surface://collections/[t/]<k>` → the collection whose items live below it.
    pub templates: HashMap<String, ResourceEntry>,
    pub tool_list: Arc<Vec<Tool>>,
    pub resource_list: Arc<Vec<Resource>>,
    pub template_list: Arc<Vec<ResourceTemplate>>,
}

/// The fixed part of a bundle: what never moves across rerosters.
#[derive(Clone)]
pub(crate) struct Fixed {
    pub core: Option<Member>,
    pub root_tools: RootTools,
    /// How every advertised input schema is rewritten (schema/profile.rs).
    pub profile: SchemaProfile,
}

/// A tool name of a sibling's: `t_<name>`; the core's and the root's stay bare.
pub fn scoped_tool_name(sibling: Option<&str>, name: &str) -> String {
    match sibling {
        Some(t) => format!("{t}_{name}"),
        None => name.to_owned(),
    }
}

/// `surface://cells/<k>` or `surface://cells/t/<k>`.
pub fn resource_uri(sibling: Option<&str>, kind: MemberKind, key: &str) -> String {
    match sibling {
        Some(t) => format!("surface://{}/{t}/{key}", kind.uri_segment()),
        None => format!("surface://{}/{key}", kind.uri_segment()),
    }
}

fn owner_phrase(owner: Option<&str>) -> String {
    match owner {
        Some(t) => format!("on sibling \"{t}\""),
        None => "on the core".to_owned(),
    }
}

struct Claim {
    origin: String,
    entry: ToolEntry,
    tool: Tool,
}

pub(crate) fn compose(
    fixed: &Fixed,
    siblings: Siblings,
    link: impl FnOnce() -> Link,
) -> Result<Generation, CompositionError> {
    let mut problems = Vec::new();
    if fixed.core.is_none() && siblings.is_empty() {
        problems.push(
            "a rooted bundle needs a core or at least one sibling, and this one has neither".to_owned(),
        );
    }
    let core_collections: Vec<&str> = fixed
        .core
        .iter()
        .flat_map(|c| {
            exposed_members(c)
                .filter(|(_, kind)| *kind == MemberKind::Collection)
                .map(|(k, _)| k)
        })
        .collect();
    for key in siblings.keys() {
        if core_collections.contains(&key.as_str()) {
            problems.push(format!(
                "sibling key \"{key}\" equals the core collection \"{key}\": surface://collections/{key}/{{id}} would address both — rename the sibling"
            ));
        }
        if key.is_empty()
            || !key
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-')
        {
            problems.push(format!(
                "sibling key \"{key}\" must be non-empty and use only letters, digits, `_` and `-`: it becomes a URI segment and a tool-name prefix"
            ));
        }
    }

    let mut claims: Vec<(String, Claim)> = Vec::new();
    let mut resources = HashMap::new();
    let mut templates = HashMap::new();
    let mut resource_list = Vec::new();
    let mut template_list = Vec::new();
    let members = fixed
        .core
        .iter()
        .map(|c| (None, c))
        .chain(siblings.iter().map(|(k, m)| (Some(k.as_str()), m)));
    for (sibling, member) in members {
        project_member(
            sibling,
            member,
            &mut problems,
            &mut claims,
            &mut resources,
            &mut templates,
            &mut resource_list,
            &mut template_list,
        );
    }
    for tool in &fixed.root_tools.0 {
        let d = tool.descriptor();
        let input = Arc::new((d.input)());
        claims.push((
            d.name.to_owned(),
            Claim {
                origin: format!("bespoke {} at the bundle root", d.name),
                tool: advertise(d.name, d.description, d.title, d.mutates, &input),
                entry: ToolEntry {
                    target: ToolTarget::Root { tool: tool.clone() },
                    input,
                },
            },
        ));
    }

    if fixed.profile != SchemaProfile::Portable {
        for (name, claim) in &mut claims {
            match fixed.profile.check(name, &claim.entry.input) {
                Ok(input) => {
                    claim.tool.input_schema = Arc::new(input.schema.clone());
                    claim.entry.input = Arc::new(input);
                }
                Err(e) => problems.push(e.to_string()),
            }
        }
    }

    // One pass over the whole tool namespace, naming both claimants of every duplicate.
    let mut tools: HashMap<String, ToolEntry> = HashMap::new();
    let mut origins: HashMap<String, String> = HashMap::new();
    let mut tool_list = Vec::new();
    for (name, claim) in claims {
        if name.len() > MAX_TOOL_NAME
            || !name
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || "_.-".contains(c))
        {
            problems.push(format!(
                "tool name \"{name}\" (from {}) breaks the client limits of at most {MAX_TOOL_NAME} characters of [A-Za-z0-9_.-] — shorten or rename it",
                claim.origin
            ));
        }
        if let Some(first) = origins.get(&name) {
            problems.push(format!(
                "tool name \"{name}\" is produced by both {first} and {} — rename one",
                claim.origin
            ));
            continue;
        }
        origins.insert(name.clone(), claim.origin);
        tool_list.push(claim.tool);
        tools.insert(name, claim.entry);
    }

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
        tool_list: Arc::new(tool_list),
        resource_list: Arc::new(resource_list),
        template_list: Arc::new(template_list),
    })
}

fn exposed_members(member: &Member) -> impl Iterator<Item = (&'static str, MemberKind)> + '_ {
    member.expose.entries().iter().filter_map(|e| {
        let spec = member.spec.member(e.key)?;
        (e.exposure == Exposure::Resource).then_some((spec.name, spec.kind))
    })
}

#[allow(clippy::too_many_arguments)]
fn project_member(
    sibling: Option<&str>,
    member: &Member,
    problems: &mut Vec<String>,
    claims: &mut Vec<(String, Claim)>,
    resources: &mut HashMap<String, ResourceEntry>,
    templates: &mut HashMap<String, ResourceEntry>,
    resource_list: &mut Vec<Resource>,
    template_list: &mut Vec<ResourceTemplate>,
) {
    let spec: &SurfaceSpec = member.spec;
    let owner: Owner = sibling.map(str::to_owned);
    for entry in member.expose.entries() {
        match (entry.exposure, spec.member(entry.key), spec.procedure(entry.key)) {
            (Exposure::Resource, Some(m), _) => {
                let uri = resource_uri(sibling, m.kind, m.name);
                let name = scoped_resource_name(sibling, m.name);
                let mut resource =
                    Resource::new(uri.clone(), name.clone()).with_mime_type("application/json");
                if !m.doc.is_empty() {
                    resource = resource.with_description(m.doc);
                }
                resource_list.push(resource);
                let re = ResourceEntry {
                    owner: owner.clone(),
                    member: m.name,
                };
                if m.kind == MemberKind::Collection {
                    let mut template = ResourceTemplate::new(format!("{uri}/{{id}}"), name)
                        .with_mime_type("application/json");
                    if !m.doc.is_empty() {
                        template = template.with_description(m.doc);
                    }
                    template_list.push(template);
                    templates.insert(uri.clone(), re.clone());
                }
                resources.insert(uri, re);
            }
            (Exposure::Tool { mutates }, _, Some(p)) => {
                let name = scoped_tool_name(sibling, &format!("{}_{}", p.namespace, p.verb));
                let input = Arc::new(match &p.input {
                    Some(t) => schema::wrap_input((t.schema)()),
                    None => schema::no_input_schema(),
                });
                claims.push((
                    name.clone(),
                    Claim {
                        origin: format!("procedure {} {}", p.name, owner_phrase(sibling)),
                        tool: advertise(&name, p.doc, None, mutates, &input),
                        entry: ToolEntry {
                            target: ToolTarget::Procedure {
                                owner: owner.clone(),
                                procedure: p.name,
                            },
                            input,
                        },
                    },
                ));
            }
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
    for tool in &member.tools {
        let d = tool.descriptor();
        let name = scoped_tool_name(sibling, d.name);
        let input = Arc::new((d.input)());
        claims.push((
            name.clone(),
            Claim {
                origin: format!("bespoke {} {}", d.name, owner_phrase(sibling)),
                tool: advertise(&name, d.description, d.title, d.mutates, &input),
                entry: ToolEntry {
                    target: ToolTarget::Bespoke {
                        owner: owner.clone(),
                        tool: tool.clone(),
                    },
                    input,
                },
            },
        ));
    }
}

fn scoped_resource_name(sibling: Option<&str>, key: &str) -> String {
    match sibling {
        Some(t) => format!("{t}/{key}"),
        None => key.to_owned(),
    }
}

fn advertise(name: &str, description: &str, title: Option<&str>, mutates: bool, input: &InputSchema) -> Tool {
    let mut tool = Tool::new_with_raw(
        name.to_owned(),
        (!description.is_empty()).then(|| description.to_owned().into()),
        Arc::new(input.schema.clone()),
    )
    .with_annotations(ToolAnnotations::new().read_only(!mutates).destructive(mutates));
    if let Some(t) = title {
        tool = tool.with_title(t);
    }
    tool
}

impl Generation {
    /// The resource at `uri`, and the item id when it addresses one collection item.
    pub fn resolve_uri(&self, uri: &str) -> Option<(ResourceEntry, Option<String>)> {
        if let Some(e) = self.resources.get(uri) {
            return Some((e.clone(), None));
        }
        let (collection, id) = uri.rsplit_once('/')?;
        let entry = self.templates.get(collection)?;
        Some((
            entry.clone(),
            Some(schema::percent_decode(id).unwrap_or_else(|| id.to_owned())),
        ))
    }

    /// Every sibling key, in order.
    pub fn sibling_keys(&self) -> Vec<String> {
        self.siblings.keys().cloned().collect()
    }
}

/// Every name a generation serves, with the sibling that owns it (`None`: the core or root).
pub(crate) fn served_names(g: &Generation) -> BTreeMap<String, Owner> {
    let tools = g.tools.iter().map(|(n, e)| {
        let owner = match &e.target {
            ToolTarget::Procedure { owner, .. } | ToolTarget::Bespoke { owner, .. } => owner.clone(),
            ToolTarget::Root { .. } => None,
        };
        (n.clone(), owner)
    });
    let resources = g.resources.iter().map(|(u, e)| (u.clone(), e.owner.clone()));
    let templates = g
        .templates
        .iter()
        .map(|(u, e)| (format!("{u}/"), e.owner.clone()));
    tools.chain(resources).chain(templates).collect()
}
