//! The procedural macros of `surface`: `#[surface]` (a surface's members and procedures),
//! `#[tool]` (a bespoke tool), `#[prompt]`, `#[derive(Elicit)]` (what a tool asks its user for),
//! `expose!` (what crosses to an agent), `skill!` (a workflow over it), `scopes!` (who may call it) and `bundle!` (a roster
//! composed and checked at compile time).
//!
//! Use them through the `surface` crate, which re-exports them with the runtime they expand
//! into. Each macro parses its input into a small model, validates it (collecting every error,
//! each spanned at the user's token) and expands; on error it still emits the user's item so
//! one mistake gives one error. Generated code names the runtime by absolute paths through
//! `::surface::__private`.

mod bespoke;
mod bundle;
mod checks;
mod docs;
mod elicit;
mod errors;
mod expose;
mod names;
mod prompt;
mod scopes;
mod skill;
mod surface_impl;
mod surface_struct;
mod tokens;
mod tool;

use proc_macro::TokenStream;
use syn::Item;

/// Declares a surface: on a struct, its members; on an impl block, its procedures.
///
/// See the `surface` crate for the full syntax.
#[proc_macro_attribute]
pub fn surface(args: TokenStream, item: TokenStream) -> TokenStream {
    expand_surface(args.into(), item.into()).into()
}

