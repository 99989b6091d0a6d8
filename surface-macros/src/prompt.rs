//! `#[prompt]` on an `async fn`: a bespoke prompt.
//!
//! Accepts `#[prompt]` or `#[prompt(title = "…")]` on
//! `async fn name([args: A,] client: &C) -> Result<PromptAnswer, E>`.
//! Pipeline: parse the attribute, and the signature as `#[tool]` does (`bespoke`, every
//! mistake at its parameter) → expand the function unchanged plus a unit struct `NamePrompt`
//! (`summary` → `SummaryPrompt`) implementing `BespokePrompt<Client = C>`. The arguments a host
//! is offered are `A`'s fields. A mistake in the attribute is reported and the prompt still
//! expands; a mistake in the signature is reported and the function is emitted alone.

use crate::bespoke::{self, Input, Kind, Params};
use crate::checks;
use crate::docs::doc_text;
use crate::errors::{Errors, unknown_word};
use crate::names;
use proc_macro2::TokenStream;
use quote::{ToTokens, quote};
use syn::ext::IdentExt;
use syn::parse::Parser;
use syn::{ItemFn, LitStr, ReturnType, Type};

const KIND: Kind = Kind {
    word: "prompt",
    takes_call: false,
};

pub fn expand(args: TokenStream, item: ItemFn) -> TokenStream {
    let mut errors = Errors::new();
    let title = parse_title(args, &mut errors);
    let signature_ok = bespoke::check_async(&item, KIND, &mut errors);
    let params = bespoke::parse_params(&item, KIND, &mut errors);
    let name = item.sig.ident.unraw().to_string();
    if doc_text(&item.attrs).is_empty() {
        // As for a tool: reported, and the prompt still expands.
        errors.at(
            &item.sig.ident,
            format!("a prompt needs a doc comment: agents read it as the prompt's description; write `/// What {name} asks.` above the function"),
        );
    }
    let answers = match &item.sig.output {
        ReturnType::Type(_, ty) => check_output(ty, &mut errors),
        ReturnType::Default => {
            errors.at(
                &item.sig.ident,
                format!("a prompt returns its answer: write `async fn {name}(…) -> Result<PromptAnswer, surface::Failure>`"),
            );
            false
        }
    };
    let compile_errors = errors.to_compile_errors();
    // A mistake in the signature still emits the companion (its body never built into a
    // program), so code naming it does not fail too.
    let output = match params {
        Some(mut params) => {
            params.callable &= signature_ok && answers;
            emit(&item, title.as_ref(), &params)
        }
        None => item.to_token_stream(),
    };
    quote! { #output #compile_errors }
}

/// `title = "…"`, or nothing (a mistake is reported and the prompt has no title).
fn parse_title(args: TokenStream, errors: &mut Errors) -> Option<LitStr> {
    let mut title = None;
    let parser = syn::meta::parser(|meta| {
        if meta.path.is_ident("title") {
            let value = meta.value()?;
            title =
                Some(value.parse::<LitStr>().map_err(|e| {
                    syn::Error::new(e.span(), "the title is a string: write `title = \"…\"`")
                })?);
            Ok(())
        } else {
            let w = meta.path.get_ident().map(ToString::to_string).unwrap_or_default();
            Err(meta.error(unknown_word(&w, "`#[prompt]`", &["title"])))
        }
    });
    errors.take(parser.parse2(args));
    title
}

/// Whether `ty` is written `Result<PromptAnswer, E>`; else reported at the part to change.
fn check_output(ty: &Type, errors: &mut Errors) -> bool {
    let last = match ty {
        Type::Path(p) => p.path.segments.last(),
        _ => None,
    };
    match last {
        Some(last) if last.ident == "Result" => {
            if let syn::PathArguments::AngleBracketed(a) = &last.arguments
                && let Some(syn::GenericArgument::Type(ok)) = a.args.first()
                && !matches!(ok, Type::Path(p) if p.path.segments.last().is_some_and(|s| s.ident == "PromptAnswer"))
            {
                errors.at(
                    ok,
                    format!(
                        "a prompt answers with a `PromptAnswer`: write `PromptAnswer` in place of `{}` (build it with `PromptAnswer::new().user_text(…)`)",
                        names::rust_name(ok)
                    ),
                );
                return false;
            }
            true
        }
        _ => {
            errors.at(
                ty,
                format!(
                    "a prompt returns `Result<PromptAnswer, E>`: write `Result<PromptAnswer, surface::Failure>` in place of `{}` and answer `Ok(…)`",
                    names::rust_name(ty)
                ),
            );
            false
        }
    }
}

fn emit(item: &ItemFn, title: Option<&LitStr>, params: &Params) -> TokenStream {
    let vis = &item.vis;
    let ident = &item.sig.ident;
    let name = ident.unraw().to_string();
    let prompt = crate::names::prompt(ident);
    let doc = doc_text(&item.attrs);
    let title = bespoke::title(title);
    let client_ty = &params.client;
    let Input { schema, decode, pass } = bespoke::input(params.args.as_ref());
    // The input's check first, spanned at its type (see `checks`).
    let input_check = params.args.as_ref().map(checks::tool_input);
    let args = bespoke::pass(params, &pass);
    let body = if params.callable {
        quote! {
            ::surface::__private::FutureExt::boxed(async move {
                #input_check
                #decode
                ::surface::prompt::PromptResult::into_answer(#ident(#args).await)
            })
        }
    } else {
        let never = bespoke::never();
        quote!(let _ = (args, client); #never)
    };
    let companion = bespoke::companion(
        vis,
        &prompt,
        &format!("The bespoke prompt [`{name}`]: hand it to a bundle member (`.prompt({prompt})`)."),
    );
    quote! {
        #item

        #companion

        #[automatically_derived]
        impl ::surface::prompt::BespokePrompt for #prompt {
            type Client = #client_ty;

            fn descriptor(&self) -> &'static ::surface::prompt::PromptDescriptor {
                const DESCRIPTOR: ::surface::prompt::PromptDescriptor = {
                    #input_check
                    ::surface::prompt::PromptDescriptor {
                        name: #name,
                        title: #title,
                        description: #doc,
                        input: #schema,
                    }
                };
                &DESCRIPTOR
            }

            fn get<'a>(
                &'a self,
                args: ::surface::__private::serde_json::Value,
                client: &'a #client_ty,
            ) -> ::surface::__private::BoxFuture<'a, ::core::result::Result<::surface::prompt::PromptAnswer, ::surface::Failure>> {
                #body
            }
        }
    }
}
