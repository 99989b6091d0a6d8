//! What generated code calls. Not a public API: names here may change in any release.
//!
//! Everything generated code names goes through this module (`::surface::__private::…`), so a
//! user depends on `surface` alone and rmcp, serde_json and schemars churn stays in one crate.

pub use crate::blocks::{IntoToolOutput, ToolOutput};
pub use crate::context::FromCall;
pub use crate::expose::{ExposeEntry, Exposure};
pub use crate::failure::{Failure, FailureKind, IntoFailure, encode_value};
pub use crate::surface::InputDecoder;
pub use futures::future::{BoxFuture, FutureExt};
pub use schemars;
pub use serde;
pub use serde_json;
pub use std::sync::Arc;

use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::Value;

/// `bundle!`'s roster and its compile-time check.
pub mod bundle {
    pub use crate::bundle::{Member, Roster};
    pub use crate::consteval::static_bundle::{
        Culprit, StaticBundle, StaticMember, problem_at, static_member, view_problem, views_problem,
    };
}

/// `expose!`'s key lookup (see the module).
pub mod keys {
    pub use crate::consteval::Sentence;
    pub use crate::consteval::keys::{
        exposed_problem, member_as_tool_problem, member_problem, mirror_problem, procedure_problem,
        scope_problem, unquoted_tool_problem,
    };
    use crate::{MemberSpec, SurfaceMembers};

    /// What `expose!` looks keys up in: the surface's name, its members and every procedure
    /// name it declares, as one constant, so a type that is not a surface is one error.
    #[diagnostic::on_unimplemented(
        message = "`{Self}` is not a whole surface: `#[surface]` goes on its struct and on its impl block",
        label = "`expose!` names the procedures of `{Self}`, which needs both",
        note = "write `#[surface] struct {Self} {{ … }}` (its members) and `#[surface] impl {Self} {{ … }}` (its procedures; empty if it has none)"
    )]
    ///
    /// The impl block's `#[surface]` implements it (naming the struct's members through
    /// `SurfaceMembers`, spanned at the impl block's type), so a surface missing either half
    /// is one error: here when `expose!` names a surface without its impl block, there when
    /// the struct lacks `#[surface]`.
    pub trait SurfaceKeys {
        /// `(name, members, declared procedure names, other fields)`
        #[allow(clippy::type_complexity)]
        const KEYS: (
            &'static str,
            &'static [MemberSpec],
            &'static [&'static str],
            &'static [OtherField],
        );
        /// The surface itself (the type of its expose map).
        type Surface;
    }

    /// A field of a surface's struct that is not a member here: its name, and whether it is a
    /// member `#[cfg]` leaves out of this build (else a field without a member attribute).
    pub type OtherField = (&'static str, bool);

    /// The same for a map of members alone, which does not need the impl block.
    #[diagnostic::on_unimplemented(
        message = "`{Self}` is not a surface",
        label = "not declared with `#[surface]`",
        note = "add `#[surface]` above `struct {Self}` (its members); its `impl` block takes `#[surface]` too (its procedures)"
    )]
    pub trait SurfaceMemberKeys {
        /// `(name, members, other fields)`
        const KEYS: (&'static str, &'static [MemberSpec], &'static [OtherField]);
        /// The surface itself (the type of its expose map).
        type Surface;
    }

    /// The scopes a surface declares (`scopes!` writes the one impl), which `expose!` names.
    #[diagnostic::on_unimplemented(
        message = "`{Self}` declares no scopes",
        label = "`expose!` names a scope of `{Self}`",
        note = "declare them once with `scopes!({Self} {{ read = \"ops.read\", admin = \"ops.admin\": read }})`"
    )]
    pub trait SurfaceScopes {
        /// The declared scopes, in the order written.
        const SCOPES: &'static [crate::Scope];
        /// Their names, for the lookup's suggestions.
        const NAMES: &'static [&'static str];
    }

    /// The wire string of the scope named `name` (`expose!` checks the name first).
    pub const fn scope_wire(scopes: &'static [crate::Scope], name: &str) -> &'static str {
        let mut i = 0;
        while i < scopes.len() {
            if crate::consteval::rules::str_eq(scopes[i].name, name) {
                return scopes[i].wire;
            }
            i += 1;
        }
        ""
    }

    /// The scope named `name` (`#[tool(scope = …)]` checks the name first).
    pub const fn scope_named(scopes: &'static [crate::Scope], name: &str) -> Option<&'static crate::Scope> {
        let mut i = 0;
        while i < scopes.len() {
            if crate::consteval::rules::str_eq(scopes[i].name, name) {
                return Some(&scopes[i]);
            }
            i += 1;
        }
        None
    }

    // Not offered as the impl to meet: the trait's own message says to add `#[surface]`.
    #[diagnostic::do_not_recommend]
    impl<S: SurfaceMembers> SurfaceMemberKeys for S {
        const KEYS: (&'static str, &'static [MemberSpec], &'static [OtherField]) =
            (S::NAME, S::MEMBERS, S::OTHER_FIELDS);
        // Through the client, so for a type that is not a surface this is an error type,
        // not a second mismatch with the map's declared type.
        type Surface = <S::Client as crate::SurfaceClient>::Surface;
    }
}

/// Implemented by the client of surface `S` alone (`#[surface]` writes the one impl):
/// `bundle!` checks that a tool given to a member is handed that member's client. One impl per
/// client rather than a blanket over `SurfaceClient::Surface`, so a mismatch is this trait's
/// message rather than a projection mismatch.
#[diagnostic::on_unimplemented(
    message = "this tool is handed a `{Self}`, not the client of `{S}`",
    label = "a tool given to a member is handed that member's client",
    note = "give the tool to the member that serves its surface, or to `root: [...]` if it takes `BundleClient`"
)]
pub trait ClientOf<S> {}

