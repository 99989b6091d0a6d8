//! The served tool table: every tool a bundle serves, named exactly as `tools/list` names it,
//! with the input schema it advertises and what calling it runs.
//!
//! Every face that offers tools builds its tools from this one table (the MCP face's
//! `tools/list` and `tools/call`, the argv face's subcommands), so a name, a schema or a
//! refusal can never differ between faces. Nothing here depends on rmcp.

// Without a face that names tools (mcp, cli) the table is built by nothing.
#![cfg_attr(not(any(feature = "mcp", feature = "cli")), allow(dead_code))]

use crate::blocks::ToolOutput;
use crate::bundle::{BundleClient, Member, RootTool, RootTools, Siblings, SurfaceTool};
use crate::expose::Exposure;
use crate::failure::Failure;
use crate::rules::{Name, NameOf, Origin, Place, Problem, sibling_key_ok};
use crate::schema::{self, InputSchema};
use crate::spec::{MemberKind, MemberSpec};
use crate::surface::InputDecoder;
use crate::tool::CancellationToken;
use std::collections::HashSet;
use std::sync::Arc;

/// A tool name of a sibling's: `t_<name>`; the core's and the root's stay bare.
///
/// ```
/// use surface_runtime::table::scoped_tool_name;
/// assert_eq!(scoped_tool_name(Some("t"), "proc_kill"), "t_proc_kill");
/// assert_eq!(scoped_tool_name(None, "proc_kill"), "proc_kill");
/// ```
pub fn scoped_tool_name(sibling: Option<&str>, name: &str) -> String {
    match sibling {
        Some(t) => format!("{t}_{name}"),
        None => name.to_owned(),
    }
}

/// `surface://cells/<k>` or `surface://cells/t/<k>`.
///
/// ```
/// use surface_runtime::{MemberKind, table::resource_uri};
/// assert_eq!(resource_uri(Some("t"), MemberKind::Cell, "load"), "surface://cells/t/load");
/// ```
pub fn resource_uri(sibling: Option<&str>, kind: MemberKind, key: &str) -> String {
    match sibling {
        Some(t) => format!("surface://{}/{t}/{key}", kind.uri_segment()),
        None => format!("surface://{}/{key}", kind.uri_segment()),
    }
}

/// A member's name in resource lists and on the argv face: `<k>` or `t/<k>`.
///
/// ```
/// assert_eq!(surface_runtime::table::scoped_member_name(Some("t"), "load"), "t/load");
/// ```
pub fn scoped_member_name(sibling: Option<&str>, key: &str) -> String {
    match sibling {
        Some(t) => format!("{t}/{key}"),
        None => key.to_owned(),
    }
}

/// Where a name comes from: the core (`None`) or a sibling.
pub(crate) type Owner = Option<String>;

pub(crate) fn owner_phrase(owner: Option<&str>) -> String {
    match owner {
        Some(t) => format!("on sibling \"{t}\""),
        None => "on the core".to_owned(),
    }
}

/// What a tool name calls.
#[derive(Clone)]
pub(crate) enum ToolTarget {
    Procedure {
        owner: Owner,
        procedure: &'static str,
        /// The served side's decoder of its input (`None`: it takes none), which the argv
        /// face runs before it dials.
        #[cfg_attr(not(feature = "cli"), allow(dead_code))]
        decode: Option<InputDecoder>,
    },
    Bespoke {
        owner: Owner,
        tool: Arc<dyn SurfaceTool>,
    },
    Root {
        tool: Arc<dyn RootTool>,
    },
    /// A read-only tool mirroring a member's resource read (`resource(mirror)`): the whole
    /// member, or (`item`) one collection item named by the `id` argument.
    Mirror {
        owner: Owner,
        member: &'static str,
        item: bool,
    },
}

impl ToolTarget {
    /// The sibling that owns the tool (`None`: the core or the root).
    #[cfg_attr(not(feature = "mcp"), allow(dead_code))]
    pub(crate) fn owner(&self) -> Owner {
        match self {
            ToolTarget::Procedure { owner, .. }
            | ToolTarget::Bespoke { owner, .. }
            | ToolTarget::Mirror { owner, .. } => owner.clone(),
            ToolTarget::Root { .. } => None,
        }
    }

