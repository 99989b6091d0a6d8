//! Per caller: what a principal's scopes reach on the MCP face, decided by the expose map's
//! `scope = …` (and `#[tool(scope = …)]`). The lists show exactly that; anything else answers
//! as if it did not exist, and over HTTP as a `403` step-up challenge before anything runs.
//!
//! A member's resource (its URI and its item template) and its mirror tools need the scope of
//! its exposure; a view needs what the tools bound to it need (any one of them reached shows
//! it). With no principal (a face that identified nobody) everything is reached.

use super::generation::Generation;
use crate::Principal;
use crate::Scope;
use crate::scopes::reaches;
#[cfg(feature = "auth")]
use rmcp::model::{ClientJsonRpcMessage, ClientRequest, Reference};

impl Generation {
    /// The scope tool `name` needs (`None`: none, or no such tool).
    pub(crate) fn tool_scope(&self, name: &str) -> Option<&'static Scope> {
        self.tools.get(name)?.scope
    }

    /// The scope reading `uri` needs: its member's, or a view's (that of a tool bound to it).
    pub(crate) fn uri_scope(&self, uri: &str) -> Option<&'static Scope> {
        if let Some(skill) = self.skills.get(uri) {
            return skill.scope();
        }
        match self.resolve_uri(uri) {
            Some((entry, _)) => entry.scope,
            None => self.view_tools(uri).find_map(|scope| scope),
        }
    }

    /// The scopes of the tools bound to view `uri`, one per tool.
    fn view_tools<'a>(&'a self, uri: &'a str) -> impl Iterator<Item = Option<&'static Scope>> + 'a {
        self.tools
            .values()
            .filter(move |t| t.view == Some(uri))
            .map(|t| t.scope)
    }

    /// Whether `principal` reaches tool `name` (an unknown name is the caller's to be told).
    pub(crate) fn reaches_tool(&self, name: &str, principal: Option<&Principal>) -> bool {
        reaches(self.tool_scope(name), principal)
    }

    /// Whether `principal` reaches the resource at `uri`.
    pub(crate) fn reaches_uri(&self, uri: &str, principal: Option<&Principal>) -> bool {
        if principal.is_none() {
            return true;
        }
        if let Some(skill) = self.skills.get(uri) {
            return skill.reached_by(principal);
        }
        match self.resolve_uri(uri) {
            Some((entry, _)) => reaches(entry.scope, principal),
            None => {
                let mut bound = self.view_tools(uri).peekable();
                bound.peek().is_none() || bound.any(|scope| reaches(scope, principal))
            }
        }
    }

    /// Whether `principal` reaches the item template written `template`.
    pub(crate) fn reaches_template(&self, template: &str, principal: Option<&Principal>) -> bool {
        principal.is_none()
            || self
                .templates
                .iter()
                .find(|t| format!("{}{{id}}{}", t.prefix, t.suffix) == template)
                .is_none_or(|t| reaches(t.entry.scope, principal))
    }

    /// The scope a template's items (and its completion) need.
    pub(crate) fn template_scope(&self, template: &str) -> Option<&'static Scope> {
        let t = self
            .templates
            .iter()
            .find(|t| format!("{}{{id}}{}", t.prefix, t.suffix) == template)?;
        t.entry.scope
    }
}

/// The scope `message` needs that `principal` lacks, if any: a `tools/call`, `resources/read`,
/// `resources/subscribe`, a listen's URIs or a template's completion outside its scopes (the
/// step-up challenge names it).
#[cfg(feature = "auth")]
pub(crate) fn missing(
    generation: &Generation,
    message: &ClientJsonRpcMessage,
    principal: &Principal,
) -> Option<&'static str> {
    let ClientJsonRpcMessage::Request(request) = message else {
        return None;
    };
    let lacks = |scope: &&'static Scope| !scope.granted_by(principal.scopes());
    let needed: Vec<Option<&'static Scope>> = match &request.request {
        // Every call asks this: one scope, judged without collecting it.
        ClientRequest::CallToolRequest(call) => {
            return generation
                .tool_scope(call.params.name.as_ref())
                .filter(lacks)
                .map(|scope| scope.wire);
        }
        ClientRequest::ReadResourceRequest(read) => match generation.skills.get(&read.params.uri) {
            Some(skill) => skill.scopes.iter().copied().map(Some).collect(),
            None => vec![generation.uri_scope(&read.params.uri)],
        },
        ClientRequest::GetSkillRequest(get) => match generation.skills.get(&get.params.uri) {
            Some(skill) => skill.scopes.iter().copied().map(Some).collect(),
            None => Vec::new(),
        },
        #[allow(deprecated)]
        ClientRequest::SubscribeRequest(sub) => vec![generation.uri_scope(&sub.params.uri)],
        ClientRequest::SubscriptionsListenRequest(listen) => listen
            .params
            .notifications
            .resource_subscriptions
            .iter()
            .flatten()
            .map(|uri| generation.uri_scope(uri))
            .collect(),
        ClientRequest::CompleteRequest(complete) => match &complete.params.r#ref {
            Reference::Resource(r) => vec![generation.template_scope(&r.uri)],
            _ => Vec::new(),
        },
        _ => Vec::new(),
    };
    needed.into_iter().flatten().find(lacks).map(|scope| scope.wire)
}
