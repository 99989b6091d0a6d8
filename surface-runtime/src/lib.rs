//! The runtime of `surface`: specs, expose maps, live members, typed clients, bespoke tools,
//! the schema bridge and (with the `mcp` feature, on by default) the MCP face.
//!
//! Users depend on the `surface` crate, which re-exports this one and the macros.

#![warn(missing_docs)]

pub mod ask;
#[cfg(any(feature = "mcp", feature = "wire"))]
pub mod audit;
#[cfg(feature = "auth")]
pub mod auth;
#[cfg(any(feature = "mcp", feature = "wire"))]
mod batch;
pub mod blocks;
pub mod bundle;
#[cfg(feature = "cli")]
pub mod cli;
mod consteval;
pub mod context;
mod dispatch;
#[cfg(any(feature = "mcp", feature = "wire"))]
pub mod drain;
mod expose;
mod failure;
pub mod layer;
#[cfg(feature = "mcp")]
pub mod mcp;
mod member;
#[cfg(feature = "otlp")]
pub mod otlp;
mod principal;
pub mod project;
pub mod prompt;
pub mod resource;
mod role;
pub use consteval::rules;
pub mod schema;
mod scopes;
pub mod skill;
mod spec;
#[cfg(any(feature = "mcp", feature = "wire"))]
mod stdio;
#[cfg(all(unix, any(feature = "mcp", feature = "wire")))]
mod stdout;
pub mod store;
mod surface;
mod sync;
pub mod table;
#[cfg(feature = "testing")]
pub mod testing;
mod tool;
pub mod view;
#[cfg(feature = "wire")]
pub mod wire;

#[doc(hidden)]
#[path = "private.rs"]
pub mod __private;

/// What `expose!` looks keys up in (hidden: named here so compiler messages name it without a
/// path).
#[doc(hidden)]
pub use __private::keys::{SurfaceKeys, SurfaceMemberKeys, SurfaceScopes};
/// The rules generated checks name (hidden: named here so compiler messages name them without
/// a path).
#[doc(hidden)]
pub use __private::{
    IsClient, IsMemberKey, IsMemberValue, IsProcedureInput, IsResult, IsToolInput, SucceedsWith,
};
/// The bounds `#[surface]` and `#[tool]` check a procedure's or tool's types against (named
/// here so compiler messages name them by a public path).
pub use __private::{
    Output, ProcedureInput, ProcedureResult, RendersAudio, RendersImage, ToolInput, ToolResult,
};
pub use blocks::{IntoToolOutput, OkAudio, OkContent, OkImage, ToolOutput, ok_audio, ok_image};
pub use dispatch::{
    CellClient, CloseSignal, CollectionClient, Dispatch, EventClient, StreamClient, call_typed, change_value,
};
pub use expose::{ErasedExpose, Expose, ExposeEntry, Exposure};
pub use failure::{Failure, FailureKind, IntoFailure, ToolFailure};
/// What a backend (`store::RedisStore::attach`) binds: a surface's members, by name (hidden:
/// every `#[surface]` struct is one through [`SurfaceMembers`]).
#[doc(hidden)]
pub use member::LiveMembers;
pub use member::{
    Cell, Change, ChangeStream, Collection, CollectionChange, Counter, Event, LiveMember, MemberKey,
    MemberValue, STREAM_HISTORY, Stream, Write, id_to_key, key_to_id,
};
pub use principal::Principal;
pub use project::ReadOnly;
/// The schemars the generated schemas are built with (derive `schemars::JsonSchema` with your
/// own dependency on it). Public, so that a compiler message about a missing `JsonSchema` names
/// the trait plainly rather than through a hidden path.
pub use schemars;
pub use scopes::Scope;
pub use spec::{MemberKind, MemberSpec, ProcedureSpec, SurfaceSpec, TypeSpec};
pub use surface::{DirectDispatch, Procedures, Surface, SurfaceClient, SurfaceMembers, SurfaceProcedures};
pub use tool::{BespokeTool, CancellationToken, StaticTool, TaskSupport, ToolDescriptor, ToolTable};
pub use view::View;
