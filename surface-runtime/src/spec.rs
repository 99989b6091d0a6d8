//! The spec of a surface: every member and procedure with its kind, types and schemas.
//!
//! `#[surface]` builds a [`SurfaceSpec`] as a `const` (names, kinds, docs and type names are
//! known at compile time). Schemas are produced by generated functions that call schemars; the
//! JSON is computed when a face asks for it (the MCP face once per served generation), never per
//! request.

use serde_json::{Map, Value, json};

/// What kind of member a surface declares.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum MemberKind {
    /// One value with a store; readable and subscribable.
    Cell,
    /// Keyed items; the whole set readable, each item readable by id; subscribable.
    Collection,
    /// A snapshot followed by chunks.
    Stream,
    /// A published occurrence.
    Event,
}

impl MemberKind {
    /// The lower-case word used in specs, URIs and messages (`"cell"`, `"collection"`, ...).
    ///
    /// ```
    /// assert_eq!(surface_runtime::MemberKind::Collection.word(), "collection");
    /// ```
    pub const fn word(self) -> &'static str {
        match self {
            MemberKind::Cell => "cell",
            MemberKind::Collection => "collection",
            MemberKind::Stream => "stream",
            MemberKind::Event => "event",
        }
    }

    /// The URI segment of this kind (`surface://<segment>/<key>`).
    ///
    /// ```
    /// assert_eq!(surface_runtime::MemberKind::Cell.uri_segment(), "cells");
    /// ```
    pub const fn uri_segment(self) -> &'static str {
        match self {
            MemberKind::Cell => "cells",
            MemberKind::Collection => "collections",
            MemberKind::Stream => "streams",
            MemberKind::Event => "events",
        }
    }
}

/// A Rust type as the spec sees it: its name as written and its (bridged) JSON Schema.
#[derive(Clone, Copy, Debug)]
pub struct TypeSpec {
    /// The type as written in the declaration (`"Load"`, `"u32"`).
    pub rust: &'static str,
    /// Produces the bridged JSON Schema of the type (see [`crate::schema`]).
    pub schema: fn() -> Value,
}

/// One member of a surface.
#[derive(Clone, Copy, Debug)]
pub struct MemberSpec {
    /// The member's key (the field name).
    pub name: &'static str,
    /// Its kind.
    pub kind: MemberKind,
    /// Its doc comment, trimmed (empty when none).
    pub doc: &'static str,
    /// The value type: the cell's value, the collection's item, the stream's chunk, the event.
    pub value: TypeSpec,
    /// The key type of a collection.
    pub key: Option<TypeSpec>,
}

/// One procedure of a surface, `"<ns>.<verb>"`.
#[derive(Clone, Copy, Debug)]
pub struct ProcedureSpec {
    /// The full name, `"<ns>.<verb>"`.
    pub name: &'static str,
    /// The namespace (everything before the last dot; may itself contain dots).
    pub namespace: &'static str,
    /// The verb (after the last dot).
    pub verb: &'static str,
    /// Its doc comment, trimmed.
    pub doc: &'static str,
    /// The input type; `None` for a procedure that takes no input.
    pub input: Option<TypeSpec>,
    /// The success type.
    pub output: TypeSpec,
}

/// The whole spec of one surface: what `#[surface]` declared.
///
/// ```
/// # use surface_runtime::{SurfaceSpec, MemberSpec, MemberKind, TypeSpec};
/// const SPEC: SurfaceSpec = SurfaceSpec {
///     name: "Tiny",
///     doc: "",
///     members: &[MemberSpec {
///         name: "n",
///         kind: MemberKind::Cell,
///         doc: "",
///         value: TypeSpec { rust: "u32", schema: || serde_json::json!({"type": "integer"}) },
///         key: None,
///     }],
///     procedures: &[],
/// };
/// assert_eq!(SPEC.member("n").unwrap().kind, MemberKind::Cell);
/// assert_eq!(SPEC.to_json()["members"][0]["kind"], "cell");
/// ```
#[derive(Clone, Copy, Debug)]
pub struct SurfaceSpec {
    /// The surface's type name.
    pub name: &'static str,
    /// Its doc comment.
    pub doc: &'static str,
    /// The members in declaration order.
    pub members: &'static [MemberSpec],
    /// The procedures in declaration order.
    pub procedures: &'static [ProcedureSpec],
}

impl SurfaceSpec {
    /// The member called `name`, if any.
    pub fn member(&self, name: &str) -> Option<&'static MemberSpec> {
        self.members.iter().find(|m| m.name == name)
    }

    /// The procedure called `name` (`"ns.verb"`), if any.
    pub fn procedure(&self, name: &str) -> Option<&'static ProcedureSpec> {
        self.procedures.iter().find(|p| p.name == name)
    }

    /// The spec as JSON: every member and procedure with kind, types and schemas.
    pub fn to_json(&self) -> Value {
        let ty = |t: &TypeSpec| json!({ "rust": t.rust, "schema": (t.schema)() });
        let members: Vec<Value> = self
            .members
            .iter()
            .map(|m| {
                let mut o = Map::new();
                o.insert("name".into(), m.name.into());
                o.insert("kind".into(), m.kind.word().into());
                if !m.doc.is_empty() {
                    o.insert("description".into(), m.doc.into());
                }
                if let Some(k) = &m.key {
                    o.insert("key".into(), ty(k));
                }
                o.insert("value".into(), ty(&m.value));
                Value::Object(o)
            })
            .collect();
        let procedures: Vec<Value> = self
            .procedures
            .iter()
            .map(|p| {
                let mut o = Map::new();
                o.insert("name".into(), p.name.into());
                o.insert("kind".into(), "procedure".into());
                if !p.doc.is_empty() {
                    o.insert("description".into(), p.doc.into());
                }
                o.insert("input".into(), p.input.as_ref().map_or(Value::Null, ty));
                o.insert("output".into(), ty(&p.output));
                Value::Object(o)
            })
            .collect();
        json!({ "name": self.name, "members": members, "procedures": procedures })
    }
}
