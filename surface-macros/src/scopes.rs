//! `scopes!`: the scopes of one surface, declared once, with their hierarchy.
//!
//! Accepts `scopes!(Ops { read = "ops.read", admin = "ops.admin": read, … })`: each scope a
//! name, its wire string and, after `:`, the narrower scopes it implies. Pipeline: parse (a
//! sentence for every malformed shape) → validate everything this macro sees alone, all errors
//! at once (a wire string that is empty or outside the RFC 6749 scope-token alphabet, a name or
//! wire string declared twice, an implied scope that is not declared — with the closest name —,
//! a cycle) → expand to the surface's `SurfaceScopes` impl, each scope listing the broader
//! scopes that imply it (transitively), so checking a caller is one lookup.
//!
//! ```text
//! impl SurfaceScopes for Ops {
//!     const SCOPES: &[Scope] = &[Scope { name: "read", wire: "ops.read", implied_by: &["ops.admin"] }, …];
//!     const NAMES: &[&str] = &["read", "admin"];
//! }
//! ```

use crate::errors::{Errors, did_you_mean};
use proc_macro2::TokenStream;
use quote::quote;
use syn::parse::{Parse, ParseStream};
use syn::{Ident, LitStr, Path, Token, braced};

const FORM: &str = "write `scopes!(Ops { read = \"ops.read\", admin = \"ops.admin\": read })`";

pub struct ScopesInput {
    surface: Path,
    scopes: Vec<Declared>,
}

struct Declared {
    name: Ident,
    wire: LitStr,
    implies: Vec<Ident>,
}

impl Parse for ScopesInput {
    fn parse(input: ParseStream) -> syn::Result<Self> {
        let surface: Path = input.parse().map_err(|e| {
            syn::Error::new(
                e.span(),
                format!("`scopes!` starts with the surface type: {FORM}"),
            )
        })?;
        if !input.peek(syn::token::Brace) {
            return Err(input.error(format!(
                "after the surface type come its scopes in braces: {FORM}"
            )));
        }
        let body;
        braced!(body in input);
        let scopes = body.parse_terminated(Declared::parse, Token![,])?;
        if !input.is_empty() {
            return Err(input.error(format!("`scopes!` takes one surface and its scopes: {FORM}")));
        }
        Ok(ScopesInput {
            surface,
            scopes: scopes.into_iter().collect(),
        })
    }
}

impl Parse for Declared {
    fn parse(input: ParseStream) -> syn::Result<Self> {
        let name: Ident = input
            .parse()
            .map_err(|e| syn::Error::new(e.span(), format!("expected a scope's name: {FORM}")))?;
        input.parse::<Token![=]>().map_err(|e| {
            syn::Error::new(
                e.span(),
                format!("a scope's name is followed by `= \"wire.string\"`: {FORM}"),
            )
        })?;
        let wire: LitStr = input.parse().map_err(|e| {
            syn::Error::new(
                e.span(),
                "a scope's wire string is a string literal: write `read = \"ops.read\"`",
            )
        })?;
        let mut implies = Vec::new();
        if input.peek(Token![:]) {
            input.parse::<Token![:]>()?;
            loop {
                implies.push(input.parse::<Ident>().map_err(|e| {
                    syn::Error::new(
                        e.span(),
                        "after `:` come the scopes it implies: `admin = \"ops.admin\": read + write`",
                    )
                })?);
                if !input.peek(Token![+]) {
                    break;
                }
                input.parse::<Token![+]>()?;
            }
        }
        Ok(Declared { name, wire, implies })
    }
}

/// RFC 6749 §3.3: `scope-token = 1*( %x21 / %x23-5B / %x5D-7E )`.
fn scope_token(wire: &str) -> bool {
    !wire.is_empty()
        && wire
            .bytes()
            .all(|b| b == 0x21 || (0x23..=0x5B).contains(&b) || (0x5D..=0x7E).contains(&b))
}

pub fn expand(input: ScopesInput) -> TokenStream {
    let mut errors = Errors::new();
    let names: Vec<String> = input.scopes.iter().map(|s| s.name.to_string()).collect();
    for (i, scope) in input.scopes.iter().enumerate() {
        let wire = scope.wire.value();
        if !scope_token(&wire) {
            errors.at(
                &scope.wire,
                format!(
                    "{:?} is not a scope token: write one or more visible ASCII characters other than space, `\"` and `\\` (RFC 6749 §3.3), e.g. \"ops.read\"",
                    wire
                ),
            );
        }
        if names[..i].contains(&names[i]) {
            errors.at(
                &scope.name,
                format!("the scope `{}` is declared twice: keep one", names[i]),
            );
        }
        if input.scopes[..i].iter().any(|s| s.wire.value() == wire) {
            errors.at(
                &scope.wire,
                format!("{wire:?} is the wire string of two scopes: give each its own"),
            );
        }
        for implied in &scope.implies {
            let implied_name = implied.to_string();
            if !names.contains(&implied_name) {
                let hint = match did_you_mean(&implied_name, names.iter().map(String::as_str)) {
                    Some(near) => format!("did you mean `{near}`?"),
                    None => format!(
                        "its scopes are {}",
                        names
                            .iter()
                            .map(|n| format!("`{n}`"))
                            .collect::<Vec<_>>()
                            .join(", ")
                    ),
                };
                errors.at(
                    implied,
                    format!("`{implied_name}` is not a declared scope: {hint}"),
                );
            }
        }
    }
    // What each scope implies, transitively; a scope reaching itself is a cycle.
    let implied: Vec<Vec<usize>> = input
        .scopes
        .iter()
        .map(|s| {
            s.implies
                .iter()
                .filter_map(|i| names.iter().position(|n| i == n))
                .collect()
        })
        .collect();
    let reach = |from: usize| {
        let (mut seen, mut stack) = (vec![false; names.len()], implied[from].clone());
        while let Some(next) = stack.pop() {
            if !seen[next] {
                seen[next] = true;
                stack.extend(&implied[next]);
            }
        }
        seen
    };
    let reaches: Vec<Vec<bool>> = (0..names.len()).map(reach).collect();
    for (i, scope) in input.scopes.iter().enumerate() {
        if reaches[i][i] {
            errors.at(
                &scope.name,
                format!(
                    "the scope `{}` implies itself through its hierarchy: a broader scope implies narrower ones, never back",
                    names[i]
                ),
            );
        }
    }
    let surface = &input.surface;
    let compile_errors = errors.to_compile_errors();
    let rows = input.scopes.iter().enumerate().map(|(i, scope)| {
        let name = &names[i];
        let wire = scope.wire.value();
        let implied_by: Vec<String> = (0..names.len())
            .filter(|&j| j != i && reaches[j][i])
            .map(|j| input.scopes[j].wire.value())
            .collect();
        quote!(::surface::Scope { name: #name, wire: #wire, implied_by: &[#(#implied_by),*] })
    });
    quote! {
        #compile_errors
        #[automatically_derived]
        impl ::surface::__private::keys::SurfaceScopes for #surface {
            const SCOPES: &'static [::surface::Scope] = &[#(#rows),*];
            const NAMES: &'static [&'static str] = &[#(#names),*];
        }
    }
}

#[cfg(test)]
mod tests {
    use super::scope_token;

    #[test]
    fn scope_tokens_follow_rfc_6749() {
        for ok in ["ops.read", "a", "x:y/z", "!#[]~"] {
            assert!(scope_token(ok), "{ok}");
        }
        for bad in ["", "ops read", "a\"b", "a\\b", "é"] {
            assert!(!scope_token(bad), "{bad:?}");
        }
    }
}