    /// Runs the tool over `bundle` with its (unwrapped, not yet decoded) input, under `cancel`
    /// (cloned only for a tool that takes it: a token's clone and drop each take its lock).
    pub(crate) async fn run(
        &self,
        bundle: &BundleClient,
        input: serde_json::Value,
        cancel: &CancellationToken,
    ) -> Result<ToolOutput, Failure> {
        match self {
            ToolTarget::Procedure { owner, procedure, .. } => {
                let dispatch = bundle.dispatch_for(owner.as_deref())?;
                dispatch.call(procedure, input).await.map(ToolOutput::Value)
            }
            ToolTarget::Bespoke { owner, tool } => {
                let dispatch = bundle.dispatch_for(owner.as_deref())?;
                tool.invoke(input, dispatch.clone(), cancel.clone()).await
            }
            ToolTarget::Root { tool } => tool.invoke(input, bundle.clone(), cancel.clone()).await,
            ToolTarget::Mirror { owner, member, item } => {
                let dispatch = bundle.dispatch_for(owner.as_deref())?;
                let value = match item {
                    false => dispatch.read(member).await?,
                    true => dispatch.read_item(member, &mirror_id(&input)?).await?,
                };
                Ok(ToolOutput::Value(value))
            }
        }
    }
}

/// What a tool name calls, and the input schema it advertises.
#[derive(Clone)]
pub(crate) struct ToolEntry {
    pub target: ToolTarget,
    pub input: Arc<InputSchema>,
    /// The URI of the MCP Apps view a bespoke tool is bound to (`#[tool(view = …)]`); only
    /// the MCP face serves views.
    #[cfg_attr(not(feature = "mcp"), allow(dead_code))]
    pub view: Option<&'static str>,
    /// Whether calling it changes state (what the audit trail records).
    #[cfg_attr(not(feature = "mcp"), allow(dead_code))]
    pub mutates: bool,
    /// Whether its calls may run as MCP tasks (only the MCP face has tasks).
    #[cfg_attr(not(feature = "mcp"), allow(dead_code))]
    pub task: crate::tool::TaskSupport,
    /// The declared scope a caller needs to see and call it (`expose!`'s `scope = …`).
    #[cfg_attr(not(feature = "mcp"), allow(dead_code))]
    pub scope: Option<&'static crate::Scope>,
}

/// What produced a tool, owned (a row outlives the roster it was built from).
#[derive(Clone)]
pub(crate) struct Claimant {
    what: &'static str,
    word: &'static str,
    /// The sibling key; `None` for the core, or the root when `root`.
    sibling: Option<String>,
    root: bool,
}

impl Claimant {
    fn new(what: &'static str, word: &'static str, sibling: Option<&str>) -> Claimant {
        Claimant {
            what,
            word,
            sibling: sibling.map(str::to_owned),
            root: false,
        }
    }

    /// As the rules name it.
    pub(crate) fn origin(&self) -> Origin<'_> {
        Origin {
            what: self.what,
            word: self.word,
            place: match (&self.sibling, self.root) {
                (_, true) => Place::Root,
                (Some(k), _) => Place::Sibling(k),
                (None, _) => Place::Core,
            },
        }
    }
}

impl std::fmt::Display for Claimant {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        self.origin().fmt(f)
    }
}

/// One row of the served tool table.
#[derive(Clone)]
pub(crate) struct ToolRow {
    /// The name `tools/list` gives it.
    pub name: String,
    /// Where it comes from, for refusals (`procedure proc.kill on the core`).
    pub origin: Claimant,
    pub description: &'static str,
    pub title: Option<&'static str>,
    pub mutates: bool,
    /// The schema of what a procedure answers (its `structuredContent`, advertised as
    /// `outputSchema` when it is an object's); `None` for other tools.
    #[cfg_attr(not(feature = "mcp"), allow(dead_code))]
    pub output: Option<fn() -> serde_json::Value>,
    pub entry: ToolEntry,
}

/// The tools one member (the core, or sibling `sibling`) contributes, in expose order then
/// its bespoke tools. Expose keys that name no procedure are left to the caller to report.
fn member_rows(sibling: Option<&str>, member: &Member) -> Vec<ToolRow> {
    let owner: Owner = sibling.map(str::to_owned);
    let mut rows = Vec::new();
    for entry in member.expose.entries() {
        let (Exposure::Tool { mutates }, Some(p)) = (entry.exposure, member.spec.procedure(entry.key)) else {
            continue;
        };
        let name = scoped_tool_name(sibling, &format!("{}_{}", p.namespace, p.verb));
        let input = Arc::new(match &p.input {
            Some(t) => schema::wrap_input((t.schema)()),
            None => schema::no_input_schema(),
        });
        rows.push(ToolRow {
            name,
            origin: Claimant::new("procedure", p.name, sibling),
            description: p.doc,
            title: None,
            mutates,
            // A refusal's detail is its `structuredContent`, which would not match the schema.
            output: (!(member.refuses_with_detail)(p.name)).then_some(p.output.schema),
            entry: ToolEntry {
                target: ToolTarget::Procedure {
                    owner: owner.clone(),
                    procedure: p.name,
                    decode: (member.input_decoder)(p.name),
                },
                input,
                view: None,
                mutates,
                task: entry.task,
                scope: member.expose.scope_of(entry.key),
            },
        });
    }
    for key in member.expose.mirrored() {
        if let Some(m) = member.spec.member(key) {
            rows.extend(mirror_rows(sibling, m, member.expose.scope_of(key)));
        }
    }
    for tool in &member.tools {
        let d = tool.descriptor();
        rows.push(ToolRow {
            name: scoped_tool_name(sibling, d.name),
            origin: Claimant::new("bespoke", d.name, sibling),
            description: d.description,
            title: d.title,
            mutates: d.mutates,
            output: None,
            entry: ToolEntry {
                target: ToolTarget::Bespoke {
                    owner: owner.clone(),
                    tool: tool.clone(),
                },
                input: Arc::new((d.input)()),
                view: d.view,
                mutates: d.mutates,
                task: d.task,
                scope: d.scope,
            },
        });
    }
    rows
}

