//! `#[tool]` on an `async fn`: a bespoke tool.
//!
//! Accepts `#[tool(mutates | read_only, title = "…", render = image | audio)]` on
//! `async fn name([args: A,] client: &C [, cancel: CancellationToken | ctx: ToolContext]) -> Result<T, E>`.
//! Pipeline: parse the attribute with darling and the signature with syn → validate → expand
//! the function unchanged plus a unit struct `NameTool` (`count` → `CountTool`) implementing
//! `BespokeTool<Client = C>` by calling it. A companion type, rather than turning the function
//! into a unit struct, keeps `count` an ordinary function and never shadows a `let count`
//! binding. A mistake in the attribute is reported and the tool still expands; a mistake in
//! the signature is reported and the function is emitted alone.

use crate::checks;
use crate::docs::{doc_attrs, doc_text};
use crate::errors::{Errors, unknown_word};
use crate::names;
use darling::FromMeta;
use darling::ast::NestedMeta;
use darling::util::Flag;
use proc_macro2::TokenStream;
use quote::{ToTokens, quote, quote_spanned};
use syn::ext::IdentExt;
use syn::spanned::Spanned;
use syn::{FnArg, Ident, ItemFn, LitStr, Meta, ReturnType, Type};

const WORDS: &[&str] = &["mutates", "read_only", "title", "render"];