/// `bundle!`'s check that a tool handed to a member takes that member's client, `C` (the
/// surface's `SurfaceMembers::Client`), so the message names both clients.
#[diagnostic::on_unimplemented(
    message = "this tool is handed a `{Self}`, but this member serves `{C}`",
    label = "a tool given to a member is handed that member's client",
    note = "give the tool to the member whose client is `{Self}`, or to `root: [...]` if it takes `BundleClient`"
)]
pub trait IsClient<C> {}
#[diagnostic::do_not_recommend]
impl<C> IsClient<C> for C {}

/// What a bespoke tool's input must be: decoded from the agent's JSON, described by a schema.
#[diagnostic::on_unimplemented(
    message = "`{Self}` cannot be the input of a tool",
    label = "needs `Deserialize` and `JsonSchema`",
    note = "add `#[derive(serde::Deserialize, schemars::JsonSchema)]` to the type"
)]
pub trait ToolInput: DeserializeOwned + schemars::JsonSchema + Send + 'static {}
impl<T: DeserializeOwned + schemars::JsonSchema + Send + 'static> ToolInput for T {}

/// What a procedure's input must be: a tool input the typed client can also encode.
#[diagnostic::on_unimplemented(
    message = "`{Self}` cannot be the input of a procedure",
    label = "needs `Serialize` (the typed client sends it), `Deserialize` and `JsonSchema`",
    note = "add `#[derive(serde::Serialize, serde::Deserialize, schemars::JsonSchema)]` to the type"
)]
pub trait ProcedureInput: ToolInput + Serialize {}
impl<T: ToolInput + Serialize> ProcedureInput for T {}

/// What a procedure's success type must be: encoded by the server, decoded by the typed client,
/// described by a schema.
#[diagnostic::on_unimplemented(
    message = "`{Self}` cannot be the output of a procedure",
    label = "needs `Serialize`, `Deserialize` (the typed client decodes it) and `JsonSchema`",
    note = "add `#[derive(serde::Serialize, serde::Deserialize, schemars::JsonSchema)]` to the type"
)]
pub trait Output: Serialize + DeserializeOwned + schemars::JsonSchema {}
impl<T: Serialize + DeserializeOwned + schemars::JsonSchema> Output for T {}

