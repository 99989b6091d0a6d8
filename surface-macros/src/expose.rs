//! `expose!`: the default-deny expose map of one surface, checked at compile time.
//!
//! Accepts `expose!(Surface { key: resource, "ns.verb": tool | tool(mutates) | tool(read_only), … })`,
//! and `task` (or `task = required`) among a tool's words: the procedure's calls may run as MCP
//! tasks, as `#[tool(task)]` makes a bespoke tool's.
//! Pipeline: [`parse`](ExposeInput::parse) (a sentence for every malformed shape) → validate
//! what this macro sees alone (duplicate keys, exposure words, and the kind: a bare key is a
//! member and only a resource, a quoted `"ns.verb"` is a procedure and only a tool) → expand.
//!
//! The expansion looks each key up in the surface's declarations by const evaluation, one
//! `const _` per key spanned at the key:
//!
//! ```text
//! const _: () = if let Some(why) = member_problem(NAME, MEMBERS, FIELDS, "lod") { panic!("{}", why.as_str()) };
//! ```
//!
//! so a key naming nothing is one error at the key, in a sentence that names the surface and
//! suggests the closest declared name (`"porc.kill"` → `"proc.kill"`). The surface is named
//! once, so a path that is not a surface is one error, at the path.
//! A key already reported here is not looked up, so one mistake gives one error.

use crate::errors::{Errors, unknown_word};
use crate::tokens::{ExposeKey, Shape, expose_key, head_and_items};
use proc_macro2::{Span, TokenStream};
use quote::{quote, quote_spanned};
use syn::ext::IdentExt;
use syn::parse::{Parse, ParseStream};
use syn::{Ident, Path, Token, parenthesized};

const EXPOSURES: &[&str] = &["resource", "tool"];
const TOOL_WORDS: &[&str] = &["mutates", "read_only", "task"];
/// What `task = …` may say.
const TASK_FORM: &str =
    "write `task` (a task for clients that support MCP tasks, inline for others) or `task = required`";
/// The whole form, for messages about its shape.
const FORM: &str = "write `expose!(Ops { load: resource, \"proc.kill\": tool(mutates) })`";

pub struct ExposeInput {
    surface: Path,
    entries: Vec<Entry>,
}

struct Entry {
    key: String,
    key_span: Span,
    word: Ident,
    tool_word: Option<Ident>,
    /// `scope = name`: the declared scope a caller needs.
    scope: Option<Ident>,
    /// `task` (false) or `task = required` (true), at the word `task`.
    task: Option<(Ident, bool)>,
}

impl Entry {
    fn is_procedure(&self) -> bool {
        self.key.contains('.')
    }

    /// `kill: tool`: a key written like a member's, exposed as a tool.
    fn is_unquoted_tool(&self) -> bool {
        !self.is_procedure() && self.word == "tool"
    }

    /// `key: resource(mirror)`.
    fn is_mirror(&self) -> bool {
        !self.is_procedure()
            && self.word == "resource"
            && self.tool_word.as_ref().is_some_and(|w| w == "mirror")
    }
}

impl Parse for ExposeInput {
    fn parse(input: ParseStream) -> syn::Result<Self> {
        let shape = Shape {
            empty: format!("`expose!` needs a surface and its entries: {FORM}"),
            head: format!("`expose!` starts with the surface type: {FORM}"),
            braces: format!("after the surface type come its entries in braces: {FORM}"),
            items: "entries",
            after: format!(
                "`expose!` takes one surface and its entries, nothing after the braces: remove this ({FORM})"
            ),
        };
        let (surface, entries) = head_and_items(input, &shape)?;
        Ok(ExposeInput { surface, entries })
    }
}

