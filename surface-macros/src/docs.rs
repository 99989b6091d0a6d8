//! Doc comments: they become descriptions in the spec and on the wire.

use syn::{Attribute, Expr, ExprLit, Lit, Meta};

/// The text of the `///` comments among `attrs`, lines trimmed and joined with `\n`.
pub fn doc_text(attrs: &[Attribute]) -> String {
    let lines: Vec<String> = attrs
        .iter()
        .filter(|a| a.path().is_ident("doc"))
        .filter_map(|a| match &a.meta {
            Meta::NameValue(nv) => match &nv.value {
                Expr::Lit(ExprLit { lit: Lit::Str(s), .. }) => Some(s.value()),
                _ => None,
            },
            _ => None,
        })
        .collect();
    // Strip the one leading space `///` leaves, keep inner indentation, drop blank edges.
    let text: Vec<&str> = lines
        .iter()
        .map(|l| l.strip_prefix(' ').unwrap_or(l).trim_end())
        .collect();
    text.join("\n").trim().to_owned()
}

/// `text` as `#[doc]` attributes, one per line, each with the leading space `///` gives, so the
/// expansion reads (and prints) like hand-written doc comments.
pub fn doc_attrs(text: &str) -> proc_macro2::TokenStream {
    text.lines()
        .map(|line| {
            let line = if line.is_empty() {
                String::new()
            } else {
                format!(" {line}")
            };
            quote::quote!(#[doc = #line])
        })
        .collect()
}
