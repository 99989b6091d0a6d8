//! Expose maps: the default-deny list of what crosses from a surface to an agent.
//!
//! An [`Expose<S>`] is built by `expose!`, which checks every key against `S`'s spec at compile
//! time. Every face (MCP, the wire face, the argv CLI, MCP Apps views) takes this one type, so
//! the same key means the same thing on every face.

use std::fmt;
use std::marker::PhantomData;

/// How one key is exposed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Exposure {
    /// A cell, collection, stream or event, as a readable and subscribable resource.
    Resource,
    /// A procedure, as a tool. `mutates` drives the `readOnlyHint` / `destructiveHint` annotations.
    Tool {
        /// Whether calling the tool changes state (`tool` and `tool(mutates)`: true).
        mutates: bool,
    },
}

/// One entry of an expose map.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ExposeEntry {
    /// The member name or procedure name (`"load"`, `"proc.kill"`).
    pub key: &'static str,
    /// How it is exposed.
    pub exposure: Exposure,
    /// The wire string of the scope a caller needs to reach it (`expose!`'s `scope = …`);
    /// `None`: every caller that reaches the face.
    pub scope: Option<&'static str>,
    /// Whether a procedure's calls may run as MCP tasks (`tool(task)`, `tool(task = required)`):
    /// as for a bespoke `#[tool(task)]`. [`TaskSupport::Never`](crate::TaskSupport::Never) for
    /// a resource.
    pub task: crate::tool::TaskSupport,
}

/// The expose map of surface `S`: only what it names reaches an agent.
///
/// Build one with `expose!` (checked at compile time). [`Expose::none`] exposes nothing.
///
/// ```
/// # use surface_runtime::Expose;
/// struct Anything;
/// const NOTHING: Expose<Anything> = Expose::none();
/// assert!(NOTHING.entries().is_empty());
/// ```
pub struct Expose<S> {
    entries: &'static [ExposeEntry],
    mirrored: &'static [&'static str],
    scopes: &'static [crate::Scope],
    surface: PhantomData<fn() -> S>,
}

impl<S> Expose<S> {
    /// An expose map that names nothing.
    pub const fn none() -> Self {
        Expose {
            entries: &[],
            mirrored: &[],
            scopes: &[],
            surface: PhantomData,
        }
    }

    /// Used by `expose!` after it has checked every entry; not for hand-written maps.
    #[doc(hidden)]
    pub const fn __from_checked_entries(entries: &'static [ExposeEntry]) -> Self {
        Expose {
            entries,
            mirrored: &[],
            scopes: &[],
            surface: PhantomData,
        }
    }

    /// Used by `expose!` for the keys written `resource(mirror)`; not for hand-written maps.
    #[doc(hidden)]
    pub const fn __mirrored(self, mirrored: &'static [&'static str]) -> Self {
        Expose {
            entries: self.entries,
            mirrored,
            scopes: self.scopes,
            surface: PhantomData,
        }
    }

    /// Used by `expose!` when an entry names a scope: the surface's declared scopes.
    #[doc(hidden)]
    pub const fn __scopes(self, scopes: &'static [crate::Scope]) -> Self {
        Expose {
            entries: self.entries,
            mirrored: self.mirrored,
            scopes,
            surface: PhantomData,
        }
    }

    /// Used by `skill!` after it has checked the skill's name and every key it uses against
    /// this map; not for hand-written skills. The skill is over this map's surface.
    #[doc(hidden)]
    pub const fn __skill(
        &self,
        name: &'static str,
        description: &'static str,
        instructions: &'static str,
        uses: &'static [&'static str],
    ) -> crate::skill::Skill<S> {
        crate::skill::Skill::checked(name, description, instructions, uses)
    }

    /// The scopes the surface declares (`scopes!`), when the map names any.
    pub const fn scopes(&self) -> &'static [crate::Scope] {
        self.scopes
    }

    /// The members written `resource(mirror)`: each is also served as read-only tools
    /// (a cell `<k>_get`, a collection `<k>_keys` and `<k>_get {id}`, a stream `<k>_read`).
    ///
    /// ```
    /// # use surface_runtime::Expose;
    /// struct Anything;
    /// assert!(Expose::<Anything>::none().mirrored().is_empty());
    /// ```
    pub const fn mirrored(&self) -> &'static [&'static str] {
        self.mirrored
    }

    /// The entries, in the order written.
    pub const fn entries(&self) -> &'static [ExposeEntry] {
        self.entries
    }

    /// How `key` is exposed, if it is.
    pub fn get(&self, key: &str) -> Option<Exposure> {
        self.entries.iter().find(|e| e.key == key).map(|e| e.exposure)
    }

    /// The same map with its surface type erased, for faces that hold many surfaces.
    pub const fn erase(&self) -> ErasedExpose {
        ErasedExpose {
            entries: self.entries,
            mirrored: self.mirrored,
            scopes: self.scopes,
        }
    }
}

impl<S> Clone for Expose<S> {
    fn clone(&self) -> Self {
        *self
    }
}
impl<S> Copy for Expose<S> {}

impl<S> fmt::Debug for Expose<S> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Expose")
            .field("entries", &self.entries)
            .field("mirrored", &self.mirrored)
            .field("scopes", &self.scopes)
            .finish()
    }
}

/// An expose map whose surface type has been erased (what a face stores).
#[derive(Clone, Copy, Debug)]
pub struct ErasedExpose {
    entries: &'static [ExposeEntry],
    mirrored: &'static [&'static str],
    scopes: &'static [crate::Scope],
}

impl ErasedExpose {
    /// The entries, in the order written.
    pub const fn entries(&self) -> &'static [ExposeEntry] {
        self.entries
    }

    /// The members written `resource(mirror)` (see [`Expose::mirrored`]).
    pub const fn mirrored(&self) -> &'static [&'static str] {
        self.mirrored
    }

    /// The scopes the surface declares (see [`Expose::scopes`]).
    pub const fn scopes(&self) -> &'static [crate::Scope] {
        self.scopes
    }

    /// The declared scope `key`'s exposure needs, if it names one.
    pub fn scope_of(&self, key: &str) -> Option<&'static crate::Scope> {
        let wire = self.entries.iter().find(|e| e.key == key)?.scope?;
        crate::scopes::by_wire(self.scopes, wire)
    }

    /// Whether `principal` reaches `key`'s exposure (see [`crate::Scope`]): one without a
    /// scope, one whose scope it holds or a broader one implies; with no principal (a face that
    /// identified nobody), everything.
    pub fn reaches(&self, key: &str, principal: Option<&crate::Principal>) -> bool {
        crate::scopes::reaches(self.scope_of(key), principal)
    }

    /// Whether member `key` is also served as read-only tools.
    pub fn is_mirrored(&self, key: &str) -> bool {
        self.mirrored.contains(&key)
    }

    /// How `key` is exposed, if it is.
    pub fn get(&self, key: &str) -> Option<Exposure> {
        self.entries.iter().find(|e| e.key == key).map(|e| e.exposure)
    }
}

impl<S> From<Expose<S>> for ErasedExpose {
    fn from(e: Expose<S>) -> Self {
        e.erase()
    }
}