/// Declares a rule (see [`IsMemberValue`]): a trait without supertraits, with the hidden
/// constant checks name and one message, implemented for every type that meets `$bound`.
macro_rules! rule {
    ($(#[$doc:meta])* $name:ident: $bound:path, $message:tt, $label:tt, $note:tt) => {
        $(#[$doc])*
        #[diagnostic::on_unimplemented(message = $message, label = $label, note = $note)]
        pub trait $name {
            /// What a generated check reads.
            const __QUALIFIES: () = ();
        }
        impl<T: $bound> $name for T {}
    };
}

rule! {
    /// The rules generated checks name: `let () = <Load as ::surface::IsMemberValue>::__QUALIFIES;`,
    /// spanned at the user's type.
    ///
    /// Naming an associated constant makes rustc check the type where it is written, in the
    /// rule's own words (`on_unimplemented`), with no note pointing into this crate — which a
    /// function bound (`fn check<T: MemberValue>()`) or a constant of a trait with supertraits
    /// would add. So each public bound with supertraits gets a rule without them, implemented
    /// for every type that meets the bound, with the same message.
    IsMemberValue: crate::MemberValue,
    "`{Self}` cannot be the value of a surface member",
    "needs `Serialize`, `Deserialize`, `JsonSchema`, `Clone`, `Send` and `Sync`",
    "add `#[derive(Clone, serde::Serialize, serde::Deserialize, schemars::JsonSchema)]` to the type"
}
rule! {
    /// The rule for a collection's key type (see [`IsMemberValue`]).
    IsMemberKey: crate::MemberKey,
    "`{Self}` cannot be the key of a surface collection",
    "needs `Serialize`, `Deserialize`, `JsonSchema`, `Ord`, `Clone`, `Send` and `Sync`",
    "integers and `String` are the usual keys"
}
rule! {
    /// The rule for a bespoke tool's input type (see [`IsMemberValue`]).
    IsToolInput: ToolInput,
    "`{Self}` cannot be the input of a tool",
    "needs `Deserialize` and `JsonSchema`",
    "add `#[derive(serde::Deserialize, schemars::JsonSchema)]` to the type"
}
rule! {
    /// The rule for a procedure's input type (see [`IsMemberValue`]).
    IsProcedureInput: ProcedureInput,
    "`{Self}` cannot be the input of a procedure",
    "needs `Serialize` (the typed client sends it), `Deserialize` and `JsonSchema`",
    "add `#[derive(serde::Serialize, serde::Deserialize, schemars::JsonSchema)]` to the type"
}

/// `Result<T, E>`, seen through a trait so that the bounds on `T` and `E` live on the impls of
/// [`ProcedureResult`] and [`ToolResult`] (a return type that is not a `Result` at all is then
/// reported in those traits' words, and `do_not_recommend` keeps rustc from pointing at this
/// impl as the one to write).
pub trait IsResult {
    /// `T`.
    type Ok;
    /// `E`.
    type Err;
    /// The `Result` itself.
    fn into_result(self) -> Result<Self::Ok, Self::Err>;
}
#[diagnostic::do_not_recommend]
impl<T, E> IsResult for Result<T, E> {
    type Ok = T;
    type Err = E;
    fn into_result(self) -> Self {
        self
    }
}

/// What a procedure returns: `Result<T, E>` with `T: Serialize` and `E` a failure.
#[diagnostic::on_unimplemented(
    message = "a procedure must return `Result<T, E>`, not `{Self}`",
    label = "`T: Serialize + Deserialize + JsonSchema`, `E: ToolFailure<D>` or any `std::error::Error`",
    note = "wrap an infallible answer: `Ok::<_, std::convert::Infallible>(value)`"
)]
pub trait ProcedureResult {
    /// The success type, for the spec.
    type Ok: Output;
    /// The erased answer.
    fn into_answer(self) -> Result<Value, Failure>;
    /// Whether its failure may carry a detail ([`IntoFailure::CARRIES_DETAIL`]).
    const REFUSES_WITH_DETAIL: bool = false;
    /// What a generated check reads: naming it makes rustc check the type where it is named.
    #[doc(hidden)]
    const __QUALIFIES: () = ();
}
impl<R: IsResult> ProcedureResult for R
where
    R::Ok: Output,
    R::Err: IntoFailure,
{
    type Ok = R::Ok;
    const REFUSES_WITH_DETAIL: bool = <R::Err as IntoFailure>::CARRIES_DETAIL;
    fn into_answer(self) -> Result<Value, Failure> {
        match self.into_result() {
            Ok(v) => encode_value(&v),
            Err(e) => Err(e.into_failure()),
        }
    }
}

