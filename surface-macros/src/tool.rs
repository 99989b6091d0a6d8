//! `#[tool]` on an `async fn`: a bespoke tool.
//!
//! Accepts `#[tool(mutates | read_only, title = "…", render = image | audio, view = PANEL, task |
//! task = required, scope = read)]` on
//! `async fn name([args: A,] client: &C [, cancel: CancellationToken | ctx: ToolContext]) -> Result<T, E>`.
//! Pipeline: parse the attribute with darling and the signature (shared with `#[prompt]`, see
//! `bespoke`) → validate → expand the function unchanged plus a unit struct `NameTool`
//! (`count` → `CountTool`) implementing `BespokeTool<Client = C>` by calling it. A companion type, rather than turning the function
//! into a unit struct, keeps `count` an ordinary function and never shadows a `let count`
//! binding. A mistake in the attribute is reported and the tool still expands; a mistake in
//! the signature is reported and the function is emitted alone.

use crate::bespoke::{self, Input, Kind, Params};
use crate::checks;
use crate::docs::doc_text;
use crate::errors::{Errors, unknown_word};
use crate::names;
use darling::FromMeta;
use darling::ast::NestedMeta;
use darling::util::Flag;
use proc_macro2::TokenStream;
use quote::{ToTokens, quote, quote_spanned};
use syn::ext::IdentExt;
use syn::spanned::Spanned;
use syn::{Ident, ItemFn, LitStr, Meta, ReturnType, Type};

const WORDS: &[&str] = &["mutates", "read_only", "title", "render", "view", "task", "scope"];

const KIND: Kind = Kind {
    word: "tool",
    takes_call: true,
};

#[derive(FromMeta, Default)]
struct ToolArgs {
    mutates: Flag,
    read_only: Flag,
    title: Option<LitStr>,
    render: Option<Ident>,
    /// The const `View` the tool is bound to (an MCP Apps view).
    view: Option<syn::Path>,
    /// `task` (a task for clients that support them) or `task = required`.
    task: Option<darling::util::Override<Ident>>,
    /// `scope = read`: the declared scope a caller needs (see `scopes!`).
    scope: Option<Ident>,
}

