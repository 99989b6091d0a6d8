//! What a rooted bundle is made of: a core, keyed siblings, bundle-root tools, and the
//! clients a face dispatches over.

#[cfg(any(feature = "mcp", feature = "wire"))]
pub(crate) mod link;
mod roster;

pub use roster::Roster;
#[cfg(feature = "mcp")]
pub(crate) use roster::RosterParts;

use crate::blocks::ToolOutput;
use crate::dispatch::CloseSignal;
use crate::dispatch::Dispatch;
use crate::expose::{ErasedExpose, Expose};
use crate::failure::{Failure, FailureKind};
use crate::prompt::{BespokePrompt, PromptAnswer, PromptDescriptor};
use crate::resource::ResourceForm;
use crate::spec::SurfaceSpec;
use crate::surface::{InputDecoder, Surface, SurfaceClient, SurfaceProcedures};
use crate::tool::{BespokeTool, CancellationToken, ToolDescriptor};
use futures::future::BoxFuture;
use serde_json::Value;
use std::any::{Any, TypeId};
use std::collections::BTreeMap;
use std::fmt;
use std::sync::Arc;

/// A bespoke tool declared on one surface, erased: it is handed that surface's dispatch.
pub(crate) trait SurfaceTool: Send + Sync {
    fn descriptor(&self) -> &'static ToolDescriptor;
    fn invoke(
        &self,
        args: Value,
        dispatch: Arc<dyn Dispatch>,
        cancel: CancellationToken,
    ) -> BoxFuture<'static, Result<ToolOutput, Failure>>;
}

struct OnSurface<T>(Arc<T>);

impl<T> SurfaceTool for OnSurface<T>
where
    T: BespokeTool,
    T::Client: SurfaceClient,
{
    fn descriptor(&self) -> &'static ToolDescriptor {
        self.0.descriptor()
    }
    fn invoke(
        &self,
        args: Value,
        dispatch: Arc<dyn Dispatch>,
        cancel: CancellationToken,
    ) -> BoxFuture<'static, Result<ToolOutput, Failure>> {
        let tool = self.0.clone();
        Box::pin(async move {
            let client = T::Client::from_dispatch(dispatch);
            tool.invoke(args, &client, cancel).await
        })
    }
}

/// A bundle-root tool, erased: it is handed the whole bundle.
pub(crate) trait RootTool: Send + Sync {
    fn descriptor(&self) -> &'static ToolDescriptor;
    fn invoke(
        &self,
        args: Value,
        bundle: BundleClient,
        cancel: CancellationToken,
    ) -> BoxFuture<'static, Result<ToolOutput, Failure>>;
}

struct AtRoot<T>(Arc<T>);

impl<T: BespokeTool<Client = BundleClient>> RootTool for AtRoot<T> {
    fn descriptor(&self) -> &'static ToolDescriptor {
        self.0.descriptor()
    }
    fn invoke(
        &self,
        args: Value,
        bundle: BundleClient,
        cancel: CancellationToken,
    ) -> BoxFuture<'static, Result<ToolOutput, Failure>> {
        let tool = self.0.clone();
        Box::pin(async move { tool.invoke(args, &bundle, cancel).await })
    }
}

/// A bespoke prompt declared on one surface, erased: it is handed that surface's dispatch.
#[cfg_attr(not(feature = "mcp"), allow(dead_code))] // only the MCP face gets prompts
pub(crate) trait SurfacePrompt: Send + Sync {
    fn descriptor(&self) -> &'static PromptDescriptor;
    fn get(
        &self,
        args: Value,
        dispatch: Arc<dyn Dispatch>,
    ) -> BoxFuture<'static, Result<PromptAnswer, Failure>>;
}

#[cfg_attr(not(feature = "mcp"), allow(dead_code))] // only the MCP face gets prompts
struct PromptOnSurface<T>(Arc<T>);

impl<T> SurfacePrompt for PromptOnSurface<T>
where
    T: BespokePrompt,
    T::Client: SurfaceClient,
{
    fn descriptor(&self) -> &'static PromptDescriptor {
        self.0.descriptor()
    }

    fn get(
        &self,
        args: Value,
        dispatch: Arc<dyn Dispatch>,
    ) -> BoxFuture<'static, Result<PromptAnswer, Failure>> {
        let prompt = self.0.clone();
        Box::pin(async move {
            let client = T::Client::from_dispatch(dispatch);
            prompt.get(args, &client).await
        })
    }
}

