//! The traits `#[surface]` implements, and the in-process dispatch over them.
//!
//! `#[surface]` on a struct implements [`SurfaceMembers`]; `#[surface]` on an impl block
//! implements [`SurfaceProcedures`]. Together they make a [`Surface`], which [`DirectDispatch`]
//! serves to a typed client in the same process.

use crate::dispatch::Dispatch;
use crate::failure::{Failure, FailureKind};
use crate::member::{ChangeStream, LiveMember, Write};
use crate::spec::SurfaceSpec;
use futures::future::{self, BoxFuture, FutureExt};
use serde_json::Value;
use std::any::Any;
use std::marker::PhantomData;
use std::sync::{Arc, OnceLock};

/// The members half of a surface, implemented by `#[surface]` on a struct.
#[diagnostic::on_unimplemented(
    message = "`{Self}` is not a surface",
    label = "not declared with `#[surface]`",
    note = "add `#[surface]` above `struct {Self}` (its members); its `impl` block takes `#[surface]` too (its procedures)"
)]
pub trait SurfaceMembers: Send + Sync + Sized + 'static {
    /// The surface's type name.
    const NAME: &'static str;
    /// Its doc comment.
    const DOC: &'static str;
    /// Every member, in declaration order.
    const MEMBERS: &'static [crate::MemberSpec];
    /// The generated typed client.
    type Client: SurfaceClient;
    /// The live member called `name`.
    fn member(&self, name: &str) -> Option<&dyn LiveMember>;
}

/// The procedures half of a surface, implemented by `#[surface]` on an impl block.
///
/// It does not require [`SurfaceMembers`]: the impl block's expansion names nothing the
/// struct's declares, so a struct without `#[surface]` is one error (at the impl block's
/// `Ops`, saying to add it) rather than one per name the impl block would borrow.
#[diagnostic::on_unimplemented(
    message = "`{Self}` is not a whole surface: `#[surface]` goes on its struct and on its impl block",
    label = "the struct and the impl block of `{Self}` each need `#[surface]`",
    note = "write `#[surface] struct {Self} {{ … }}` (its members) and `#[surface] impl {Self} {{ … }}` (its procedures; empty if it has none)"
)]
pub trait SurfaceProcedures: Send + Sync + Sized + 'static {
    /// Every procedure, in declaration order.
    const PROCEDURES: &'static [crate::ProcedureSpec];
    /// Every procedure name the impl block declares, those reported as mistakes included: what
    /// `expose!` looks its keys up in, so a mistake in a procedure is reported once, there.
    #[doc(hidden)]
    const DECLARED: &'static [&'static str] = &[];
    /// The generated procedure namespaces (`OpsProcedures`), which the typed client reaches
    /// through [`Procedures`].
    type Namespaces: Send + Sync + 'static;
    /// The namespaces over `dispatch`.
    fn namespaces(dispatch: Arc<dyn Dispatch>) -> Self::Namespaces;
    /// Runs the procedure `name` on `input` (already unwrapped, not yet decoded).
    fn call<'a>(&'a self, name: &'a str, input: Value) -> BoxFuture<'a, Result<Value, Failure>>;
}

/// A whole surface: members and procedures. Implemented for every type that has both halves.
pub trait Surface: SurfaceMembers + SurfaceProcedures {
    /// The surface's spec.
    const SPEC: SurfaceSpec = SurfaceSpec {
        name: Self::NAME,
        doc: Self::DOC,
        members: Self::MEMBERS,
        procedures: Self::PROCEDURES,
    };
    /// The spec, by reference (what const evaluation of static bundles reads).
    const SPEC_REF: &'static SurfaceSpec = &Self::SPEC;
}
impl<S: SurfaceMembers + SurfaceProcedures> Surface for S {}

/// The procedure namespaces of surface `S` as its typed client holds them: the client's
/// `procedures()`, and (by `Deref`) the namespace methods themselves (`client.proc()`).
///
/// The struct's `#[surface]` declares the client, the impl block's declares the namespaces
/// (`S::Namespaces`); this type joins them without either expansion naming the other's types,
/// so a missing half is one error. The namespaces are built on first use.
///
/// ```
/// # use std::convert::Infallible;
/// # use surface_runtime::{Procedures, SurfaceClient, SurfaceProcedures};
/// # fn namespaces<C: SurfaceClient>(procedures: &Procedures<C::Surface>)
/// # where C::Surface: SurfaceProcedures {
/// let _namespaces: &<C::Surface as SurfaceProcedures>::Namespaces = procedures;
/// # }
/// ```
pub struct Procedures<S> {
    dispatch: Arc<dyn Dispatch>,
    namespaces: OnceLock<Box<dyn Any + Send + Sync>>,
    surface: PhantomData<fn() -> S>,
}