pub fn expand(args: TokenStream, item: ItemFn) -> TokenStream {
    let mut errors = Errors::new();
    let args = parse_args(args, &mut errors);
    if args.mutates.is_present() && args.read_only.is_present() {
        errors.push(syn::Error::new(
            args.read_only.span(),
            "a tool is either `mutates` or `read_only`, not both",
        ));
    }
    if let Some(render) = &args.render
        && render != "image"
        && render != "audio"
    {
        errors.at(
            render,
            unknown_word(&render.to_string(), "`render`", &["image", "audio"]),
        );
    }
    // A mistake in the attribute is reported and the tool still expands (the word left out),
    // so code naming the tool does not fail too; a mistake in the signature leaves the
    // function alone.
    let sig = &item.sig;
    let signature_ok = bespoke::check_async(&item, KIND, &mut errors);
    let params = bespoke::parse_params(&item, KIND, &mut errors);
    let name = sig.ident.unraw().to_string();
    if doc_text(&item.attrs).is_empty() {
        // Reported, and the tool still expands (described by nothing) so code naming it
        // does not fail too.
        errors.at(
            &sig.ident,
            format!("a bespoke tool needs a doc comment: agents read it as the tool's description; write `/// What {name} does.` above the function"),
        );
    }
    if name.len() > names::MAX_TOOL_NAME {
        errors.at(
            &sig.ident,
            format!(
                "the tool name `{name}` has {} characters: MCP clients accept at most {}; shorten the function's name",
                name.len(),
                names::MAX_TOOL_NAME
            ),
        );
    }
    let output = match &sig.output {
        ReturnType::Type(_, ty) => Some((**ty).clone()),
        ReturnType::Default => {
            errors.at(&sig.ident, "a tool must return `Result<T, E>`");
            None
        }
    };
    let compile_errors = errors.to_compile_errors();
    // A mistake in the signature still emits the companion (its body never built into a
    // program), so code naming it does not fail too.
    let output = match (params, output) {
        (Some(mut params), Some(output)) => {
            params.callable &= signature_ok;
            emit(&item, &args, &params, &output)
        }
        _ => item.to_token_stream(),
    };
    quote! { #output #compile_errors }
}

fn parse_args(args: TokenStream, errors: &mut Errors) -> ToolArgs {
    let nested = match NestedMeta::parse_meta_list(args) {
        Ok(n) => n,
        Err(e) => {
            errors.push(e);
            return ToolArgs::default();
        }
    };
    // Each word's shape is checked here, with the sentence to write instead; darling then
    // parses what is well-formed.
    let mut known = Vec::new();
    for n in nested {
        let NestedMeta::Meta(m) = &n else {
            errors.at(
                &n,
                "expected a word: `mutates`, `read_only`, `title = \"…\"`, `render = image | audio`, `view = PANEL`, `task` or `scope = read`",
            );
            continue;
        };
        let word = m.path().get_ident().map(ToString::to_string).unwrap_or_default();
        let fix = match (word.as_str(), m) {
            ("mutates" | "read_only", Meta::Path(_)) => None,
            ("mutates", Meta::NameValue(nv)) if is_lit(&nv.value, "false") => {
                Some("a tool that does not change state is `read_only`: write `read_only`")
            }
            ("read_only", Meta::NameValue(nv)) if is_lit(&nv.value, "false") => {
                Some("a tool that changes state `mutates`: write `mutates`")
            }
            ("mutates", _) => Some("`mutates` is a flag: write `mutates`"),
            ("read_only", _) => Some("`read_only` is a flag: write `read_only`"),
            ("title", Meta::NameValue(nv)) if matches!(&nv.value, syn::Expr::Lit(l) if matches!(l.lit, syn::Lit::Str(_))) => {
                None
            }
            ("title", _) => Some("the title is a string: write `title = \"…\"`"),
            ("render", Meta::NameValue(nv)) if matches!(&nv.value, syn::Expr::Path(_)) => None,
            ("render", _) => Some("write `render = image` or `render = audio`"),
            ("view", Meta::NameValue(nv)) if matches!(&nv.value, syn::Expr::Path(_)) => None,
            ("view", _) => {
                Some("a tool is bound to a view by its const: write `view = PANEL` (a `surface::View`)")
            }
            ("task", Meta::Path(_)) => None,
            ("task", Meta::NameValue(nv)) if matches!(&nv.value, syn::Expr::Path(p) if p.path.is_ident("required")) => {
                None
            }
            ("task", _) => Some(
                "write `task` (a task for clients that support MCP tasks, inline for others) or `task = required`",
            ),
            ("scope", Meta::NameValue(nv)) if matches!(&nv.value, syn::Expr::Path(p) if p.path.get_ident().is_some()) => {
                None
            }
            ("scope", _) => Some("a scope is named by its declaration in `scopes!`: write `scope = read`"),
            _ => {
                errors.at(m.path(), unknown_word(&word, "`#[tool]`", WORDS));
                continue;
            }
        };
        match fix {
            Some(fix) => errors.at(m, fix),
            None => known.push(n),
        }
    }
    ToolArgs::from_list(&known).unwrap_or_else(|e| {
        errors.darling(e);
        ToolArgs::default()
    })
}

/// Whether `expr` is the literal `text` (`true`, `false`).
fn is_lit(expr: &syn::Expr, text: &str) -> bool {
    matches!(expr, syn::Expr::Lit(l) if l.lit.to_token_stream().to_string() == text)
}

fn emit(item: &ItemFn, args: &ToolArgs, params: &Params, output: &Type) -> TokenStream {
    let ident = &item.sig.ident;
    let name = ident.unraw().to_string();
    let tool = names::tool(ident);
    let client_ty = &params.client;
    // Spanned at the user's path, so a const that is not a `View` is a type error there.
    // Only a bound tool overrides `StaticTool::VIEW` (its default is `None`).
    let view = args.view.as_ref().map(|v| {
        quote_spanned! {v.span()=>
            const VIEW: ::core::option::Option<&'static str> =
                ::core::option::Option::Some(::surface::View::uri(&#v));
        }
    });
    let input = bespoke::input(params.args.as_ref());
    let descriptor = descriptor(item, args, params, output, &input.schema);
    let invoke = invoke(ident, params, output, &input);
    let companion = bespoke::companion(
        &item.vis,
        &tool,
        &format!("The bespoke tool [`{name}`]: hand it to a bundle (`.tool({tool})`)."),
    );
    let scope_check = bespoke::scope_check(client_ty, args.scope.as_ref());
    quote! {
        #item

        #scope_check

        #companion

        #[automatically_derived]
        impl ::surface::StaticTool for #tool {
            const NAME: &'static str = #name;
            #view
        }

        #[automatically_derived]
        impl ::surface::BespokeTool for #tool {
            type Client = #client_ty;

            #descriptor

            #invoke
        }
    }
}

/// `BespokeTool::descriptor`: a constant, which starts with the input's check and the render
/// check (each spanned at the user's token, see `checks`).
fn descriptor(
    item: &ItemFn,
    args: &ToolArgs,
    params: &Params,
    output: &Type,
    schema: &TokenStream,
) -> TokenStream {
    let name = item.sig.ident.unraw().to_string();
    let tool = names::tool(&item.sig.ident);
    let doc = doc_text(&item.attrs);
    let mutates = !args.read_only.is_present();
    let title = bespoke::title(args.title.as_ref());
    let task = match &args.task {
        None => quote!(::surface::TaskSupport::Never),
        Some(darling::util::Override::Inherit) => quote!(::surface::TaskSupport::Optional),
        Some(darling::util::Override::Explicit(_)) => quote!(::surface::TaskSupport::Required),
    };
    let scope = bespoke::scope(&params.client, args.scope.as_ref());
    let input_check = params.args.as_ref().map(checks::tool_input);
    let render_check = args.render.as_ref().map(|r| match r.to_string().as_str() {
        "audio" => checks::renders_audio(output, r.span()),
        _ => checks::renders_image(output, r.span()),
    });
    quote! {
        fn descriptor(&self) -> &'static ::surface::ToolDescriptor {
            const DESCRIPTOR: ::surface::ToolDescriptor = {
                #input_check
                #render_check
                ::surface::ToolDescriptor {
                    name: #name,
                    title: #title,
                    description: #doc,
                    mutates: #mutates,
                    input: #schema,
                    view: <#tool as ::surface::StaticTool>::VIEW,
                    task: #task,
                    scope: #scope,
                }
            };
            &DESCRIPTOR
        }
    }
}

