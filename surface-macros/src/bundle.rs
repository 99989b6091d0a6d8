//! `bundle!`: a static roster whose collisions are compile errors.
//!
//! Accepts
//! `bundle! { [core: EXPOSE [, tools: [Tool, …]];] siblings: { "key" => EXPOSE [, tools: [Tool, …]], … }; root: [Tool, …] [; views: [VIEW, …]] }`.
//! Pipeline: parse (a sentence for each malformed part) → validate what is visible in the
//! tokens, each at the offending key (a sibling key empty, not of `[A-Za-z0-9_-]`, or given
//! twice; the same rule the boot-time composition applies) → expand:
//! - per tool handed to a member, a check spanned at the tool that its client is the client of
//!   that member's surface (`IsClient`), so a `TenantClient` tool given to an `Ops` core is a
//!   type error at the tool;
//! - const evaluation of the whole roster (duplicate tool names across generated, sibling and
//!   root tools, names over 64 characters, a sibling key equal to a core collection), asked
//!   once per part of the invocation (`Culprit`) in a const spanned at that part, so the one
//!   error is at the key, expose map or tool to change;
//! - per tool, a const check spanned at the tool that the view it is bound to (if any) is one
//!   of `views: [..]`, and one check that no two declared views share a URI;
//! - the roster itself.
//!
//! After a key error the roster still expands without that sibling, so one mistake gives one
//! error.

use crate::errors::Errors;
use proc_macro2::{Span, TokenStream};
use quote::{quote, quote_spanned};
use syn::parse::{Parse, ParseStream};
use syn::punctuated::Punctuated;
use syn::spanned::Spanned;
use syn::{Expr, Ident, LitStr, Path, Token, braced, bracketed};

/// The whole form, for messages about its shape.
const FORM: &str = "write `bundle! { core: CORE; siblings: { \"a\" => TENANT, tools: [HereTool] }; root: [KeysTool]; views: [PANEL] }`";

pub struct BundleInput {
    core: Option<Member>,
    siblings: Vec<(LitStr, Member)>,
    root: Vec<Path>,
    /// The declared MCP Apps views (`views: [PANEL, …]`).
    views: Vec<Path>,
}

struct Member {
    expose: Expr,
    tools: Vec<Path>,
}

/// `word:`, or an error saying the form.
fn section(input: ParseStream, word: &str) -> syn::Result<()> {
    let ident: Ident = input
        .parse()
        .map_err(|e| syn::Error::new(e.span(), format!("expected `{word}:`: {FORM}")))?;
    if ident != word {
        return Err(syn::Error::new(
            ident.span(),
            format!("expected `{word}:`: {FORM}"),
        ));
    }
    input.parse::<Token![:]>()?;
    Ok(())
}

/// `[A, B]` after `word:`; a list written without its brackets (`root: KeysTool;`) is said
/// with the brackets to write.
fn tool_list(input: ParseStream, word: &str) -> syn::Result<Vec<Path>> {
    if !input.peek(syn::token::Bracket) {
        let written: Punctuated<Path, Token![,]> = Punctuated::parse_separated_nonempty(&input.fork())
            .map_err(|e| {
                syn::Error::new(
                    e.span(),
                    format!("`{word}` is a list in brackets: write `{word}: [..]`"),
                )
            })?;
        let names: Vec<String> = written
            .iter()
            .map(|p| quote::ToTokens::to_token_stream(p).to_string().replace(' ', ""))
            .collect();
        return Err(syn::Error::new(
            input.span(),
            format!(
                "`{word}` is a list in brackets: write `{word}: [{}]`",
                names.join(", ")
            ),
        ));
    }
    let inner;
    bracketed!(inner in input);
    let tools = Punctuated::<Path, Token![,]>::parse_terminated(&inner)?;
    Ok(tools.into_iter().collect())
}