/// The success type of a return type written `Result<T, E>` is `T` (a local `Result` alias
/// with its arguments swapped makes it `E`): checked as `<<R as IsResult>::Ok as
/// SucceedsWith<T>>`, so the message names the type the procedure really succeeds with.
#[diagnostic::on_unimplemented(
    message = "this procedure succeeds with `{Self}`, not `{T}`: its `Result` is an alias whose arguments are not `<T, E>`",
    label = "the typed client would decode `{T}`",
    note = "write `std::result::Result<{Self}, E>`"
)]
pub trait SucceedsWith<T> {
    /// What a generated check reads.
    #[doc(hidden)]
    const __QUALIFIES: () = ();
}
#[diagnostic::do_not_recommend]
impl<T> SucceedsWith<T> for T {}

/// What a bespoke tool returns: `Result<T, E>` with `T` a tool output and `E` a failure.
#[diagnostic::on_unimplemented(
    message = "a tool must return `Result<T, E>`, not `{Self}`",
    label = "`T: Serialize` (or `OkImage`), `E: ToolFailure<D>` or any `std::error::Error`"
)]
pub trait ToolResult {
    /// The erased answer.
    fn into_output(self) -> Result<ToolOutput, Failure>;
    /// What a generated check reads.
    #[doc(hidden)]
    const __QUALIFIES: () = ();
}
impl<R: IsResult> ToolResult for R
where
    R::Ok: IntoToolOutput,
    R::Err: IntoFailure,
{
    fn into_output(self) -> Result<ToolOutput, Failure> {
        match self.into_result() {
            Ok(v) => v.into_tool_output(),
            Err(e) => Err(e.into_failure()),
        }
    }
}

/// A tool result whose answer is a picture (`render = image`).
#[diagnostic::on_unimplemented(
    message = "a tool declared `render = image` must return `Result<OkImage, E>`, not `{Self}`",
    label = "build the answer with `ok_image(bytes, mime, detail)`"
)]
pub trait RendersImage {
    /// What a generated check reads.
    #[doc(hidden)]
    const __QUALIFIES: () = ();
}
#[diagnostic::do_not_recommend]
impl<E> RendersImage for Result<crate::OkImage, E> {}

/// The live members and typed member clients generated code builds, one function per kind
/// whose type parameters are checked one by one: rustc then reports a type that does not
/// qualify at that type's own span, where `#[surface]` already checked it, and drops the
/// repeat (a collection's key is never blamed on its value type).
pub mod members {
    use crate::dispatch::Dispatch;
    use crate::member::{Cell, Collection, Event, LiveMember, Stream};
    use crate::{CellClient, CollectionClient, EventClient, MemberKey, MemberValue, ReadOnly, StreamClient};

