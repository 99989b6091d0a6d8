//! `#[tool]` on an `async fn`: a bespoke tool.
//!
//! Accepts `#[tool(mutates | read_only, title = "…", render = image)]` on
//! `async fn name([args: A,] client: &C [, cancel: CancellationToken]) -> Result<T, E>`.
//! Pipeline: parse the attribute with darling and the signature with syn → validate → expand
//! the function unchanged plus a unit struct `NameTool` (`count` → `CountTool`) implementing
//! `BespokeTool<Client = C>` by calling it. A companion type, rather than turning the function
//! into a unit struct, keeps `count` an ordinary function and never shadows a `let count`
//! binding. A mistake in the attribute is reported and the tool still expands; a mistake in
//! the signature is reported and the function is emitted alone.

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
use syn::{FnArg, Ident, ItemFn, LitStr, ReturnType, Type};

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
    {
        errors.at(render, unknown_word(&render.to_string(), "`render`", &["image"]));
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
    // Our own message for an unknown word lists every valid one; darling parses the rest.
    let mut known = Vec::new();
    for n in nested {
        match &n {
            NestedMeta::Meta(m) if !m.path().get_ident().is_some_and(|i| WORDS.iter().any(|w| i == w)) => {
                let w = m.path().to_token_stream().to_string();
                errors.at(m.path(), unknown_word(&w, "`#[tool]`", WORDS));
            }
            _ => known.push(n),
        }
    }
    ToolArgs::from_list(&known).unwrap_or_else(|e| {
        errors.darling(e);
        ToolArgs::default()
    })
}

struct Params {
    /// The input type, when the tool takes one.
    args: Option<Type>,
    /// The client type (behind the reference).
    client: Type,
    /// Whether the tool takes the cancellation token.
    cancel: bool,
}

fn parse_params(item: &ItemFn, errors: &mut Errors) -> Option<Params> {
    let typed: Vec<&syn::PatType> = item
        .sig
        .inputs
        .iter()
        .filter_map(|a| match a {
            FnArg::Typed(t) => Some(t),
            FnArg::Receiver(r) => {
                errors.at(
                    r,
                    "a tool is a free function: it is handed its client instead of `self`",
                );
                None
            }
        })
        .collect();
    let client_at = typed.iter().position(|t| matches!(&*t.ty, Type::Reference(_)));
    let Some(at) = client_at else {
        errors.at(
            &item.sig.ident,
            "a tool takes its client by reference: `client: &OpsClient`",
        );
        return None;
    };
    if at > 1 {
        errors.at(typed[1], "a tool takes one input at most, before its client");
        return None;
    }
    if typed.len() > at + 2 {
        errors.at(typed[at + 2], "a tool takes `(args, client, cancel)` at most");
        return None;
    }
    let Type::Reference(r) = &*typed[at].ty else {
        unreachable!()
    };
    Some(Params {
        args: (at == 1).then(|| (*typed[0].ty).clone()),
        client: (*r.elem).clone(),
        cancel: typed.len() > at + 1,
    })
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
    let cancel_pass = if params.cancel { quote!(, cancel) } else { quote!() };
    let cancel_unused = if params.cancel {
        quote!()
    } else {
        quote!(let _ = cancel;)
    };
    // Every body that needs the input or output type to qualify starts with its check, spanned
    // at the user's type, so a type that does not qualify is reported once (see
    // `surface_struct::member_checks`).
    let input_check = params
        .args
        .as_ref()
        .map(|ty| quote_spanned!(ty.span()=> ::surface::__private::assert_input::<#ty>();));
    let output_check = quote_spanned!(output.span()=> ::surface::__private::assert_tool_result::<#output>(););
    let render_check = args
        .render
        .as_ref()
        .map(|r| quote_spanned!(r.span()=> ::surface::__private::assert_renders_image::<#output>();));

    // Spanned at the return type, like its check.
    let mut function = ident.clone();
    function.set_span(output.span());
    let answer = quote_spanned! {output.span()=>
        ::surface::__private::ToolResult::into_output(#function(#args_pass client #cancel_pass).await)
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