impl Member {
    fn parse_after(input: ParseStream, expose: Expr) -> syn::Result<Member> {
        let mut tools = Vec::new();
        if input.peek(Token![,]) && input.peek2(Ident) {
            let fork = input.fork();
            fork.parse::<Token![,]>()?;
            if fork.parse::<Ident>()? == "tools" {
                input.parse::<Token![,]>()?;
                section(input, "tools")?;
                tools = tool_list(input, "tools")?;
            }
        }
        Ok(Member { expose, tools })
    }
}

impl Parse for BundleInput {
    fn parse(input: ParseStream) -> syn::Result<Self> {
        let mut core = None;
        if input.peek(Ident) && input.fork().parse::<Ident>()? == "core" {
            section(input, "core")?;
            let expose: Expr = input.parse()?;
            core = Some(Member::parse_after(input, expose)?);
            input.parse::<Token![;]>()?;
        }
        section(input, "siblings")?;
        let body;
        let braces = braced!(body in input);
        let mut siblings = Vec::new();
        while !body.is_empty() {
            if body.peek(Ident) {
                let ident: Ident = body.parse()?;
                return Err(syn::Error::new(
                    ident.span(),
                    format!("a sibling key is a string: write `\"{ident}\"`"),
                ));
            }
            // `2 => TENANT`, `'b' => TENANT`: a literal that is not a string.
            if !body.peek(LitStr)
                && let Ok(lit) = body.fork().parse::<syn::Lit>()
            {
                let text = match &lit {
                    syn::Lit::Char(c) => c.value().to_string(),
                    other => quote::ToTokens::to_token_stream(other).to_string(),
                };
                return Err(syn::Error::new(
                    lit.span(),
                    format!("a sibling key is a string: write `\"{text}\"`"),
                ));
            }
            let key: LitStr = body.parse().map_err(|e| {
                syn::Error::new(
                    e.span(),
                    "a sibling is `\"key\" => EXPOSE` (with `, tools: [Tool]` if it has bespoke tools)",
                )
            })?;
            body.parse::<Token![=>]>()?;
            let expose: Expr = body.parse()?;
            siblings.push((key, Member::parse_after(&body, expose)?));
            if body.is_empty() {
                break;
            }
            body.parse::<Token![,]>()?;
        }
        // `root` is required: said at the end of the siblings, where it goes.
        let root_missing = "`root: [...]` follows the siblings: write `root: [];` (or the tools over `BundleClient`, `root: [KeysTool];`)";
        if input.is_empty() {
            return Err(syn::Error::new(
                braces.span.close(),
                format!("expected `;` then {root_missing}"),
            ));
        }
        let semi = input.parse::<Token![;]>()?;
        if input.is_empty() {
            return Err(syn::Error::new(semi.span, root_missing));
        }
        section(input, "root")?;
        let root = tool_list(input, "root")?;
        if input.peek(Token![;]) {
            input.parse::<Token![;]>()?;
        }
        let mut views = Vec::new();
        if input.peek(Ident) && input.fork().parse::<Ident>()? == "views" {
            section(input, "views")?;
            views = tool_list(input, "views")?;
            if input.peek(Token![;]) {
                input.parse::<Token![;]>()?;
            }
        }
        if !input.is_empty() {
            return Err(input.error(format!("nothing follows `root: […]` but `views: […]`: {FORM}")));
        }
        Ok(BundleInput {
            core,
            siblings,
            root,
            views,
        })
    }
}

/// Why `key` cannot be a sibling key, if it cannot (the boot-time composition's rule: it
/// becomes a URI segment and a tool-name prefix).
fn key_problem(key: &str) -> Option<String> {
    if key.is_empty() {
        return Some(
            "a sibling key cannot be empty: it becomes a URI segment and a tool-name prefix; write a name such as \"tenant_a\"".to_owned(),
        );
    }
    let bad: String = key
        .chars()
        .filter(|c| !(c.is_ascii_alphanumeric() || *c == '_' || *c == '-'))
        .collect();
    (!bad.is_empty()).then(|| {
        let fixed: String = key
            .chars()
            .map(|c| if c.is_ascii_alphanumeric() || c == '-' { c } else { '_' })
            .collect();
        format!(
            "sibling key \"{key}\" has {:?}: a key becomes a URI segment and a tool-name prefix, so it uses only letters, digits, `_` and `-`; write \"{fixed}\"",
            bad
        )
    })
}

