//! `#[prompt]` on an `async fn`: a bespoke prompt.
//!
//! Accepts `#[prompt]` or `#[prompt(title = "…")]` on
//! `async fn name([args: A,] client: &C) -> Result<PromptAnswer, E>` and expands the function
//! unchanged plus a unit struct `NamePrompt` (`summary` → `SummaryPrompt`) implementing
//! `BespokePrompt<Client = C>`. The arguments a host is offered are `A`'s fields.

use crate::docs::{doc_attrs, doc_text};
use proc_macro2::TokenStream;
use quote::{ToTokens, quote, quote_spanned};
use syn::ext::IdentExt;
use syn::parse::Parser;
use syn::spanned::Spanned;
use syn::{FnArg, ItemFn, LitStr, ReturnType, Type};

pub fn expand(args: TokenStream, item: ItemFn) -> TokenStream {
    match build(args, &item) {
        Ok(tokens) => tokens,
        Err(e) => {
            let error = e.to_compile_error();
            quote! { #item #error }
        }
    }
}

/// `title = "…"`, or nothing.
fn parse_title(args: TokenStream) -> syn::Result<Option<LitStr>> {
    let mut title = None;
    let parser = syn::meta::parser(|meta| {
        if meta.path.is_ident("title") {
            title = Some(meta.value()?.parse::<LitStr>()?);
            Ok(())
        } else {
            Err(meta.error("unknown word in `#[prompt]`: expected `title = \"…\"`"))
        }
    });
    parser.parse2(args)?;
    Ok(title)
}

fn build(args: TokenStream, item: &ItemFn) -> syn::Result<TokenStream> {
    let title = parse_title(args)?;
    let sig = &item.sig;
    if sig.asyncness.is_none() {
        return Err(syn::Error::new(
            sig.fn_token.span(),
            "a prompt must be an `async fn`",
        ));
    }
    let mut typed = Vec::new();
    for a in &sig.inputs {
        match a {
            FnArg::Typed(t) => typed.push(t),
            FnArg::Receiver(r) => {
                return Err(syn::Error::new(
                    r.span(),
                    "a prompt is a free function: it is handed its client instead of `self`",
                ));
            }
        }
    }
    let (input, client) = match typed.as_slice() {
        [client] => (None, *client),
        [input, client] => (Some((*input.ty).clone()), *client),
        _ => {
            return Err(syn::Error::new(
                sig.ident.span(),
                "a prompt takes `([args: A,] client: &C)`: its arguments are A's fields",
            ));
        }
    };
    let Type::Reference(r) = &*client.ty else {
        return Err(syn::Error::new(
            client.ty.span(),
            "a prompt borrows its client: write `client: &OpsClient`",
        ));
    };
    let client_ty = &*r.elem;
    let ReturnType::Type(_, output) = &sig.output else {
        return Err(syn::Error::new(
            sig.ident.span(),
            "a prompt must return `Result<PromptAnswer, E>`",
        ));
    };
    let vis = &item.vis;
    let ident = &sig.ident;
    let name = ident.unraw().to_string();
    let prompt = crate::names::prompt(ident);
    let doc = doc_text(&item.attrs);
    let title = match &title {
        Some(t) => quote!(::core::option::Option::Some(#t)),
        None => quote!(::core::option::Option::None),
    };
    let (schema, decode, pass) = match &input {
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
    let struct_doc = doc_attrs(&format!(
        "The bespoke prompt [`{name}`]: hand it to a bundle member (`.prompt({prompt})`)."
    ));
    let output = output.to_token_stream();
    Ok(quote! {
        #item

        #struct_doc
        #[derive(Clone, Copy, Debug, Default)]
        #vis struct #prompt;

        #[automatically_derived]
        impl ::surface::prompt::BespokePrompt for #prompt {
            type Client = #client_ty;

            fn descriptor(&self) -> &'static ::surface::prompt::PromptDescriptor {
                const DESCRIPTOR: ::surface::prompt::PromptDescriptor = ::surface::prompt::PromptDescriptor {
                    name: #name,
                    title: #title,
                    description: #doc,
                    input: #schema,
                };
                &DESCRIPTOR
            }

            fn get<'a>(
                &'a self,
                args: ::surface::__private::serde_json::Value,
                client: &'a #client_ty,
            ) -> ::surface::__private::BoxFuture<'a, ::core::result::Result<::surface::prompt::PromptAnswer, ::surface::Failure>> {
                ::surface::__private::FutureExt::boxed(async move {
                    #decode
                    let answer: #output = #ident(#pass client).await;
                    ::surface::prompt::PromptResult::into_answer(answer)
                })
            }
        }
    })
}
