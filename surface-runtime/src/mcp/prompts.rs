//! Prompts on the MCP face: the prompt table of a generation (a sibling's prompts prefixed
//! `t_<name>`, every name checked once against the others and the host limits), `prompts/list`
//! and `prompts/get`.

use super::results::branded;
use crate::bundle::{BundleClient, Member, Siblings};
use crate::bundle::{RootPrompt, SurfacePrompt};
use crate::failure::Failure;
use crate::prompt::{self, PromptAnswer, PromptDescriptor, Role};
use crate::rules::{Name, NameOf, Origin, Place, Problem};
use crate::table::{Owner, scoped_tool_name};
use rmcp::model::{self, GetPromptResult, Prompt, PromptArgument};
use serde_json::{Map, Value};
use std::collections::HashMap;
use std::sync::Arc;

/// What a prompt name renders: a member's prompt (handed its surface's client) or one at the
/// bundle root (handed the whole bundle).
#[derive(Clone)]
pub(crate) enum PromptEntry {
    Member {
        owner: Owner,
        prompt: Arc<dyn SurfacePrompt>,
    },
    Root(Arc<dyn RootPrompt>),
}

impl PromptEntry {
    pub(crate) fn descriptor(&self) -> &'static PromptDescriptor {
        match self {
            PromptEntry::Member { prompt, .. } => prompt.descriptor(),
            PromptEntry::Root(prompt) => prompt.descriptor(),
        }
    }
}

/// The prompts of a bundle by name, and the `prompts/list` answer, in core-then-siblings-then-
/// root order.
pub(crate) fn prompt_table(
    core: Option<&Member>,
    siblings: &Siblings,
    root: &[Arc<dyn RootPrompt>],
    problems: &mut Vec<String>,
) -> (HashMap<String, PromptEntry>, Vec<Prompt>) {
    let members = core
        .map(|c| (None, c))
        .into_iter()
        .chain(siblings.iter().map(|(k, m)| (Some(k.as_str()), m)));
    let entries = members
        .flat_map(|(sibling, member)| {
            member.prompts.iter().map(move |p| {
                let entry = PromptEntry::Member {
                    owner: sibling.map(str::to_owned),
                    prompt: p.clone(),
                };
                (
                    scoped_tool_name(sibling, p.descriptor().name),
                    Place::of(sibling),
                    entry,
                )
            })
        })
        .chain(root.iter().map(|p| {
            let name = p.descriptor().name.to_owned();
            (name, Place::Root, PromptEntry::Root(p.clone()))
        }));
    let mut table = HashMap::new();
    let mut origins: HashMap<String, Origin<'_>> = HashMap::new();
    let mut list = Vec::new();
    for (name, place, entry) in entries {
        let d = entry.descriptor();
        // The rules and sentences of tool names, in the prompts' own namespace.
        let origin = Origin {
            what: "prompt",
            word: d.name,
            place,
        };
        let whole = Name::whole(&name);
        if !whole.ok() {
            let limits = Problem::NameLimits {
                of: NameOf::Prompt,
                name: whole,
                origin,
            };
            problems.push(limits.to_string());
        }
        if let Some(first) = origins.get(&name) {
            let twice = Problem::NameTwice {
                of: NameOf::Prompt,
                name: whole,
                first: *first,
                second: origin,
            };
            problems.push(twice.to_string());
            continue;
        }
        let input = (d.input)();
        for field in prompt::non_string_arguments(&input) {
            problems.push(format!(
                "{origin} takes argument `{field}`, which is not a string — MCP prompt arguments are strings: make the field a String (or an enum of names, or an Option of these)"
            ));
        }
        let arguments: Vec<PromptArgument> = prompt::arguments(&input)
            .into_iter()
            .map(|a| {
                let mut arg = PromptArgument::new(a.name).with_required(a.required);
                if let Some(description) = a.description {
                    arg = arg.with_description(description);
                }
                arg
            })
            .collect();
        let description = (!d.description.is_empty()).then_some(d.description);
        let mut listed = Prompt::new(name.clone(), description, Some(arguments));
        if let Some(t) = d.title {
            listed = listed.with_title(t);
        }
        list.push(listed);
        origins.insert(name.clone(), origin);
        table.insert(name, entry);
    }
    (table, list)
}

/// Renders `entry` over `bundle` for the host's string arguments.
pub(crate) async fn render(
    entry: &PromptEntry,
    bundle: &BundleClient,
    arguments: Option<Map<String, Value>>,
) -> Result<GetPromptResult, Failure> {
    let args = Value::Object(arguments.unwrap_or_default());
    let PromptAnswer {
        description,
        messages,
    } = match entry {
        PromptEntry::Member { owner, prompt } => {
            let dispatch = bundle.dispatch_for(owner.as_deref())?;
            prompt.get(args, dispatch.clone()).await?
        }
        PromptEntry::Root(prompt) => prompt.get(args, bundle.clone()).await?,
    };
    let messages = messages
        .into_iter()
        .map(|m| {
            let role = match m.role {
                Role::User => model::Role::User,
                Role::Assistant => model::Role::Assistant,
            };
            model::PromptMessage::new(role, super::results::block(m.block))
        })
        .collect();
    let mut result = GetPromptResult::new(messages);
    result.description = description;
    Ok(result)
}

/// The refusal for a prompt name no roster serves.
pub(crate) fn unknown(name: &str) -> rmcp::ErrorData {
    rmcp::ErrorData::invalid_params(branded(&format!("unknown prompt \"{name}\"")), None)
}
