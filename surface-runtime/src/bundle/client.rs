//! The clients of a rooted bundle a face dispatches over, and a dialled bundle a face owns.

use crate::dispatch::CloseSignal;
use crate::dispatch::Dispatch;
use crate::failure::{Failure, FailureKind};
use crate::surface::SurfaceClient;
use futures::future::BoxFuture;
use std::any::Any;
use std::collections::BTreeMap;
use std::fmt;
use std::sync::Arc;

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

    /// The dispatch of `sibling` (`None`: the core), borrowed: a call's path clones none.
    pub(crate) fn dispatch_for(&self, sibling: Option<&str>) -> Result<&Arc<dyn Dispatch>, Failure> {
        let found = match sibling {
            None => self.core.as_ref(),
            Some(k) => self.siblings.get(k),
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