pub fn expand(input: BundleInput) -> TokenStream {
    let mut errors = Errors::new();
    let mut seen: Vec<String> = Vec::new();
    let mut siblings = Vec::new();
    for (key, member) in &input.siblings {
        let value = key.value();
        if let Some(why) = key_problem(&value) {
            errors.at(key, why);
            continue;
        }
        if seen.contains(&value) {
            errors.at(
                key,
                format!("sibling key \"{value}\" is given twice: the later would replace the earlier and its tools would vanish; keep one or rename it"),
            );
            continue;
        }
        seen.push(value);
        siblings.push((key, member));
    }
    let mut client_checks = Vec::new();
    let members = input.core.iter().chain(siblings.iter().map(|(_, m)| *m));
    for member in members {
        // The roster is checked in const evaluation, which a `let` value cannot enter; rustc
        // would say so in words suggesting the opposite fix (our const "would need to be a
        // `let`"), so it is said here, and that member's const checks are left out.
        if let Some(local) = local_binding(&member.expose) {
            errors.at(
                &member.expose,
                format!("`bundle!` checks its roster at compile time, so an expose map is a constant: declare `const {}: Expose<…> = expose!(…);` and name it here", local.to_uppercase()),
            );
            continue;
        }
        for tool in &member.tools {
            client_checks.push(client_check(&member.expose, tool));
        }
    }
    let view_uris = input
        .views
        .iter()
        .map(|v| quote_spanned!(v.span()=> ::surface::View::uri(&#v)));
    let declared = quote!(&[#(#view_uris),*]);
    let all_tools = input
        .core
        .iter()
        .chain(siblings.iter().map(|(_, m)| *m))
        .flat_map(|m| m.tools.iter())
        .chain(input.root.iter());
    // One check per tool, spanned at it: the error names the tool and lands on it.
    let view_checks: Vec<TokenStream> = all_tools
        .map(|tool| {
            quote_spanned! {tool.span()=>
                const _: () = if let ::core::option::Option::Some(why) = ::surface::__private::bundle::view_problem(
                    <#tool as ::surface::StaticTool>::NAME,
                    <#tool as ::surface::StaticTool>::VIEW,
                    #declared,
                ) {
                    ::core::panic!("{}", why.as_str())
                };
            }
        })
        .collect();
    // Two views at one URI: at the `views` list's first view.
    let views_check = input.views.first().map(|first| {
        quote_spanned! {first.span()=>
            const _: () = if let ::core::option::Option::Some(why) =
                ::surface::__private::bundle::views_problem(#declared)
            {
                ::core::panic!("{}", why.as_str())
            };
        }
    });
    let views = &input.views;
    let names = |tools: &[Path]| -> TokenStream {
        let names = tools
            .iter()
            .map(|t| quote_spanned!(t.span()=> <#t as ::surface::StaticTool>::NAME));
        quote!(&[#(#names),*])
    };
    let static_member = |m: &Member| {
        let expose = &m.expose;
        let tools = names(&m.tools);
        quote!(::surface::__private::bundle::static_member(#expose, #tools))
    };
    let member = |m: &Member| {
        let expose = &m.expose;
        let tools = &m.tools;
        quote!(::surface::__private::bundle::Member::new(#expose) #(.tool(#tools))*)
    };
    let static_core = match &input.core {
        Some(core) => {
            let core = static_member(core);
            quote!(::core::option::Option::Some(#core))
        }
        None => quote!(::core::option::Option::None),
    };
    let static_siblings = siblings.iter().map(|(key, m)| {
        let m = static_member(m);
        quote!((#key, #m))
    });
    let root_names = names(&input.root);
    let set_core = input.core.as_ref().map(|core| {
        let core = member(core);
        quote!(roster.core = ::core::option::Option::Some(#core);)
    });
    let insert_siblings = siblings.iter().map(|(key, m)| {
        let m = member(m);
        quote!(roster.siblings.insert(::std::string::String::from(#key), #m);)
    });
    let root = &input.root;
    let compile_errors = errors.to_compile_errors();
    // A roster with a sibling left out would be checked wrongly (or found empty): after a key
    // error, the reported one is the only one.
    let check = errors.is_empty().then(|| {
        let bundle = quote! {
            const __SURFACE_BUNDLE: ::surface::__private::bundle::StaticBundle = ::surface::__private::bundle::StaticBundle {
                core: #static_core,
                siblings: &[#(#static_siblings),*],
                root: #root_names,
            };
        };
        let culprits = culprits(input.core.as_ref(), &siblings, &input.root)
            .into_iter()
            .map(|(span, culprit)| problem_at(span, culprit));
        quote!(#bundle #(#culprits)* #views_check #(#view_checks)*)
    });
    quote! {
        {
            #compile_errors
            #(#client_checks)*
            #check
            let mut roster = ::surface::__private::bundle::Roster::new();
            #set_core
            #(#insert_siblings)*
            #(roster = roster.root_tool(#root);)*
            #(roster.views.push(#views);)*
            roster
        }
    }
}

/// Every part of the invocation a roster problem can be blamed on, with its tokens' span and
/// its `Culprit` (indices as `StaticBundle` holds them).
fn culprits(
    core: Option<&Member>,
    siblings: &[(&LitStr, &Member)],
    root: &[Path],
) -> Vec<(Span, TokenStream)> {
    let c = quote!(::surface::__private::bundle::Culprit);
    let mut out = vec![(Span::call_site(), quote!(#c::Whole))];
    let mut member = |place: TokenStream, m: &Member| {
        out.push((m.expose.span(), quote!(#c::Expose(#place))));
        for (t, tool) in m.tools.iter().enumerate() {
            out.push((tool.span(), quote!(#c::Tool(#place, #t))));
        }
    };
    if let Some(core) = core {
        member(quote!(::core::option::Option::None), core);
    }
    for (i, (_, m)) in siblings.iter().enumerate() {
        member(quote!(::core::option::Option::Some(#i)), m);
    }
    out.extend(
        siblings
            .iter()
            .enumerate()
            .map(|(i, (key, _))| (key.span(), quote!(#c::Key(#i)))),
    );
    out.extend(
        root.iter()
            .enumerate()
            .map(|(r, tool)| (tool.span(), quote!(#c::Root(#r)))),
    );
    out
}

/// A const that fails, at `span`, with the roster's first problem when `culprit` is its part.
fn problem_at(span: Span, culprit: TokenStream) -> TokenStream {
    quote_spanned! {span=>
        const _: () = if let ::core::option::Option::Some(why) =
            ::surface::__private::bundle::problem_at(&__SURFACE_BUNDLE, #culprit)
        {
            ::core::panic!("{}", why.as_str())
        };
    }
}

/// The name of `expose` when it is a lowercase identifier: a `let` binding (constants are
/// upper case; rustc warns on a lowercase one).
fn local_binding(expose: &Expr) -> Option<String> {
    let Expr::Path(p) = expose else { return None };
    let ident = p.path.get_ident()?.to_string();
    ident
        .starts_with(|c: char| c.is_ascii_lowercase())
        .then_some(ident)
}

/// `tool`'s client is the client of the surface `expose` maps, checked at the tool.
fn client_check(expose: &Expr, tool: &Path) -> TokenStream {
    let span = tool.span();
    // A local function, so rustc's "required by a bound" note points here, at the tool.
    quote_spanned! {span=>
        const _: () = {
            const fn handed_this_members_client<S: ::surface::SurfaceMembers, C: ::surface::IsClient<S::Client>>(
                _: &::surface::Expose<S>,
                _: ::core::marker::PhantomData<C>,
            ) {
            }
            handed_this_members_client(&#expose, ::core::marker::PhantomData::<<#tool as ::surface::BespokeTool>::Client>)
        };
    }
}