/// A bespoke prompt at the bundle root, erased: it is handed the whole [`BundleClient`].
///
/// [`BundleClient`]: BundleClient
#[cfg_attr(not(feature = "mcp"), allow(dead_code))] // only the MCP face gets prompts
pub(crate) trait RootPrompt: Send + Sync {
    fn descriptor(&self) -> &'static PromptDescriptor;
    fn get(&self, args: Value, bundle: BundleClient) -> BoxFuture<'static, Result<PromptAnswer, Failure>>;
}

#[cfg_attr(not(feature = "mcp"), allow(dead_code))] // only the MCP face gets prompts
struct PromptAtRoot<T>(Arc<T>);

impl<T: BespokePrompt<Client = BundleClient>> RootPrompt for PromptAtRoot<T> {
    fn descriptor(&self) -> &'static PromptDescriptor {
        self.0.descriptor()
    }

    fn get(&self, args: Value, bundle: BundleClient) -> BoxFuture<'static, Result<PromptAnswer, Failure>> {
        let prompt = self.0.clone();
        Box::pin(async move { prompt.get(args, &bundle).await })
    }
}

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
        self.tools.push(Arc::new(OnSurface(Arc::new(tool))));
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

/// A table of bundle-root tools.
#[derive(Clone, Default)]
pub struct RootTools(pub(crate) Vec<Arc<dyn RootTool>>);

impl RootTools {
    /// No root tools.
    pub fn new() -> Self {
        RootTools::default()
    }

    /// Adds a root tool (handed the whole [`BundleClient`]).
    pub fn with<T: BespokeTool<Client = BundleClient>>(mut self, tool: T) -> Self {
        self.0.push(Arc::new(AtRoot(Arc::new(tool))));
        self
    }
}

/// A table of bundle-root prompts (`#[prompt]` over `&BundleClient`).
#[derive(Clone, Default)]
pub struct RootPrompts(pub(crate) Vec<Arc<dyn RootPrompt>>);

impl RootPrompts {
    /// No root prompts.
    pub fn new() -> Self {
        RootPrompts::default()
    }

    /// Adds a root prompt (handed the whole [`BundleClient`]).
    pub fn with<P: BespokePrompt<Client = BundleClient>>(mut self, prompt: P) -> Self {
        self.0.push(Arc::new(PromptAtRoot(Arc::new(prompt))));
        self
    }
}

/// The live clients of a bundle: the core's dispatch and each sibling's, by key, plus an
/// optional host context (what bundle-root tools need to reach the host, e.g. to reroster).
///
/// ```
/// # use surface_runtime::bundle::BundleClient;
/// let bundle = BundleClient::new();
/// assert!(bundle.core_dispatch().is_none());
/// assert!(bundle.sibling_keys().next().is_none());
/// ```
#[derive(Clone, Default)]
pub struct BundleClient {
    core: Option<Arc<dyn Dispatch>>,
    siblings: BTreeMap<String, Arc<dyn Dispatch>>,
    host: Option<Arc<dyn Any + Send + Sync>>,
}

impl BundleClient {
    /// An empty bundle.
    pub fn new() -> Self {
        BundleClient::default()
    }

    /// A bundle over erased dispatches (what a face builds when it dials lazily).
    pub(crate) fn from_dispatches(
        core: Option<Arc<dyn Dispatch>>,
        siblings: BTreeMap<String, Arc<dyn Dispatch>>,
    ) -> Self {
        BundleClient {
            core,
            siblings,
            host: None,
        }
    }

    /// A bundle whose core is `surface` itself, dispatched in-process: what
    /// `BundleClient::with_core(S::Client::direct(surface))` builds, without naming the
    /// surface's client type.
    ///
    /// ```
    /// # use std::convert::Infallible;
    /// # use std::sync::Arc;
    /// # use surface_runtime::mcp::BundleClient;
    /// # fn serve<S: surface_runtime::Surface>(surface: S) {
    /// let bundle = BundleClient::direct(Arc::new(surface));
    /// # }
    /// ```
    pub fn direct<S: crate::Surface>(surface: Arc<S>) -> Self {
        BundleClient::from_dispatches(Some(crate::DirectDispatch::shared(surface)), BTreeMap::new())
    }