#[derive(FromMeta, Default)]
struct ToolArgs {
    mutates: Flag,
    read_only: Flag,
    title: Option<LitStr>,
    render: Option<Ident>,
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
    let mut signature_ok = true;
    let sig = &item.sig;
    if sig.asyncness.is_none() {
        errors.at(sig.fn_token, "a tool must be an `async fn`");
        signature_ok = false;
    }
    let params = parse_params(&item, &mut errors);
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
    let output = match (params, output, signature_ok) {
        (Some(params), Some(output), true) => emit(&item, &args, &params, &output),
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
                "expected a word: `mutates`, `read_only`, `title = \"…\"` or `render = image | audio`",
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

struct Params {
    /// The input type, when the tool takes one.
    args: Option<Type>,
    /// The client type (behind the reference).
    client: Type,
    /// Whether the tool takes the cancellation token (or the call context).
    cancel: bool,
}

/// `([args: A,] client: &C [, cancel: CancellationToken])`, each mistake reported at its
/// parameter with the signature to write.
fn parse_params(item: &ItemFn, errors: &mut Errors) -> Option<Params> {
    let mut typed: Vec<&syn::PatType> = Vec::new();
    for a in &item.sig.inputs {
        match a {
            FnArg::Typed(t) => typed.push(t),
            FnArg::Receiver(r) => {
                errors.at(
                    r,
                    "a tool is a free function: it is handed its client instead of `self`",
                );
                return None;
            }
        }
    }
    // The last argument may be the cancellation token or the whole call context.
    let cancel = typed.last().is_some_and(|t| {
        last_segment_is(&t.ty, "CancellationToken") || last_segment_is(&t.ty, "ToolContext")
    });
    if cancel {
        typed.pop();
    }
    let (args, client) = match typed.as_slice() {
        [] => {
            errors.at(
                &item.sig.ident,
                "a tool is handed its client: write `async fn name(client: &OpsClient)` (with `args: A` before it if it takes input)",
            );
            return None;
        }
        [client] => (None, *client),
        [args, client] => (Some(*args), *client),
        [_, _, extra, ..] => {
            errors.at(
                extra,
                "a tool takes `(args, client, cancel)` at most: put this field in the args struct",
            );
            return None;
        }
    };
    // `(client: &C, args: A)`, two clients, args by reference: each one mistake, said once.
    if let Some(args) = args
        && let Type::Reference(r) = &*args.ty
    {
        let message = if !matches!(&*client.ty, Type::Reference(_)) {
            format!(
                "the input comes before the client: write `({}, {})`",
                param(client),
                param(args)
            )
        } else if last_segment_ends_with(&r.elem, "Client") {
            "a tool is handed one client: remove this parameter".to_owned()
        } else {
            format!(
                "a tool's input is decoded from JSON and owned: write `{}: {}`",
                args.pat.to_token_stream(),
                names::rust_name(&r.elem)
            )
        };
        errors.at(args, message);
        return None;
    }
    let client_ty = match &*client.ty {
        Type::Reference(r) if r.mutability.is_none() => (*r.elem).clone(),
        Type::Reference(r) => {
            errors.at(
                r,
                "the client is shared by concurrent calls: take it as `&`, not `&mut`",
            );
            return None;
        }
        other => {
            errors.at(
                other,
                format!("a tool borrows its client: write `&{}`", names::rust_name(other)),
            );
            return None;
        }
    };
    Some(Params {
        args: args.map(|a| (*a.ty).clone()),
        client: client_ty,
        cancel,
    })
}

/// `args: CountArgs`, as written.
fn param(p: &syn::PatType) -> String {
    format!("{}: {}", p.pat.to_token_stream(), names::rust_name(&p.ty))
}

/// Whether `ty` is a path whose last segment ends with `suffix` (`OpsClient`, `BundleClient`).
fn last_segment_ends_with(ty: &Type, suffix: &str) -> bool {
    matches!(ty, Type::Path(p) if p.path.segments.last().is_some_and(|s| s.ident.to_string().ends_with(suffix)))
}

/// Whether `ty` is a path whose last segment is `name`.
fn last_segment_is(ty: &Type, name: &str) -> bool {
    matches!(ty, Type::Path(p) if p.path.segments.last().is_some_and(|s| s.ident == name))
}

fn emit(item: &ItemFn, args: &ToolArgs, params: &Params, output: &Type) -> TokenStream {
    let vis = &item.vis;
    let ident = &item.sig.ident;
    let name = ident.unraw().to_string();
    let tool = names::tool(ident);
    let doc = doc_text(&item.attrs);
    let mutates = !args.read_only.is_present();
    let title = match &args.title {
        Some(t) => quote!(::core::option::Option::Some(#t)),
        None => quote!(::core::option::Option::None),
    };
    let client_ty = &params.client;
    let (input_schema, decode, args_pass) = match &params.args {
        Some(ty) => (
            quote_spanned!(ty.span()=> ::surface::__private::input_schema_of::<#ty>),
            quote_spanned!(ty.span()=> let args = ::surface::__private::decode_input::<#ty>(args)?;),
            quote!(args,),
        ),
        None => (
            quote!(::surface::__private::no_input_schema),
            quote!(let _ = args;),
            quote!(),
        ),
    };
    // The last argument is the cancellation token or the whole call context (`FromCall`).
    let cancel_pass = if params.cancel {
        quote!(, ::surface::__private::FromCall::from_call(cancel))
    } else {
        quote!()
    };
    let cancel_unused = if params.cancel {
        quote!()
    } else {
        quote!(let _ = cancel;)
    };
    // Every body that needs the input or output type to qualify starts with its check, spanned
    // at the user's type, so a type that does not qualify is reported once (see
    // `surface_struct::member_checks`).
    let input_check = params.args.as_ref().map(checks::tool_input);
    let output_check = checks::tool_result(output);
    let render_check = args.render.as_ref().map(|r| match r.to_string().as_str() {
        "audio" => checks::renders_audio(output, r.span()),
        _ => checks::renders_image(output, r.span()),
    });

    // Spanned at the return type, like its check.
    let mut function = ident.clone();
    function.set_span(output.span());
    let answer = quote_spanned! {output.span()=>
        ::surface::__private::tool_answer::<#output>(#function(#args_pass client #cancel_pass).await)
    };
    let struct_doc = doc_attrs(&format!(
        "The bespoke tool [`{name}`]: hand it to a bundle (`.tool({tool})`)."
    ));

    quote! {
        #item

        #struct_doc
        #[derive(Clone, Copy, Debug, Default)]
        #vis struct #tool;

        #[automatically_derived]
        impl ::surface::StaticTool for #tool {
            const NAME: &'static str = #name;
        }

        #[automatically_derived]
        impl ::surface::BespokeTool for #tool {
            type Client = #client_ty;

            fn descriptor(&self) -> &'static ::surface::ToolDescriptor {
                const DESCRIPTOR: ::surface::ToolDescriptor = {
                    #input_check
                    #render_check
                    ::surface::ToolDescriptor {
                        name: #name,
                        title: #title,
                        description: #doc,
                        mutates: #mutates,
                        input: #input_schema,
                    }
                };
                &DESCRIPTOR
            }

            fn invoke<'a>(
                &'a self,
                args: ::surface::__private::serde_json::Value,
                client: &'a #client_ty,
                cancel: ::surface::CancellationToken,
            ) -> ::surface::__private::BoxFuture<'a, ::core::result::Result<::surface::ToolOutput, ::surface::Failure>> {
                ::surface::__private::FutureExt::boxed(async move {
                    #input_check
                    #output_check
                    #decode
                    #cancel_unused
                    #answer
                })
            }
        }
    }
}