    /// A cell as a live member.
    pub fn live_cell<T: MemberValue>(cell: &Cell<T>) -> &dyn LiveMember {
        cell
    }
    /// A collection as a live member.
    pub fn live_collection<K: MemberKey, V: MemberValue>(c: &Collection<K, V>) -> &dyn LiveMember {
        c
    }
    /// A stream as a live member.
    pub fn live_stream<C: MemberValue>(stream: &Stream<C>) -> &dyn LiveMember {
        stream
    }
    /// An event as a live member.
    pub fn live_event<T: MemberValue>(event: &Event<T>) -> &dyn LiveMember {
        event
    }
    /// The typed client of a cell.
    pub fn cell_client<'a, T: MemberValue>(d: &'a dyn Dispatch, member: &'static str) -> CellClient<'a, T> {
        CellClient::__new(d, member)
    }
    /// The typed client of a collection.
    pub fn collection_client<'a, K: MemberKey, V: MemberValue>(
        d: &'a dyn Dispatch,
        member: &'static str,
    ) -> CollectionClient<'a, K, V> {
        CollectionClient::__new(d, member)
    }
    /// The typed client of a stream.
    pub fn stream_client<'a, C: MemberValue>(
        d: &'a dyn Dispatch,
        member: &'static str,
    ) -> StreamClient<'a, C> {
        StreamClient::__new(d, member)
    }
    /// The typed client of an event.
    pub fn event_client<'a, T: MemberValue>(d: &'a dyn Dispatch, member: &'static str) -> EventClient<'a, T> {
        EventClient::__new(d, member)
    }

    /// A derived cell as a live member.
    pub fn live_derived_cell<T: MemberValue>(cell: &ReadOnly<Cell<T>>) -> &dyn LiveMember {
        cell
    }
    /// A derived collection as a live member.
    pub fn live_derived_collection<K: MemberKey, V: MemberValue>(
        c: &ReadOnly<Collection<K, V>>,
    ) -> &dyn LiveMember {
        c
    }
    /// A derived stream as a live member.
    pub fn live_derived_stream<C: MemberValue>(stream: &ReadOnly<Stream<C>>) -> &dyn LiveMember {
        stream
    }
    /// A derived event as a live member.
    pub fn live_derived_event<T: MemberValue>(event: &ReadOnly<Event<T>>) -> &dyn LiveMember {
        event
    }
    /// The typed client of a derived cell: reads only.
    pub fn derived_cell_client<'a, T: MemberValue>(
        d: &'a dyn Dispatch,
        member: &'static str,
    ) -> ReadOnly<CellClient<'a, T>> {
        ReadOnly::new(CellClient::__new(d, member))
    }
    /// The typed client of a derived collection: reads only.
    pub fn derived_collection_client<'a, K: MemberKey, V: MemberValue>(
        d: &'a dyn Dispatch,
        member: &'static str,
    ) -> ReadOnly<CollectionClient<'a, K, V>> {
        ReadOnly::new(CollectionClient::__new(d, member))
    }
    /// The typed client of a derived stream: reads only.
    pub fn derived_stream_client<'a, C: MemberValue>(
        d: &'a dyn Dispatch,
        member: &'static str,
    ) -> ReadOnly<StreamClient<'a, C>> {
        ReadOnly::new(StreamClient::__new(d, member))
    }
    /// The typed client of a derived event: reads only.
    pub fn derived_event_client<'a, T: MemberValue>(
        d: &'a dyn Dispatch,
        member: &'static str,
    ) -> ReadOnly<EventClient<'a, T>> {
        ReadOnly::new(EventClient::__new(d, member))
    }
}

/// A tool result whose answer is a sound (`render = audio`).
#[diagnostic::on_unimplemented(
    message = "a tool declared `render = audio` must return `Result<OkAudio, E>`, not `{Self}`",
    label = "build the answer with `ok_audio(bytes, mime, detail)`"
)]
pub trait RendersAudio {
    /// What a generated check reads.
    #[doc(hidden)]
    const __QUALIFIES: () = ();
}
#[diagnostic::do_not_recommend]
impl<E> RendersAudio for Result<crate::OkAudio, E> {}

/// A procedure's answer, erased (`R` named by the caller, so a return type that does not
/// qualify is blamed on the user's type, where its check already reported it).
pub fn answer<R: ProcedureResult>(result: R) -> Result<Value, Failure> {
    result.into_answer()
}

/// A tool's answer, erased (likewise).
pub fn tool_answer<R: ToolResult>(result: R) -> Result<ToolOutput, Failure> {
    result.into_output()
}

/// The bridged JSON Schema of `T`.
pub fn schema_of<T: schemars::JsonSchema>() -> Value {
    crate::schema::schema_for::<T>()
}

/// The bridged JSON Schema of a procedure's success type.
pub fn output_schema_of<R: ProcedureResult>() -> Value {
    crate::schema::schema_for::<R::Ok>()
}

/// Whether a procedure answering `R` may refuse with a detail (then it advertises no
/// `outputSchema`: the detail travels as `structuredContent`, which would not match it).
pub const fn refuses_with_detail<R: ProcedureResult>() -> bool {
    R::REFUSES_WITH_DETAIL
}

