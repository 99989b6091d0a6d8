//! What `#[tool]` and `#[prompt]` share: both annotate
//! `async fn name([args: A,] client: &C [, last])` and expand the function unchanged plus a
//! companion unit struct (`count` → `CountTool`, `summary` → `SummaryPrompt`) implementing a
//! trait by calling it. The signature is parsed into [`Params`] once, each mistake reported at
//! its own parameter with the signature to write; the input's schema and decoding, the title
//! and the companion struct are emitted once.

use crate::errors::Errors;
use crate::names;
use proc_macro2::TokenStream;
use quote::{ToTokens, quote, quote_spanned};
use syn::spanned::Spanned;
use syn::{FnArg, Ident, ItemFn, LitStr, Type, Visibility};

/// What the function declares, for the messages.
#[derive(Clone, Copy)]
pub struct Kind {
    /// `tool` or `prompt`.
    pub word: &'static str,
    /// Whether a last `CancellationToken` or `ToolContext` parameter is accepted.
    pub takes_call: bool,
}

/// The signature, validated.
pub struct Params {
    /// The input type, when it takes one.
    pub args: Option<Type>,
    /// The client type (behind the reference).
    pub client: Type,
    /// Whether it takes the cancellation token (or the call context) last.
    pub call: bool,
}

/// An `async fn` (reported at `fn` if not).
pub fn check_async(item: &ItemFn, kind: Kind, errors: &mut Errors) -> bool {
    let ok = item.sig.asyncness.is_some();
    if !ok {
        errors.at(
            item.sig.fn_token,
            format!("a {} must be an `async fn`", kind.word),
        );
    }
    ok
}

/// `([args: A,] client: &C [, cancel: CancellationToken])`, each mistake reported at its
/// parameter with the signature to write.
pub fn parse_params(item: &ItemFn, kind: Kind, errors: &mut Errors) -> Option<Params> {
    let word = kind.word;
    let mut typed: Vec<&syn::PatType> = Vec::new();
    for a in &item.sig.inputs {
        match a {
            FnArg::Typed(t) => typed.push(t),
            FnArg::Receiver(r) => {
                errors.at(
                    r,
                    format!("a {word} is a free function: it is handed its client instead of `self`"),
                );
                return None;
            }
        }
    }
    // The last argument may be the cancellation token or the whole call context.
    let call = kind.takes_call
        && typed.last().is_some_and(|t| {
            last_segment_is(&t.ty, "CancellationToken") || last_segment_is(&t.ty, "ToolContext")
        });
    if call {
        typed.pop();
    }
    let (args, client) = match typed.as_slice() {
        [] => {
            errors.at(
                &item.sig.ident,
                format!("a {word} is handed its client: write `async fn name(client: &OpsClient)` (with `args: A` before it if it takes input)"),
            );
            return None;
        }
        [client] => (None, *client),
        [args, client] => (Some(*args), *client),
        [_, _, extra, ..] => {
            let most = if kind.takes_call {
                "(args, client, cancel)"
            } else {
                "(args, client)"
            };
            errors.at(
                extra,
                format!("a {word} takes `{most}` at most: put this field in the args struct"),
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
            format!("a {word} is handed one client: remove this parameter")
        } else {
            format!(
                "a {word}'s input is decoded from JSON and owned: write `{}: {}`",
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
                format!(
                    "a {word} borrows its client: write `&{}`",
                    names::rust_name(other)
                ),
            );
            return None;
        }
    };
    Some(Params {
        args: args.map(|a| (*a.ty).clone()),
        client: client_ty,
        call,
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

/// How the input reaches the function: its advertised schema, the statement decoding `args`,
/// and the argument passed (`args,` or nothing).
pub struct Input {
    pub schema: TokenStream,
    pub decode: TokenStream,
    pub pass: TokenStream,
}

/// The [`Input`] of a function taking `args` (spanned at its type, where a type that does
/// not qualify is reported).
pub fn input(args: Option<&Type>) -> Input {
    match args {
        Some(ty) => Input {
            schema: quote_spanned!(ty.span()=> ::surface::__private::input_schema_of::<#ty>),
            decode: quote_spanned!(ty.span()=> let args = ::surface::__private::decode_input::<#ty>(args)?;),
            pass: quote!(args,),
        },
        None => Input {
            schema: quote!(::surface::__private::no_input_schema),
            decode: quote!(let _ = args;),
            pass: quote!(),
        },
    }
}

/// `Some("…")` or `None`, for a descriptor's title.
pub fn title(title: Option<&LitStr>) -> TokenStream {
    match title {
        Some(t) => quote!(::core::option::Option::Some(#t)),
        None => quote!(::core::option::Option::None),
    }
}

/// The companion unit struct, documented as what to hand it to.
pub fn companion(vis: &Visibility, ident: &Ident, doc: &str) -> TokenStream {
    let doc = crate::docs::doc_attrs(doc);
    quote! {
        #doc
        #[derive(Clone, Copy, Debug, Default)]
        #vis struct #ident;
    }
}
