//! `expose!`: the default-deny expose map of one surface, checked at compile time.
//!
//! Accepts `expose!(Surface { key: resource, "ns.verb": tool | tool(mutates) | tool(read_only), … })`.
//! Pipeline: parse → validate what this macro can see alone (duplicate keys, exposure words,
//! procedure-name shape, and the kind: a bare key is a member and only a resource, a quoted
//! `"ns.verb"` is a procedure and only a tool) → expand one entry per key that reads the key's
//! field of the surface's hidden key constants (`Ops::__SURFACE_MEMBERS.load`,
//! `Ops::__SURFACE_PROCEDURES.proc.spawn`) with the key's span. So an unknown key fails field
//! lookup at the key, and rustc suggests the close name, wherever the surface type is in scope,
//! including through a `use` path.

use crate::errors::{Errors, unknown_word};
use crate::names;
use proc_macro2::{Span, TokenStream};
use quote::{quote, quote_spanned};
use syn::ext::IdentExt;
use syn::parse::{Parse, ParseStream};
use syn::punctuated::Punctuated;
use syn::{Ident, LitStr, Path, Token, braced, parenthesized};

const EXPOSURES: &[&str] = &["resource", "tool"];
const TOOL_WORDS: &[&str] = &["mutates", "read_only"];

pub struct ExposeInput {
    surface: Path,
    entries: Punctuated<Entry, Token![,]>,
}

struct Entry {
    key: String,
    key_span: Span,
    word: Ident,
    tool_word: Option<Ident>,
}

impl Parse for ExposeInput {
    fn parse(input: ParseStream) -> syn::Result<Self> {
        let surface = input.parse()?;
        let body;
        braced!(body in input);
        let entries = body.parse_terminated(Entry::parse, Token![,])?;
        Ok(ExposeInput { surface, entries })
    }
}

impl Parse for Entry {
    fn parse(input: ParseStream) -> syn::Result<Self> {
        let (key, key_span) = if input.peek(LitStr) {
            let lit: LitStr = input.parse()?;
            (lit.value(), lit.span())
        } else {
            let ident: Ident = input.call(Ident::parse_any)?;
            if input.peek(Token![.]) {
                // `proc.spawn: tool`: say how to write it rather than "expected `:`".
                let mut name = ident.unraw().to_string();
                while input.peek(Token![.]) {
                    input.parse::<Token![.]>()?;
                    name.push('.');
                    if let Ok(segment) = input.call(Ident::parse_any) {
                        name.push_str(&segment.unraw().to_string());
                    }
                }
                return Err(syn::Error::new(
                    ident.span(),
                    format!("a procedure's key is quoted: write \"{name}\""),
                ));
            }
            (ident.unraw().to_string(), ident.span())
        };
        input.parse::<Token![:]>()?;
        let word: Ident = input.parse()?;
        let tool_word = if input.peek(syn::token::Paren) {
            let inner;
            parenthesized!(inner in input);
            Some(inner.parse()?)
        } else {
            None
        };
        Ok(Entry {
            key,
            key_span,
            word,
            tool_word,
        })
    }
}

pub fn expand(input: ExposeInput) -> TokenStream {
    let mut errors = Errors::new();
    let surface = &input.surface;
    // The surface type, named once so a wrong path is reported once (and never aliased to
    // itself: a surface called `Surface` gets `SurfaceType`).
    let alias = match surface.segments.last() {
        Some(last) if last.ident == "Surface" => Ident::new("SurfaceType", Span::call_site()),
        _ => Ident::new("Surface", Span::call_site()),
    };
    let mut seen: Vec<&str> = Vec::new();
    let mut entries = Vec::new();
    for entry in &input.entries {
        let key = entry.key.as_str();
        if seen.contains(&key) {
            errors.push(syn::Error::new(
                entry.key_span,
                format!("`{key}` is exposed twice: keep one entry"),
            ));
            continue;
        }
        seen.push(key);
        let span = entry.key_span;
        let is_procedure = key.contains('.');
        let field = if is_procedure {
            if let Err(why) = names::check_procedure_name(key) {
                errors.push(syn::Error::new(span, why));
                continue;
            }
            let (ns, verb) = key.rsplit_once('.').expect("checked");
            let ns = names::namespace_field(ns, span);
            let verb = names::method(verb, span);
            let procedures = Ident::new(names::PROCEDURES_CONST, span);
            quote_spanned!(span=> #alias::#procedures.#ns.#verb)
        } else {
            if !names::usable(key) {
                errors.push(syn::Error::new(span, format!("`{key}` is not a member name")));
                continue;
            }
            let member = names::method(key, span);
            let members = Ident::new(names::MEMBERS_CONST, span);
            quote_spanned!(span=> #alias::#members.#member)
        };
        let word = entry.word.to_string();
        let mutates = match (word.as_str(), &entry.tool_word) {
            ("resource", None) => None,
            ("resource", Some(w)) => {
                errors.at(w, "`resource` takes no arguments");
                None
            }
            ("tool", None) => Some(true),
            ("tool", Some(w)) if TOOL_WORDS.iter().any(|t| w == t) => Some(w == "mutates"),
            ("tool", Some(w)) => {
                errors.at(w, unknown_word(&w.to_string(), "`tool(…)`", TOOL_WORDS));
                Some(true)
            }
            (other, _) => {
                errors.at(&entry.word, unknown_word(other, "`expose!`", EXPOSURES));
                None
            }
        };
        // A member is only a resource and a procedure only a tool: the key says which it is.
        // The entry still reads the key's field, so a misspelt key is reported too.
        let entry = if is_procedure {
            if word == "resource" {
                errors.at(
                    &entry.word,
                    format!(
                        "\"{key}\" is a procedure: expose it as `tool`, `tool(mutates)` or `tool(read_only)`"
                    ),
                );
            }
            let mutates = mutates.unwrap_or(true);
            quote_spanned!(span=> ::surface::__private::expose_tool(#field, #key, #mutates))
        } else {
            if word == "tool" {
                errors.at(
                    &entry.word,
                    format!("`{key}` is a member: expose it as `resource` (procedures, \"<ns>.<verb>\", are the tools)"),
                );
            }
            quote_spanned!(span=> ::surface::__private::expose_resource(#field, #key))
        };
        entries.push(entry);
    }
    let compile_errors = errors.to_compile_errors();
    quote! {
        {
            #compile_errors
            type #alias = #surface;
            const ENTRIES: &[::surface::ExposeEntry] = &[#(#entries),*];
            ::surface::Expose::<#alias>::__from_checked_entries(ENTRIES)
        }
    }
}