/// The advertised input schema of `T`.
pub fn input_schema_of<T: schemars::JsonSchema>() -> crate::schema::InputSchema {
    crate::schema::input_schema::<T>()
}

/// The advertised input schema of a tool with no input.
pub fn no_input_schema() -> crate::schema::InputSchema {
    crate::schema::no_input_schema()
}

/// Decodes a procedure's or tool's input, naming the field that is wrong.
pub fn decode_input<T: DeserializeOwned>(input: Value) -> Result<T, Failure> {
    // Read plainly first: tracking the path costs a call more than the read, and only a
    // failure needs it (read again, owned, for the failure's words and field).
    if let Ok(decoded) = T::deserialize(&input) {
        return Ok(decoded);
    }
    serde_path_to_error::deserialize::<_, T>(input).map_err(|e| {
        let path = e.path().to_string();
        let inner = e.into_inner().to_string();
        let field = if path == "." {
            missing_field(&inner).unwrap_or_default()
        } else {
            path
        };
        let message = if field.is_empty() {
            format!("invalid arguments: {inner}")
        } else {
            format!("invalid argument `{field}`: {inner}")
        };
        Failure {
            message,
            detail: None,
            kind: FailureKind::InvalidInput { field },
        }
    })
}

/// The decoder of a procedure's input, as the argv face runs it before dialling: the served
/// side's own [`decode_input`] into `T`, the value dropped (the face only needs the verdict,
/// and refuses with the very failure the served side would answer).
pub fn check_input<T: DeserializeOwned>(input: &Value) -> Result<(), Failure> {
    decode_input::<T>(input.clone()).map(drop)
}

/// serde reports a missing field at its parent's path; the field itself is in the message.
fn missing_field(message: &str) -> Option<String> {
    let rest = message.strip_prefix("missing field `")?;
    Some(rest[..rest.find('`')?].to_owned())
}

/// The failure of a call to a procedure the surface does not declare.
pub fn unknown_procedure(surface: &str, name: &str) -> Failure {
    Failure::new(
        FailureKind::Unknown,
        format!("{surface} has no procedure \"{name}\""),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(serde::Deserialize, Debug)]
    #[allow(dead_code)]
    struct Kill {
        pid: u32,
    }

    #[test]
    fn decode_names_the_wrong_field() {
        let e = decode_input::<Kill>(serde_json::json!({"pid": "x"})).unwrap_err();
        assert_eq!(e.kind, FailureKind::InvalidInput { field: "pid".into() });
        assert!(e.message.contains("`pid`"), "{}", e.message);
    }

    #[test]
    fn decode_names_the_missing_field() {
        let e = decode_input::<Kill>(serde_json::json!({})).unwrap_err();
        assert_eq!(e.kind, FailureKind::InvalidInput { field: "pid".into() });
    }

    #[derive(serde::Deserialize, Debug, PartialEq)]
    struct Spawn {
        name: String,
        limits: Limits,
        tags: Vec<String>,
    }

    #[derive(serde::Deserialize, Debug, PartialEq)]
    struct Limits {
        cpu: f64,
    }

    #[test]
    fn decode_reads_what_the_path_tracking_read_and_names_a_nested_field() {
        let input = serde_json::json!({"name": "web", "limits": {"cpu": 0.5}, "tags": ["a"]});
        let tracked: Spawn = serde_path_to_error::deserialize(input.clone()).unwrap();
        assert_eq!(decode_input::<Spawn>(input).unwrap(), tracked);
        let e = decode_input::<Spawn>(serde_json::json!({"name": "web", "limits": {"cpu": "x"}, "tags": []}))
            .unwrap_err();
        assert_eq!(
            e.kind,
            FailureKind::InvalidInput {
                field: "limits.cpu".into()
            }
        );
        assert_eq!(
            e.message,
            "invalid argument `limits.cpu`: invalid type: string \"x\", expected f64"
        );
        let e = decode_input::<Spawn>(serde_json::json!({"name": "web", "limits": {"cpu": 1}, "tags": [3]}))
            .unwrap_err();
        assert_eq!(
            e.kind,
            FailureKind::InvalidInput {
                field: "tags[0]".into()
            }
        );
    }
}
