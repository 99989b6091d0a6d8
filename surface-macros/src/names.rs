//! Every name the macros invent, in one place, shared by `#[surface]` and `expose!`.
//!
//! `#[surface]` gives the surface type two hidden constants whose *fields* are its keys:
//! `Ops::__SURFACE_MEMBERS.load` (one field per member, named like it) and
//! `Ops::__SURFACE_PROCEDURES.proc.spawn` (one field per namespace, then one per verb).
//! `expose!` reads those fields with the user's key span, so a misspelt key fails field lookup
//! at the key and rustc suggests the close name, wherever the surface type is in scope.

use proc_macro2::{Ident, Span};
use quote::format_ident;

/// The hidden constant on the surface whose fields are its members.
pub const MEMBERS_CONST: &str = "__SURFACE_MEMBERS";
/// The hidden constant on the surface whose fields are its procedure namespaces.
pub const PROCEDURES_CONST: &str = "__SURFACE_PROCEDURES";

/// Words that cannot be a member, namespace or verb, not even as raw identifiers.
const UNUSABLE: &[&str] = &["self", "Self", "super", "crate", "_"];

/// `Ops` → `OpsMembers`, the type of `Ops::__SURFACE_MEMBERS`.
pub fn members_keys(surface: &Ident) -> Ident {
    format_ident!("{}Members", surface)
}

/// `Ops` → `OpsNamespaces`, the type of `Ops::__SURFACE_PROCEDURES`.
pub fn namespaces_keys(surface: &Ident) -> Ident {
    format_ident!("{}Namespaces", surface)
}

/// `Ops` + `proc` → `OpsProcVerbs`, the type of `Ops::__SURFACE_PROCEDURES.proc`.
pub fn verbs_keys(surface: &Ident, ns: &str) -> Ident {
    format_ident!("{}{}Verbs", surface, camel(ns))
}

/// The field of `OpsNamespaces` for namespace `ns` (`proc` → `proc`, `a.b` → `a__b`;
/// injective, since segments never hold `__`).
pub fn namespace_field(ns: &str, span: Span) -> Ident {
    method(&ns.replace('.', "__"), span)
}

/// `Ops` → `OpsClient`
pub fn client(surface: &Ident) -> Ident {
    format_ident!("{}Client", surface)
}

/// `count` → `CountTool`, `spawn_and_wait` → `SpawnAndWaitTool`
pub fn tool(function: &Ident) -> Ident {
    let camel = camel(function.to_string().trim_start_matches("r#"));
    format_ident!("{}Tool", camel, span = function.span())
}

/// `Ops` → `OpsProcedures`
pub fn procedures(surface: &Ident) -> Ident {
    format_ident!("{}Procedures", surface)
}

/// `Ops` + `proc` → `OpsProcNamespace`; `a.b_c` → `OpsABCNamespace`
pub fn namespace(surface: &Ident, ns: &str) -> Ident {
    format_ident!("{}{}Namespace", surface, camel(ns))
}

/// `a.b_c` → `ABC`, `spawn_and_wait` → `SpawnAndWait`
fn camel(words: &str) -> String {
    words
        .split(['.', '_'])
        .map(|seg| {
            let mut chars = seg.chars();
            chars
                .next()
                .map(|c| c.to_ascii_uppercase().to_string() + chars.as_str())
                .unwrap_or_default()
        })
        .collect()
}

/// Whether `word` can name a member, namespace or verb (as a raw identifier if need be).
pub fn usable(word: &str) -> bool {
    !UNUSABLE.contains(&word)
}

/// A method or field name for a member, namespace or verb (`a.b` → `a_b`; keywords become raw
/// identifiers). `word` must be [`usable`].
pub fn method(word: &str, span: Span) -> Ident {
    let word = word.replace('.', "_");
    match syn::parse_str::<Ident>(&word) {
        Ok(_) => Ident::new(&word, span),
        Err(_) => Ident::new_raw(&word, span),
    }
}

/// Whether `name` is a valid procedure name, `"<ns>.<verb>"`: dot-separated segments, each a
/// letter followed by letters, digits and single inner underscores. Answers why not.
pub fn check_procedure_name(name: &str) -> Result<(), String> {
    let Some((ns, verb)) = name.rsplit_once('.') else {
        return Err(format!(
            "procedure name \"{name}\" needs a namespace and a verb: write \"<ns>.<verb>\", e.g. \"proc.{name}\""
        ));
    };
    if ns.is_empty() {
        return Err(format!(
            "procedure name \"{name}\" has an empty namespace: write \"<ns>.<verb>\""
        ));
    }
    if verb.is_empty() {
        return Err(format!(
            "procedure name \"{name}\" has an empty verb: write \"<ns>.<verb>\""
        ));
    }
    for seg in name.split('.') {
        if seg.is_empty() {
            return Err(format!(
                "procedure name \"{name}\" has an empty segment between dots"
            ));
        }
        let ok = seg.starts_with(|c: char| c.is_ascii_alphabetic())
            && seg.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
            && !seg.contains("__")
            && !seg.ends_with('_');
        if !ok {
            return Err(format!(
                "procedure name \"{name}\" has an illegal segment \"{seg}\": each segment is a letter followed by letters, digits and single underscores"
            ));
        }
        if !usable(seg) {
            return Err(format!(
                "procedure name \"{name}\" has the reserved segment \"{seg}\": it cannot name a client method"
            ));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn procedure_names() {
        assert!(check_procedure_name("proc.spawn").is_ok());
        assert!(check_procedure_name("a.b.c").is_ok());
        assert!(
            check_procedure_name(".spawn")
                .unwrap_err()
                .contains("empty namespace")
        );
        assert!(check_procedure_name("proc.").unwrap_err().contains("empty verb"));
        assert!(
            check_procedure_name("spawn")
                .unwrap_err()
                .contains("needs a namespace")
        );
        assert!(
            check_procedure_name("proc.sp-awn")
                .unwrap_err()
                .contains("illegal segment")
        );
        assert!(check_procedure_name("a__b.c").is_err());
    }

    #[test]
    fn key_fields_are_injective_over_valid_names() {
        let a = namespace_field("a.b", Span::call_site()).to_string();
        let b = namespace_field("a_b", Span::call_site()).to_string();
        assert_ne!(a, b);
        assert_eq!(namespace_field("type", Span::call_site()).to_string(), "r#type");
        assert_eq!(
            namespace(&format_ident!("Ops"), "proc").to_string(),
            "OpsProcNamespace"
        );
        assert_eq!(
            verbs_keys(&format_ident!("Ops"), "proc").to_string(),
            "OpsProcVerbs"
        );
        assert!(check_procedure_name("proc.self").is_err());
    }
}
