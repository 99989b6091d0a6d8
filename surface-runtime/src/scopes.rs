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

/// What a holder of `held` keeps after asking for `asked` only: each asked scope it already
/// reaches (held as such, or implied by a broader one it holds). Never more than it held, so a
/// client may always narrow itself (the argv face, the bridge) and never widen.
#[cfg_attr(not(feature = "wire"), allow(dead_code))]
pub(crate) fn narrow<H: AsRef<str>, A: AsRef<str>>(
    declared: &[Scope],
    held: &[H],
    asked: &[A],
) -> Vec<String> {
    let mut kept: Vec<String> = Vec::new();
    for asked in asked.iter().map(AsRef::as_ref) {
        let reached = held.iter().any(|h| h.as_ref() == asked)
            || by_wire(declared, asked).is_some_and(|s| s.granted_by(held));
        if reached && !kept.iter().any(|k| k == asked) {
            kept.push(asked.to_owned());
        }
    }
    kept
}

/// The first of `scopes` that `declared` does not declare, if any.
#[cfg_attr(not(feature = "wire"), allow(dead_code))]
pub(crate) fn undeclared<'a, S: AsRef<str>>(declared: &[Scope], scopes: &'a [S]) -> Option<&'a str> {
    scopes
        .iter()
        .map(AsRef::as_ref)
        .find(|s| by_wire(declared, s).is_none())
}

/// Scope wire strings as one sentence names them (`ops.read, ops.admin`, or `none`).
#[cfg_attr(not(feature = "wire"), allow(dead_code))]
pub(crate) fn listed<S: AsRef<str>>(wires: impl IntoIterator<Item = S>) -> String {
    let wires: Vec<String> = wires.into_iter().map(|w| w.as_ref().to_owned()).collect();
    if wires.is_empty() {
        "none".to_owned()
    } else {
        wires.join(", ")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const DECLARED: &[Scope] = &[
        Scope {
            name: "read",
            wire: "ops.read",
            implied_by: &["ops.admin"],
        },
        Scope {
            name: "admin",
            wire: "ops.admin",
            implied_by: &[],
        },
    ];

    #[test]
    fn narrowing_keeps_what_was_held_or_implied_and_never_widens() {
        assert_eq!(narrow(DECLARED, &["ops.admin"], &["ops.read"]), ["ops.read"]);
        assert_eq!(
            narrow(DECLARED, &["ops.read"], &["ops.admin", "ops.read"]),
            ["ops.read"]
        );
        assert!(narrow(DECLARED, &["ops.read"], &["ops.admin"]).is_empty());
        assert!(narrow::<&str, &str>(DECLARED, &[], &["ops.read"]).is_empty());
        assert_eq!(undeclared(DECLARED, &["ops.read", "ops.raed"]), Some("ops.raed"));
        assert_eq!(listed(DECLARED.iter().map(|s| s.wire)), "ops.read, ops.admin");
        assert_eq!(listed(Vec::<String>::new()), "none");
    }
}