/// The names a mirrored member's tools take (before the sibling prefix): a cell `<k>_get`, a
/// collection `<k>_keys` and `<k>_get`, a stream `<k>_read`; an event has none.
///
/// ```
/// use surface_runtime::{MemberKind, table::mirror_tool_names};
/// assert_eq!(mirror_tool_names(MemberKind::Collection, "processes"), ["processes_keys", "processes_get"]);
/// assert_eq!(mirror_tool_names(MemberKind::Stream, "log"), ["log_read"]);
/// ```
pub fn mirror_tool_names(kind: MemberKind, key: &str) -> Vec<String> {
    let verbs = crate::rules::mirror_verbs(kind);
    verbs.iter().map(|verb| format!("{key}_{verb}")).collect()
}

/// The read-only tools mirroring member `m` (see [`mirror_tool_names`]).
fn mirror_rows(sibling: Option<&str>, m: &MemberSpec, scope: Option<&'static crate::Scope>) -> Vec<ToolRow> {
    let uri = resource_uri(sibling, m.kind, m.name);
    let names = mirror_tool_names(m.kind, m.name);
    names
        .into_iter()
        .map(|name| {
            let item = m.kind == MemberKind::Collection && name.ends_with("_get");
            let input = match (item, &m.key) {
                (true, Some(key)) => mirror_item_input((key.schema)()),
                _ => schema::no_input_schema(),
            };
            let reads = if item {
                format!("{uri}/{{id}}")
            } else {
                uri.clone()
            };
            ToolRow {
                origin: Claimant::new("the mirror of", m.name, sibling),
                name: scoped_tool_name(sibling, &name),
                description: mirror_description(&reads, m.doc),
                title: None,
                mutates: false,
                output: None,
                entry: ToolEntry {
                    target: ToolTarget::Mirror {
                        owner: sibling.map(str::to_owned),
                        member: m.name,
                        item,
                    },
                    input: Arc::new(input),
                    view: None,
                    mutates: false,
                    task: crate::tool::TaskSupport::Never,
                    // A mirror reads its member: it needs what the member's exposure needs.
                    scope,
                },
            }
        })
        .collect()
}

/// A mirror's description: what it reads, then the member's own doc. Leaked once per distinct
/// text (rows hold `&'static str`, and a reroster rebuilds the rows of a roster it has seen).
fn mirror_description(reads: &str, doc: &str) -> &'static str {
    // A set, not a list: every sibling's mirrors have texts of their own, and a scan of all
    // of them per mirror made a reroster grow with the square of its siblings.
    static SEEN: std::sync::LazyLock<std::sync::Mutex<HashSet<&'static str>>> =
        std::sync::LazyLock::new(Default::default);
    let text = match doc {
        "" => format!("Reads the resource {reads} (the same JSON)."),
        doc => format!("Reads the resource {reads} (the same JSON). {doc}"),
    };
    let mut seen = crate::sync::lock(&SEEN);
    if let Some(known) = seen.get(text.as_str()) {
        return known;
    }
    let leaked: &'static str = Box::leak(text.into_boxed_str());
    seen.insert(leaked);
    leaked
}

/// The input of `<k>_get`: `{"id": <the collection's key>}`.
fn mirror_item_input(key_schema: serde_json::Value) -> InputSchema {
    let mut properties = serde_json::Map::new();
    properties.insert("id".to_owned(), key_schema);
    let mut schema = serde_json::Map::new();
    schema.insert("type".to_owned(), "object".into());
    schema.insert("properties".to_owned(), properties.into());
    schema.insert("required".to_owned(), serde_json::json!(["id"]));
    InputSchema {
        schema,
        wrapped: false,
        nulls_are_absent: false,
    }
}