/// `BespokeTool::invoke`: the checks, the decoded input, then the function's answer.
fn invoke(function: &Ident, params: &Params, output: &Type, input: &Input) -> TokenStream {
    let client_ty = &params.client;
    let Input { decode, pass, .. } = input;
    // The last argument is the cancellation token or the whole call context (`FromCall`).
    let (cancel_pass, cancel_unused) = if params.call {
        (
            quote!(, ::surface::__private::FromCall::from_call(cancel)),
            quote!(),
        )
    } else {
        (quote!(), quote!(let _ = cancel;))
    };
    // Every body that needs the input or output type to qualify starts with its check, spanned
    // at the user's type, so a type that does not qualify is reported once (see
    // `surface_struct::member_checks`).
    let input_check = params.args.as_ref().map(checks::tool_input);
    let output_check = checks::tool_result(output);
    // Spanned at the return type, like its check.
    let mut function = function.clone();
    function.set_span(output.span());
    let args = bespoke::pass(params, pass);
    let answer = quote_spanned! {output.span()=>
        ::surface::__private::tool_answer::<#output>(#function(#args #cancel_pass).await)
    };
    let body = if params.callable {
        quote! {
            ::surface::__private::FutureExt::boxed(async move {
                #input_check
                #output_check
                #decode
                #cancel_unused
                #answer
            })
        }
    } else {
        let never = bespoke::never();
        quote!(let _ = (args, client, cancel); #never)
    };
    quote! {
        fn invoke<'a>(
            &'a self,
            args: ::surface::__private::serde_json::Value,
            client: &'a #client_ty,
            cancel: ::surface::CancellationToken,
        ) -> ::surface::__private::BoxFuture<'a, ::core::result::Result<::surface::ToolOutput, ::surface::Failure>> {
            #body
        }
    }
}
