//! One surface of a bundle — a core or a sibling — with its expose map, bespoke tools, prompts
//! and skills; the siblings by key.

use super::erase::{PromptOnSurface, SurfacePrompt, SurfaceTool, ToolOnSurface};
use crate::expose::{ErasedExpose, Expose};
use crate::prompt::BespokePrompt;
use crate::resource::ResourceForm;
use crate::spec::SurfaceSpec;
use crate::surface::{InputDecoder, Surface, SurfaceClient, SurfaceProcedures};
use crate::tool::BespokeTool;
use std::any::TypeId;
use std::collections::BTreeMap;
use std::fmt;
use std::sync::Arc;

/// One surface of a bundle (the core or a sibling): its spec, expose map and bespoke tools.
///
/// ```
/// # use surface_runtime::{Expose, bundle::Member};
/// # fn f<S: surface_runtime::Surface>(expose: Expose<S>) {
/// let member = Member::new(expose); // add tools with `.tool(my_tool)`
/// # }
/// ```
#[derive(Clone)]
pub struct Member {
    pub(crate) spec: &'static SurfaceSpec,
    pub(crate) expose: ErasedExpose,
    pub(crate) tools: Vec<Arc<dyn SurfaceTool>>,
    /// Declared resource URIs and body forms, by member key (see [`crate::resource`]).
    pub(crate) forms: Vec<(&'static str, ResourceForm)>,
    /// Bespoke prompts declared on this surface's client.
    pub(crate) prompts: Vec<Arc<dyn SurfacePrompt>>,
    /// Skills over this surface's expose map (`skill!`), and for each one declared over
    /// another surface that surface's name (composition refuses it).
    pub(crate) skills: Vec<(crate::skill::ErasedSkill, Option<&'static str>)>,
    /// The decoders of its procedures' inputs (`SurfaceProcedures::input_decoder` of the
    /// surface `Member` erases), for the faces that decode before they dial.
    pub(crate) input_decoder: fn(&str) -> Option<InputDecoder>,
    /// Which of its procedures may refuse with a detail (`SurfaceProcedures::refuses_with_detail`).
    pub(crate) refuses_with_detail: fn(&str) -> bool,
    /// The surface it serves, to refuse a tool or prompt handed another surface's client.
    surface: TypeId,
    /// Tools and prompts given to it that are handed another surface's client, which
    /// composition refuses (`Member` erases its surface type, so `tool` cannot refuse them at
    /// compile time; `bundle!` does).
    pub(crate) foreign: Vec<Foreign>,
}

impl Member {
    /// A surface exposed through `expose`, with no bespoke tools yet.
    pub fn new<S: Surface>(expose: Expose<S>) -> Self {
        Member {
            spec: &S::SPEC,
            expose: expose.erase(),
            tools: Vec::new(),
            forms: Vec::new(),
            prompts: Vec::new(),
            skills: Vec::new(),
            input_decoder: <S as SurfaceProcedures>::input_decoder,
            refuses_with_detail: <S as SurfaceProcedures>::refuses_with_detail,
            surface: TypeId::of::<S>(),
            foreign: Vec::new(),
        }
    }

    /// Records `what` (`bespoke tool "here"`) as foreign when client `C` reaches another
    /// surface than this member serves.
    fn check_client<C>(&mut self, what: &str)
    where
        C: SurfaceClient,
        C::Surface: 'static,
    {
        if TypeId::of::<C::Surface>() != self.surface {
            self.foreign.push(Foreign {
                what: what.to_owned(),
                client: short_type_name::<C>(),
                surface: short_type_name::<C::Surface>(),
            });
        }
    }

    /// Adds a bespoke prompt declared on this surface's client (`#[prompt]`).
    pub fn prompt<P>(mut self, prompt: P) -> Self
    where
        P: BespokePrompt,
        P::Client: SurfaceClient,
        <P::Client as SurfaceClient>::Surface: 'static,
    {
        self.check_client::<P::Client>(&format!("prompt \"{}\"", prompt.descriptor().name));
        self.prompts.push(Arc::new(PromptOnSurface(Arc::new(prompt))));
        self
    }

    /// Adds a skill declared with `skill!` over this surface's expose map: served (MCP) as
    /// `skill://<name>/SKILL.md` (a sibling's under its key). Composition refuses a skill of
    /// another surface, a key it uses that this member's map does not expose, and two skills
    /// of one name.
    pub fn skill<S: 'static>(mut self, skill: crate::skill::Skill<S>) -> Self {
        let foreign = (TypeId::of::<S>() != self.surface).then(short_type_name::<S>);
        self.skills.push((skill.erase(), foreign));
        self
    }

    /// Serves the exposed member `key` at its own URI and/or in its own body form (a later
    /// form for the same key replaces an earlier one). Composition refuses a key that is not
    /// exposed as a resource, a template on a member that is not a collection (or a plain URI
    /// on one), and a URI another member also claims.
    ///
    /// ```
    /// # use surface_runtime::{Expose, bundle::Member, resource::ResourceForm};
    /// # fn f<S: surface_runtime::Surface>(expose: Expose<S>) {
    /// const NOTE: ResourceForm = surface_runtime::resource_uri!("notes://today").text("text/markdown");
    /// let member = Member::new(expose).resource("today", NOTE);
    /// # }
    /// ```
    pub fn resource(mut self, key: &'static str, form: ResourceForm) -> Self {
        self.forms.retain(|(k, _)| *k != key);
        self.forms.push((key, form));
        self
    }

    /// The declared form of member `key` (the default when none was declared).
    pub fn form(&self, key: &str) -> ResourceForm {
        self.forms
            .iter()
            .find(|(k, _)| *k == key)
            .map(|(_, f)| *f)
            .unwrap_or_default()
    }

    /// Adds a bespoke tool declared on this surface's client. A tool handed another surface's
    /// client is refused when the bundle is composed, with a sentence naming both (`bundle!`
    /// refuses it at compile time).
    pub fn tool<T>(mut self, tool: T) -> Self
    where
        T: BespokeTool,
        T::Client: SurfaceClient,
        <T::Client as SurfaceClient>::Surface: 'static,
    {
        self.check_client::<T::Client>(&format!("bespoke tool \"{}\"", tool.descriptor().name));
        self.tools.push(Arc::new(ToolOnSurface(Arc::new(tool))));
        self
    }

    /// The surface's spec.
    pub fn spec(&self) -> &'static SurfaceSpec {
        self.spec
    }
}

impl fmt::Debug for Member {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let tools: Vec<&str> = self.tools.iter().map(|t| t.descriptor().name).collect();
        f.debug_struct("Member")
            .field("surface", &self.spec.name)
            .field("expose", &self.expose.entries())
            .field("tools", &tools)
            .finish()
    }
}

/// A tool or prompt given to a member that serves another surface than its client reaches.
#[derive(Clone, Debug)]
pub(crate) struct Foreign {
    /// `bespoke tool "here"`, `prompt "summary"`.
    pub what: String,
    /// `TenantClient`
    pub client: &'static str,
    /// `Tenant`
    pub surface: &'static str,
}

/// `TenantClient` of `bundle::TenantClient` (a type's name as its user wrote it).
fn short_type_name<T: ?Sized>() -> &'static str {
    let full = std::any::type_name::<T>();
    full.rsplit("::").next().unwrap_or(full)
}

/// The siblings of a bundle, by key.
pub type Siblings = BTreeMap<String, Member>;