/// The item id a `<k>_get` call names, as the URI would carry it (a string key as itself, any
/// other key as its JSON).
fn mirror_id(input: &serde_json::Value) -> Result<String, Failure> {
    match input.get("id") {
        Some(serde_json::Value::String(id)) => Ok(id.clone()),
        Some(other) if !other.is_null() => Ok(other.to_string()),
        _ => Err(Failure::new(
            crate::failure::FailureKind::InvalidInput { field: "id".into() },
            "invalid argument `id`: missing required field",
        )),
    }
}

/// The whole tool table of a bundle, in `tools/list` order: the core's tools, each sibling's,
/// then the root's. Names that break host limits or are produced twice are reported in
/// `problems` (naming both claimants); a duplicate keeps its first claimant.
pub(crate) fn tool_table(
    core: Option<&Member>,
    siblings: &Siblings,
    root: &RootTools,
    problems: &mut Vec<String>,
) -> Vec<ToolRow> {
    let mut claims: Vec<ToolRow> = core.map(|c| member_rows(None, c)).unwrap_or_default();
    for (key, member) in siblings {
        claims.extend(member_rows(Some(key), member));
    }
    for tool in &root.0 {
        let d = tool.descriptor();
        claims.push(ToolRow {
            name: d.name.to_owned(),
            origin: Claimant {
                root: true,
                ..Claimant::new("bespoke", d.name, None)
            },
            description: d.description,
            title: d.title,
            mutates: d.mutates,
            output: None,
            entry: ToolEntry {
                target: ToolTarget::Root { tool: tool.clone() },
                input: Arc::new((d.input)()),
                view: d.view,
                mutates: d.mutates,
                task: d.task,
                scope: d.scope,
            },
        });
    }
    // One pass over the whole tool namespace, naming both claimants of every duplicate.
    let mut rows: Vec<ToolRow> = Vec::new();
    let mut seen: HashSet<String> = HashSet::new();
    for claim in claims {
        let name = Name::whole(&claim.name);
        if !name.ok() {
            let origin = claim.origin.origin();
            problems.push(
                Problem::NameLimits {
                    of: NameOf::Tool,
                    name,
                    origin,
                }
                .to_string(),
            );
        }
        if !seen.insert(claim.name.clone()) {
            if let Some(first) = rows.iter().find(|r| r.name == claim.name) {
                let twice = Problem::NameTwice {
                    of: NameOf::Tool,
                    name,
                    first: first.origin.origin(),
                    second: claim.origin.origin(),
                };
                problems.push(twice.to_string());
            }
            continue;
        }
        rows.push(claim);
    }
    rows
}

/// The roster-level rules every face applies before it names anything: a bundle has a core or
/// a sibling, every tool and prompt of a member is handed that member's client, a sibling key
/// is a clean URI segment and tool prefix, and no sibling key equals a core collection (its
/// item URIs would address both).
pub(crate) fn roster_problems(core: Option<&Member>, siblings: &Siblings) -> Vec<String> {
    let mut problems = Vec::new();
    if core.is_none() && siblings.is_empty() {
        problems.push(Problem::Empty.to_string());
    }
    let members = core.map(|c| (None, c)).into_iter();
    for (sibling, member) in members.chain(siblings.iter().map(|(k, m)| (Some(k.as_str()), m))) {
        for f in &member.foreign {
            problems.push(format!(
                "{} {} is handed a `{}`, but that member serves {}, not {} — give it to the member that serves {}",
                f.what,
                owner_phrase(sibling),
                f.client,
                member.spec.name,
                f.surface,
                f.surface
            ));
        }
    }
    let core_collections: Vec<&str> = core
        .iter()
        .flat_map(|c| {
            exposed_members(c)
                .filter(|(_, kind)| *kind == MemberKind::Collection)
                .map(|(k, _)| k)
        })
        .collect();
    for key in siblings.keys() {
        if core_collections.contains(&key.as_str()) {
            problems.push(Problem::SiblingIsCoreCollection { key }.to_string());
        }
        if !sibling_key_ok(key) {
            problems.push(Problem::BadSiblingKey { key }.to_string());
        }
    }
    problems
}

/// The members `member` exposes as resources, with their kinds.
pub(crate) fn exposed_members(member: &Member) -> impl Iterator<Item = (&'static str, MemberKind)> + '_ {
    member.expose.entries().iter().filter_map(|e| {
        let spec = member.spec.member(e.key)?;
        (e.exposure == Exposure::Resource).then_some((spec.name, spec.kind))
    })
}
