//! Scopes: what a caller must hold to reach an exposure, declared once per surface with
//! `scopes!` and named by declaration in `expose!` (`tool(mutates, scope = admin)`).
//!
//! A scope has a wire string (an RFC 6749 scope token, e.g. `ops.read`, checked at compile
//! time) and may be implied by broader ones (`admin = "ops.admin": read`: a caller holding
//! `ops.admin` satisfies `ops.read`), as the MCP authorization spec asks.

/// One declared scope.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Scope {
    /// Its name in the declaration (`read`).
    pub name: &'static str,
    /// Its wire string (`ops.read`): what tokens carry and challenges name.
    pub wire: &'static str,
    /// The wire strings of the broader scopes that imply it, transitively.
    pub implied_by: &'static [&'static str],
}

impl Scope {
    /// Whether a caller holding `granted` (wire strings) reaches what needs this scope.
    ///
    /// ```
    /// use surface_runtime::Scope;
    /// const READ: Scope = Scope { name: "read", wire: "ops.read", implied_by: &["ops.admin"] };
    /// assert!(READ.granted_by(&["ops.read"]));
    /// assert!(READ.granted_by(&["ops.admin"]));
    /// assert!(!READ.granted_by(&["ops.write"]));
    /// ```
    pub fn granted_by<S: AsRef<str>>(&self, granted: &[S]) -> bool {
        granted
            .iter()
            .any(|g| g.as_ref() == self.wire || self.implied_by.contains(&g.as_ref()))
    }
}

/// Whether `principal` reaches what needs `scope`: anything without a scope, and everything
/// when the face identified nobody (stdio, the wire face: their reach is their trust).
#[cfg_attr(not(feature = "mcp"), allow(dead_code))]
pub(crate) fn reaches(scope: Option<&Scope>, principal: Option<&crate::Principal>) -> bool {
    match (scope, principal) {
        (Some(scope), Some(principal)) => scope.granted_by(principal.scopes()),
        _ => true,
    }
}

/// The declared scope whose wire string is `wire`, among `scopes`.
pub(crate) fn by_wire<'a>(scopes: &'a [Scope], wire: &str) -> Option<&'a Scope> {
    scopes.iter().find(|s| s.wire == wire)
}