impl Parse for Entry {
    fn parse(input: ParseStream) -> syn::Result<Self> {
        let ExposeKey {
            key, span: key_span, ..
        } = expose_key(
            input,
            "expected a key: a member's name (`load: resource`) or a quoted procedure name (`\"proc.kill\": tool`)",
        )?;
        if input.peek(Token![=]) {
            let eq: Token![=] = input.parse()?;
            return Err(syn::Error::new(
                eq.span,
                format!("a key and its exposure are joined by `:`: write `{key}: …` in place of `{key} = …`"),
            ));
        }
        if !input.peek(Token![:]) {
            let fix = if key.contains('.') {
                format!("\"{key}\": tool")
            } else {
                format!("{key}: resource")
            };
            return Err(syn::Error::new(
                key_span,
                format!("each key says how it is exposed: write `{fix}`"),
            ));
        }
        input.parse::<Token![:]>()?;
        let word: Ident = input.call(Ident::parse_any).map_err(|e| {
            syn::Error::new(
                e.span(),
                "expected `resource`, `tool`, `tool(mutates)` or `tool(read_only)`",
            )
        })?;
        let (mut tool_word, mut scope, mut task) = (None, None, None);
        if input.peek(syn::token::Paren) {
            let inner;
            let parens = parenthesized!(inner in input);
            let inside = if word == "resource" {
                "`mirror`"
            } else {
                "`mutates` or `read_only`"
            };
            if inner.is_empty() {
                return Err(syn::Error::new(
                    parens.span.join(),
                    format!("empty parentheses: write {inside} in them, or `{word}` alone"),
                ));
            }
            while !inner.is_empty() {
                let item: Ident = inner.call(Ident::parse_any)?;
                if item == "scope" && inner.peek(Token![=]) {
                    inner.parse::<Token![=]>()?;
                    let name: Ident = inner.parse().map_err(|e| {
                        syn::Error::new(
                            e.span(),
                            "`scope =` names a scope declared with `scopes!`: write `scope = read`",
                        )
                    })?;
                    if scope.replace(name).is_some() {
                        return Err(syn::Error::new(item.span(), "one `scope =` per entry"));
                    }
                } else if item == "task" {
                    let required = if inner.peek(Token![=]) {
                        let eq: Token![=] = inner.parse()?;
                        let value: syn::Expr = inner.parse()?;
                        if !matches!(&value, syn::Expr::Path(p) if p.path.is_ident("required")) {
                            return Err(syn::Error::new_spanned(
                                quote::quote!(#item #eq #value),
                                TASK_FORM,
                            ));
                        }
                        true
                    } else {
                        false
                    };
                    if task.is_some() {
                        return Err(syn::Error::new(
                            item.span(),
                            "one `task` per entry: remove this one",
                        ));
                    }
                    task = Some((item, required));
                } else if inner.peek(Token![=]) {
                    // `tool(mutates = true)`: the words are flags.
                    let eq: Token![=] = inner.parse()?;
                    let value: syn::Expr = inner.parse()?;
                    let flag = match (
                        item.to_string().as_str(),
                        quote::ToTokens::to_token_stream(&value).to_string().as_str(),
                    ) {
                        ("mutates", "false") => "read_only".to_owned(),
                        ("read_only", "false") => "mutates".to_owned(),
                        _ => item.to_string(),
                    };
                    return Err(syn::Error::new_spanned(
                        quote::quote!(#item #eq #value),
                        format!("`{item}` is a flag: write `{word}({flag})`"),
                    ));
                } else if tool_word.is_some() && word == "tool" && item != "mutates" && item != "read_only" {
                    // A second word that is no word of `tool(…)`: a misspelling (of `task`, say).
                    return Err(syn::Error::new(
                        item.span(),
                        unknown_word(&item.to_string(), "`tool(…)`", TOOL_WORDS),
                    ));
                } else if tool_word.is_some() {
                    return Err(syn::Error::new(
                        item.span(),
                        format!("`{word}(…)` takes one of {inside}: remove `{item}`"),
                    ));
                } else {
                    tool_word = Some(item);
                }
                if !inner.is_empty() {
                    inner.parse::<Token![,]>()?;
                }
            }
        }
        Ok(Entry {
            key,
            key_span,
            word,
            tool_word,
            scope,
            task,
        })
    }
}

pub fn expand(input: ExposeInput) -> TokenStream {
    let mut errors = Errors::new();
    let surface = &input.surface;
    // The surface type, named once so a wrong path is reported once (and never aliased to
    // itself: a surface called `Surface` gets `SurfaceType`).
    // Located at the path, where rustc reports a type that is not a surface.
    let span = syn::spanned::Spanned::span(surface);
    let alias = match surface.segments.last() {
        Some(last) if last.ident == "Surface" => Ident::new("SurfaceType", span),
        _ => Ident::new("Surface", span),
    };
    let mut seen: Vec<&str> = Vec::new();
    let mut entries = Vec::new();
    let mut checks = Vec::new();
    let mut mirrored: Vec<&str> = Vec::new();
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
        let Some(exposure) = exposure(entry, &mut errors) else {
            continue;
        };
        let scope = match &entry.scope {
            Some(name) => {
                let name_str = name.to_string();
                checks.push(scope_check(name));
                quote!(::core::option::Option::Some(::surface::__private::keys::scope_wire(SCOPES, #name_str)))
            }
            None => quote!(::core::option::Option::None),
        };
        let task = match entry.task {
            None => quote!(::surface::TaskSupport::Never),
            Some((_, false)) => quote!(::surface::TaskSupport::Optional),
            Some((_, true)) => quote!(::surface::TaskSupport::Required),
        };
        entries.push(
            quote!(::surface::ExposeEntry { key: #key, exposure: #exposure, scope: #scope, task: #task }),
        );
        if entry.is_unquoted_tool() {
            checks.push(unquoted_tool_checks(entry));
        } else {
            checks.push(key_check(entry));
        }
        if entry.is_mirror() {
            mirrored.push(key);
            checks.push(mirror_check(entry));
        }
    }
    // `resource(mirror)`: those members are also served as read-only tools.
    let mirrors = (!mirrored.is_empty()).then(|| quote!(.__mirrored(&[#(#mirrored),*])));
    // Scopes named: the surface's declaration, looked up once.
    let scoped = input.entries.iter().any(|e| e.scope.is_some());
    let (scopes_const, scopes_call) = if scoped {
        (
            quote! {
                const SCOPES: &[::surface::Scope] = <#alias as ::surface::__private::keys::SurfaceScopes>::SCOPES;
                const SCOPE_NAMES: &[&str] = <#alias as ::surface::__private::keys::SurfaceScopes>::NAMES;
            },
            quote!(.__scopes(SCOPES)),
        )
    } else {
        (quote!(), quote!())
    };
    let compile_errors = errors.to_compile_errors();
    // Only what the keys need (a map of members alone does not ask for the impl block), as
    // one constant, so a type that is not a surface is one error.
    // Spanned at the surface's path: a type that is not a surface is one error there. The map's
    // type is the trait's `Surface`, so such a type is not also a mismatch with the map's
    // declared `Expose<…>`.
    let procedures = input
        .entries
        .iter()
        .any(|e| e.is_procedure() || e.is_unquoted_tool());
    let keys_trait = if procedures {
        quote_spanned!(span=> ::surface::SurfaceKeys)
    } else {
        quote_spanned!(span=> ::surface::SurfaceMemberKeys)
    };
    let of = quote_spanned!(span=> <#alias as #keys_trait>);
    let keys = if procedures {
        quote! {
            const KEYS: (&str, &[::surface::MemberSpec], &[&str], &[(&str, bool)]) = #of::KEYS;
            const DECLARED: &[&str] = KEYS.2;
            const FIELDS: &[(&str, bool)] = KEYS.3;
        }
    } else {
        quote! {
            const KEYS: (&str, &[::surface::MemberSpec], &[(&str, bool)]) = #of::KEYS;
            const FIELDS: &[(&str, bool)] = KEYS.2;
        }
    };
    let map = quote_spanned!(span=> ::surface::Expose::<#of::Surface>::__from_checked_entries(ENTRIES)#mirrors #scopes_call);
    quote! {
        {
            #compile_errors
            type #alias = #surface;
            #keys
            const NAME: &str = KEYS.0;
            const MEMBERS: &[::surface::MemberSpec] = KEYS.1;
            #scopes_const
            #(#checks)*
            const ENTRIES: &[::surface::ExposeEntry] = &[#(#entries),*];
            #map
        }
    }
}

/// The exposure an entry asks for, or `None` after reporting why it cannot have it.
fn exposure(entry: &Entry, errors: &mut Errors) -> Option<TokenStream> {
    let key = &entry.key;
    if let Some((task, _)) = &entry.task
        && entry.word != "tool"
    {
        errors.at(
            task,
            format!(
                "only a tool runs as a task: a `{}` is not called — remove `task`, or expose a procedure as `\"ns.verb\": tool(task)`",
                entry.word
            ),
        );
        return None;
    }
    match (entry.word.to_string().as_str(), &entry.tool_word) {
        ("resource", _) if entry.is_procedure() => errors.at(
            &entry.word,
            format!("\"{key}\" is a procedure: expose it as `tool`, `tool(mutates)` or `tool(read_only)`"),
        ),
        // An unquoted key as a tool: a member (the word is wrong) or a procedure written like a
        // member (the key is), told apart in const evaluation (see `unquoted_tool_checks`).
        ("tool", _) if !entry.is_procedure() => {
            return Some(quote!(::surface::Exposure::Tool { mutates: true }));
        }
        ("resource", None) => return Some(quote!(::surface::Exposure::Resource)),
        ("resource", Some(w)) if w == "mirror" => return Some(quote!(::surface::Exposure::Resource)),
        ("resource", Some(w)) => errors.at(
            w,
            "`resource` takes only `mirror`: write `resource` or `resource(mirror)`",
        ),
        ("tool", None) => return Some(quote!(::surface::Exposure::Tool { mutates: true })),
        ("tool", Some(w)) if w == "mutates" || w == "read_only" => {
            let mutates = w == "mutates";
            return Some(quote!(::surface::Exposure::Tool { mutates: #mutates }));
        }
        ("tool", Some(w)) => errors.at(w, unknown_word(&w.to_string(), "`tool(…)`", TOOL_WORDS)),
        (other, _) => errors.at(&entry.word, unknown_word(other, "`expose!`", EXPOSURES)),
    }
    None
}

/// A mirrored member must be a cell, a collection or a stream, spanned at `mirror`.
fn mirror_check(entry: &Entry) -> TokenStream {
    let key = &entry.key;
    let span = entry.tool_word.as_ref().map_or(entry.key_span, Ident::span);
    quote_spanned! {span=>
        const _: () = if let ::core::option::Option::Some(why) =
            ::surface::__private::keys::mirror_problem(MEMBERS, #key)
        {
            ::core::panic!("{}", why.as_str())
        };
    }
}

/// `kill: tool`: at the key, when it names no member (a procedure's key is its quoted name);
/// at `tool`, when it does (a member is a resource).
fn unquoted_tool_checks(entry: &Entry) -> TokenStream {
    let key = &entry.key;
    let at_key = quote_spanned! {entry.key_span=>
        const _: () = if let ::core::option::Option::Some(why) =
            ::surface::__private::keys::unquoted_tool_problem(NAME, MEMBERS, DECLARED, #key)
        {
            ::core::panic!("{}", why.as_str())
        };
    };
    let at_word = quote_spanned! {entry.word.span()=>
        const _: () = if let ::core::option::Option::Some(why) =
            ::surface::__private::keys::member_as_tool_problem(MEMBERS, #key)
        {
            ::core::panic!("{}", why.as_str())
        };
    };
    quote!(#at_key #at_word)
}

/// The lookup of one `scope = name` in the surface's declared scopes, spanned at the name.
fn scope_check(name: &Ident) -> TokenStream {
    let name_str = name.to_string();
    quote_spanned! {name.span()=>
        const _: () = if let ::core::option::Option::Some(why) =
            ::surface::__private::keys::scope_problem(NAME, SCOPE_NAMES, #name_str)
        {
            ::core::panic!("{}", why.as_str())
        };
    }
}

/// The lookup of one key in the surface's declarations, spanned at the key (see the module).
fn key_check(entry: &Entry) -> TokenStream {
    let key = &entry.key;
    let problem = if entry.is_procedure() {
        quote!(::surface::__private::keys::procedure_problem(NAME, DECLARED, #key))
    } else {
        quote!(::surface::__private::keys::member_problem(NAME, MEMBERS, FIELDS, #key))
    };
    quote_spanned! {entry.key_span=>
        const _: () = if let ::core::option::Option::Some(why) = #problem {
            ::core::panic!("{}", why.as_str())
        };
    }
}
