//! Every name the macros invent, in one place, shared by `#[surface]` and `expose!`.
//!
//! `#[surface]` gives each member and procedure a hidden associated constant on the surface
//! type; `expose!` names those constants with the user's key span, so a misspelt key fails name
//! resolution at the key (and rustc suggests the close name) wherever the type is in scope.

use proc_macro2::{Ident, Span};
use quote::format_ident;

pub const MEMBER_PREFIX: &str = "__surface_member_";
pub const PROCEDURE_PREFIX: &str = "__surface_procedure_";

/// `load` → `__surface_member_load`
pub fn member_marker(name: &str, span: Span) -> Ident {
    Ident::new(&format!("{MEMBER_PREFIX}{name}"), span)
}

/// `proc.spawn` → `__surface_procedure_proc__spawn` (injective: segments never hold `__`).
pub fn procedure_marker(name: &str, span: Span) -> Ident {
    Ident::new(&format!("{PROCEDURE_PREFIX}{}", name.replace('.', "__")), span)
}

/// `Ops` → `OpsClient`
pub fn client(surface: &Ident) -> Ident {
    format_ident!("{}Client", surface)
}

/// `count` → `CountTool`, `spawn_and_wait` → `SpawnAndWaitTool`
pub fn tool(function: &Ident) -> Ident {
    let camel: String = function
        .to_string()
        .trim_start_matches("r#")
        .split('_')
        .map(|seg| {
            let mut chars = seg.chars();
            chars
                .next()
                .map(|c| c.to_ascii_uppercase().to_string() + chars.as_str())
                .unwrap_or_default()
        })
        .collect();
    format_ident!("{}Tool", camel, span = function.span())
}

/// `Ops` → `OpsProcedures`
pub fn procedures(surface: &Ident) -> Ident {
    format_ident!("{}Procedures", surface)
}

/// `Ops` + `proc` → `OpsProcNamespace`; `a.b_c` → `OpsABCNamespace`
pub fn namespace(surface: &Ident, ns: &str) -> Ident {
    let camel: String = ns
        .split(['.', '_'])
        .map(|seg| {
            let mut chars = seg.chars();
            chars
                .next()
                .map(|c| c.to_ascii_uppercase().to_string() + chars.as_str())
                .unwrap_or_default()
        })
        .collect();
    format_ident!("{}{}Namespace", surface, camel)
}

/// A method name for a namespace or verb (`a.b` → `a_b`; keywords become raw identifiers).
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
    fn markers_are_injective_over_valid_names() {
        let a = procedure_marker("a.b_c", Span::call_site()).to_string();
        let b = procedure_marker("a_b.c", Span::call_site()).to_string();
        assert_ne!(a, b);
        assert_eq!(
            namespace(&format_ident!("Ops"), "proc").to_string(),
            "OpsProcNamespace"
        );
    }
}