    /// A bundle whose core is reached through `client`.
    pub fn with_core<C: SurfaceClient>(client: C) -> Self {
        BundleClient::new().core(client)
    }

    /// Sets the core's client.
    pub fn core<C: SurfaceClient>(mut self, client: C) -> Self {
        self.core = Some(client.dispatch().clone());
        self
    }

    /// Adds a sibling's client under `key`.
    pub fn sibling<C: SurfaceClient>(mut self, key: impl Into<String>, client: C) -> Self {
        self.siblings.insert(key.into(), client.dispatch().clone());
        self
    }

    /// Attaches a host context that root tools can read back with [`BundleClient::host`].
    pub fn with_host<H: Any + Send + Sync>(mut self, host: Arc<H>) -> Self {
        self.host = Some(host);
        self
    }

    /// The host context, if one of type `H` was attached.
    pub fn host<H: Any + Send + Sync>(&self) -> Option<Arc<H>> {
        self.host.clone()?.downcast().ok()
    }

    /// The core's typed client.
    pub fn core_client<C: SurfaceClient>(&self) -> Option<C> {
        self.core.clone().map(C::from_dispatch)
    }

    /// A sibling's typed client.
    pub fn sibling_client<C: SurfaceClient>(&self, key: &str) -> Option<C> {
        self.siblings.get(key).cloned().map(C::from_dispatch)
    }

    /// The core's dispatch.
    pub fn core_dispatch(&self) -> Option<&Arc<dyn Dispatch>> {
        self.core.as_ref()
    }

    /// A sibling's dispatch.
    pub fn sibling_dispatch(&self, key: &str) -> Option<&Arc<dyn Dispatch>> {
        self.siblings.get(key)
    }

    /// The keys of the siblings this bundle has clients for.
    pub fn sibling_keys(&self) -> impl Iterator<Item = &str> {
        self.siblings.keys().map(String::as_str)
    }

    pub(crate) fn dispatch_for(&self, sibling: Option<&str>) -> Result<Arc<dyn Dispatch>, Failure> {
        let found = match sibling {
            None => self.core.clone(),
            Some(k) => self.siblings.get(k).cloned(),
        };
        found.ok_or_else(|| {
            let whose = sibling.map_or("the core".to_owned(), |k| format!("sibling \"{k}\""));
            Failure::new(
                FailureKind::Error,
                format!("the client factory returned no client for {whose}: it must read the host's current roster"),
            )
        })
    }
}

impl fmt::Debug for BundleClient {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("BundleClient")
            .field("core", &self.core.as_ref().map(|d| d.spec().name))
            .field("siblings", &self.siblings.keys().collect::<Vec<_>>())
            .finish()
    }
}

/// A dialled bundle a face (MCP or argv) owns: the clients, how to close them, and (where the
/// transport can announce it) the signal that fires when it drops.
pub struct OwnedBundle {
    pub(crate) bundle: BundleClient,
    pub(crate) dispose: Option<Box<dyn FnOnce() + Send + Sync>>,
    pub(crate) on_close: Option<CloseSignal>,
}

impl OwnedBundle {
    /// Owns `bundle`, with nothing to dispose and no close announcement.
    pub fn new(bundle: BundleClient) -> Self {
        OwnedBundle {
            bundle,
            dispose: None,
            on_close: None,
        }
    }

    /// Called on teardown and before every re-dial.
    pub fn dispose(mut self, dispose: impl FnOnce() + Send + Sync + 'static) -> Self {
        self.dispose = Some(Box::new(dispose));
        self
    }

    /// The transport's close signal: supply it whenever the dial can reach it, so a dead
    /// connection is discarded the instant it dies instead of by failing a request.
    pub fn on_close(mut self, signal: CloseSignal) -> Self {
        self.on_close = Some(signal);
        self
    }
}

impl fmt::Debug for OwnedBundle {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("OwnedBundle")
            .field("bundle", &self.bundle)
            .field("on_close", &self.on_close)
            .finish()
    }
}

/// Dials the bundle afresh; re-invoked after a drop and after every reroster.
pub type DialFactory = Arc<dyn Fn() -> BoxFuture<'static, Result<OwnedBundle, Failure>> + Send + Sync>;