impl<S> Procedures<S> {
    /// The namespaces of `S` over `dispatch`.
    pub fn new(dispatch: Arc<dyn Dispatch>) -> Self {
        Procedures {
            dispatch,
            namespaces: OnceLock::new(),
            surface: PhantomData,
        }
    }

    /// The dispatch the namespaces call through.
    pub fn dispatch(&self) -> &Arc<dyn Dispatch> {
        &self.dispatch
    }
}

impl<S> Clone for Procedures<S> {
    fn clone(&self) -> Self {
        Procedures::new(self.dispatch.clone())
    }
}

impl<S: SurfaceProcedures> std::ops::Deref for Procedures<S> {
    type Target = S::Namespaces;
    fn deref(&self) -> &S::Namespaces {
        self.namespaces
            .get_or_init(|| Box::new(S::namespaces(self.dispatch.clone())))
            .downcast_ref()
            .expect("built from S above")
    }
}

/// A generated typed client: member and procedure methods over a [`Dispatch`].
pub trait SurfaceClient: Clone + Send + Sync + 'static {
    /// The surface this client reaches.
    type Surface;
    /// The client over `dispatch` (in-process, or a connection to a served surface).
    fn from_dispatch(dispatch: Arc<dyn Dispatch>) -> Self;
    /// The dispatch it calls through.
    fn dispatch(&self) -> &Arc<dyn Dispatch>;
}

/// Serves a surface in the same process: the typed client calls straight into it.
///
/// ```
/// # use surface_runtime::{DirectDispatch, Dispatch};
/// # fn serve<S: surface_runtime::Surface>(surface: S) {
/// let dispatch = DirectDispatch::new(std::sync::Arc::new(surface));
/// let _spec = dispatch.spec();
/// # }
/// ```
pub struct DirectDispatch<S> {
    surface: Arc<S>,
}

impl<S: Surface> DirectDispatch<S> {
    /// A dispatch into `surface`.
    pub fn new(surface: Arc<S>) -> Self {
        DirectDispatch { surface }
    }

    /// The same, as the trait object clients hold.
    pub fn shared(surface: Arc<S>) -> Arc<dyn Dispatch> {
        Arc::new(DirectDispatch::new(surface))
    }

    /// The typed client of `surface`, dispatching in-process.
    pub fn client(surface: Arc<S>) -> S::Client {
        S::Client::from_dispatch(Self::shared(surface))
    }

    fn member(&self, name: &str) -> Result<&dyn LiveMember, Failure> {
        self.surface.member(name).ok_or_else(|| {
            Failure::new(
                FailureKind::Unknown,
                format!("{} has no member \"{name}\"", S::NAME),
            )
        })
    }
}

impl<S: Surface> Dispatch for DirectDispatch<S> {
    fn spec(&self) -> &'static SurfaceSpec {
        &S::SPEC
    }
    fn read<'a>(&'a self, member: &'a str) -> BoxFuture<'a, Result<Value, Failure>> {
        future::ready(guard_sync(|| self.member(member).map(|m| m.read()))).boxed()
    }
    fn read_item<'a>(&'a self, member: &'a str, id: &'a str) -> BoxFuture<'a, Result<Value, Failure>> {
        future::ready(guard_sync(|| self.member(member).and_then(|m| m.read_item(id)))).boxed()
    }
    fn write<'a>(&'a self, member: &'a str, write: Write) -> BoxFuture<'a, Result<(), Failure>> {
        future::ready(guard_sync(|| self.member(member).and_then(|m| m.write(write)))).boxed()
    }
    fn watch<'a>(&'a self, member: &'a str) -> BoxFuture<'a, Result<ChangeStream, Failure>> {
        future::ready(self.member(member).map(|m| m.changes())).boxed()
    }
    fn call<'a>(&'a self, procedure: &'a str, input: Value) -> BoxFuture<'a, Result<Value, Failure>> {
        #[cfg(feature = "redis")]
        return crate::store::guard(self.surface.call(procedure, input)).boxed();
        #[cfg(not(feature = "redis"))]
        self.surface.call(procedure, input)
    }
}

/// A member read or write, failing as a whole when a store under it could not be reached.
fn guard_sync<T>(f: impl FnOnce() -> Result<T, Failure>) -> Result<T, Failure> {
    #[cfg(feature = "redis")]
    return crate::store::guard_sync(f);
    #[cfg(not(feature = "redis"))]
    f()
}