/// The `#[surface]` expander on `proc_macro2` tokens (for tests and snapshots).
fn expand_surface(
    args: proc_macro2::TokenStream,
    item: proc_macro2::TokenStream,
) -> proc_macro2::TokenStream {
    match syn::parse2::<Item>(item) {
        Ok(Item::Struct(s)) => surface_struct::expand(args, s),
        Ok(Item::Impl(i)) => surface_impl::expand(args, i),
        // `#[surface] #[procedure(…)] async fn kill(…)`: a procedure written as a free
        // function. Said once, with its `#[procedure]` stripped (rustc would not resolve it).
        Ok(Item::Fn(mut f)) if f.attrs.iter().any(|a| a.path().is_ident("procedure")) => {
            f.attrs.retain(|a| !a.path().is_ident("procedure"));
            let head = {
                let (k, i) = (&f.sig.fn_token, &f.sig.ident);
                quote::quote!(#k #i)
            };
            let error = syn::Error::new_spanned(
                head,
                format!(
                    "a procedure is a method of its surface: move `{}` into the surface's `#[surface] impl` block, taking `&self` first",
                    f.sig.ident
                ),
            )
            .to_compile_error();
            quote::quote!(#f #error)
        }
        Ok(other) => {
            // At the item's keyword and name (`enum Ops`), not its whole body; the item is
            // still emitted so code naming it does not fail too.
            let head = match &other {
                Item::Enum(e) => {
                    let (k, i) = (&e.enum_token, &e.ident);
                    quote::quote!(#k #i)
                }
                Item::Union(u) => {
                    let (k, i) = (&u.union_token, &u.ident);
                    quote::quote!(#k #i)
                }
                Item::Trait(t) => {
                    let (k, i) = (&t.trait_token, &t.ident);
                    quote::quote!(#k #i)
                }
                Item::Fn(f) => {
                    let (k, i) = (&f.sig.fn_token, &f.sig.ident);
                    quote::quote!(#k #i)
                }
                Item::Mod(m) => {
                    let (k, i) = (&m.mod_token, &m.ident);
                    quote::quote!(#k #i)
                }
                Item::Type(t) => {
                    let (k, i) = (&t.type_token, &t.ident);
                    quote::quote!(#k #i)
                }
                other => quote::ToTokens::to_token_stream(other),
            };
            let error = syn::Error::new_spanned(
                head,
                "`#[surface]` goes on a struct with named fields (its members) or on that struct's `impl` block (its procedures)",
            )
            .to_compile_error();
            quote::quote!(#other #error)
        }
        Err(e) => e.to_compile_error(),
    }
}

/// Declares a bespoke tool on an `async fn(args, client: &C, cancel)`.
#[proc_macro_attribute]
pub fn tool(args: TokenStream, item: TokenStream) -> TokenStream {
    match syn::parse::<syn::ItemFn>(item) {
        Ok(f) => tool::expand(args.into(), f).into(),
        Err(e) => e.to_compile_error().into(),
    }
}

/// Marks a struct as an elicitation form (`ctx.elicit::<T>(..)`), or an enum of unit variants
/// as a choice in one, checking at compile time that every field of the form is a string,
/// number, integer, boolean, choice, list of choices or `Option` of these (an error at the
/// field's type otherwise) and that a choice's variants carry no data.
#[proc_macro_derive(Elicit)]
pub fn derive_elicit(item: TokenStream) -> TokenStream {
    match syn::parse::<syn::DeriveInput>(item) {
        Ok(input) => elicit::expand(input).into(),
        Err(e) => e.to_compile_error().into(),
    }
}

/// Declares a bespoke prompt on an `async fn([args: A,] client: &C) -> Result<PromptAnswer, E>`.
#[proc_macro_attribute]
pub fn prompt(args: TokenStream, item: TokenStream) -> TokenStream {
    match syn::parse::<syn::ItemFn>(item) {
        Ok(f) => prompt::expand(args.into(), f).into(),
        Err(e) => e.to_compile_error().into(),
    }
}

/// Builds a static roster (`surface::bundle::Roster`, which `McpServer::roster` and `Cli::roster` take) and refuses its mistakes at compile time.
///
/// ```text
/// bundle! {
///     core: CORE, tools: [CountTool];                    // optional; an Expose<Core>
///     siblings: { "a" => TENANT, tools: [HereTool], "b" => TENANT };
///     root: [KeysTool];                                  // tools over BundleClient
/// }
/// ```
///
/// At the key: a sibling key that is empty, not of `[A-Za-z0-9_-]`, or given twice. At the
/// tool: a tool handed to a member whose surface is not its client's. For the whole roster (in
/// const evaluation, the sentences of the boot-time composition): a sibling key equal to a core
/// collection, a tool name produced twice, a tool name over 64 characters. The example that
/// runs is in the `surface` crate's documentation.
#[proc_macro]
pub fn bundle(input: TokenStream) -> TokenStream {
    match syn::parse::<bundle::BundleInput>(input) {
        Ok(i) => bundle::expand(i).into(),
        Err(e) => e.to_compile_error().into(),
    }
}

/// The scopes of one surface, declared once with their hierarchy:
/// `scopes!(Ops { read = "ops.read", admin = "ops.admin": read })`. `expose!` then names them
/// (`"proc.kill": tool(mutates, scope = admin)`); a broader scope satisfies the narrower ones it
/// implies.
#[proc_macro]
pub fn scopes(input: TokenStream) -> TokenStream {
    match syn::parse::<scopes::ScopesInput>(input) {
        Ok(i) => scopes::expand(i).into(),
        Err(e) => e.to_compile_error().into(),
    }
}

/// Declares a skill (the MCP skills extension) over one expose map:
/// `skill!(EXPOSE { name: "triage", description: "…", uses: [load, "proc.kill"], instructions: include_str!("triage.md") })`.
/// Every key in `uses` must be one the map exposes (a quoted key as a tool, a bare one as a
/// resource): any other is a compile error at the key, with the closest exposed key. The name
/// follows the Agent Skills rules (lowercase letters, digits, single hyphens; at most 64).
#[proc_macro]
pub fn skill(input: TokenStream) -> TokenStream {
    match syn::parse::<skill::SkillInput>(input) {
        Ok(i) => skill::expand(i).into(),
        Err(e) => e.to_compile_error().into(),
    }
}

/// Builds the expose map of one surface, checked against its spec at compile time:
/// `expose!(Ops { load: resource, "proc.kill": tool(mutates, scope = admin) })`. A procedure's
/// words are `mutates` or `read_only`, `scope = name`, and `task` (or `task = required`): its
/// calls may run as MCP tasks, as `#[tool(task)]` makes a bespoke tool's.
#[proc_macro]
pub fn expose(input: TokenStream) -> TokenStream {
    match syn::parse::<expose::ExposeInput>(input) {
        Ok(i) => expose::expand(i).into(),
        Err(e) => e.to_compile_error().into(),
    }
}

#[cfg(test)]
mod snapshots;
