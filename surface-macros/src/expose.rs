//! `expose!`: the default-deny expose map of one surface, checked at compile time.
//!
//! Accepts `expose!(Surface { key: resource, "ns.verb": tool | tool(mutates) | tool(read_only), … })`.
//! Pipeline: parse → validate what this macro can see alone (duplicate keys, exposure words,
//! procedure-name shape) → expand one call per entry that names the surface's hidden marker
//! constant with the key's span. So an unknown key fails name resolution at the key (rustc
//! suggests the close name) and a wrong kind fails a trait bound at the key whose message says
//! what to write, wherever the surface type is in scope, including through a `use` path.

use crate::errors::{Errors, unknown_word};
use crate::names;
use proc_macro2::{Span, TokenStream};
use quote::quote_spanned;
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
            let ident: Ident = input.call(syn::ext::IdentExt::parse_any)?;
            (ident.to_string(), ident.span())
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
    let mut seen: Vec<&str> = Vec::new();
    let mut calls = Vec::new();
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
        let is_procedure = key.contains('.');
        if is_procedure && let Err(why) = names::check_procedure_name(key) {
            errors.push(syn::Error::new(entry.key_span, why));
            continue;
        }
        if !is_procedure && syn::parse_str::<Ident>(key).is_err() {
            errors.push(syn::Error::new(
                entry.key_span,
                format!("`{key}` is not a member name"),
            ));
            continue;
        }
        let marker = if is_procedure {
            names::procedure_marker(key, entry.key_span)
        } else {
            names::member_marker(key, entry.key_span)
        };
        let word = entry.word.to_string();
        let span = entry.key_span;
        let call = match (word.as_str(), &entry.tool_word) {
            ("resource", None) => {
                quote_spanned!(span=> ::surface::__private::expose_resource(#surface::#marker, #key))
            }
            ("resource", Some(w)) => {
                errors.at(w, "`resource` takes no arguments");
                continue;
            }
            ("tool", None) => {
                quote_spanned!(span=> ::surface::__private::expose_tool(#surface::#marker, #key, true))
            }
            ("tool", Some(w)) if TOOL_WORDS.iter().any(|t| w == t) => {
                let mutates = w == "mutates";
                quote_spanned!(span=> ::surface::__private::expose_tool(#surface::#marker, #key, #mutates))
            }
            ("tool", Some(w)) => {
                errors.at(w, unknown_word(&w.to_string(), "`tool(…)`", TOOL_WORDS));
                continue;
            }
            (other, _) => {
                errors.at(&entry.word, unknown_word(other, "`expose!`", EXPOSURES));
                continue;
            }
        };
        calls.push(call);
    }
    let compile_errors = errors.to_compile_errors();
    quote_spanned! {Span::call_site()=>
        {
            #compile_errors
            const ENTRIES: &[::surface::ExposeEntry] = &[#(#calls),*];
            ::surface::Expose::<#surface>::__from_checked_entries(ENTRIES)
        }
    }
}
