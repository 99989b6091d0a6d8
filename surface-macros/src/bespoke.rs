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
    /// Whether the input comes before the client as written (reported when not).
    pub args_first: bool,
    /// Whether the function can be called as written (else a mistake was reported, and the
    /// companion is still emitted, so code naming it does not fail too, with a body that
    /// is never compiled into a program).
    pub callable: bool,
}

/// An `async fn` (reported at `fn` if not).
pub fn check_async(item: &ItemFn, kind: Kind, errors: &mut Errors) -> bool {
    let ok = item.sig.asyncness.is_some();
    if !ok {
        errors.at(
            item.sig.fn_token,
            format!(
                "a {} must be an `async fn`: write `async fn {}`",
                kind.word, item.sig.ident
            ),
        );
    }
    ok
}

/// `([args: A,] client: &C [, cancel: CancellationToken])`, each mistake reported at the
/// parameter to change with the signature to write. `None` when no client can be read.
pub fn parse_params(item: &ItemFn, kind: Kind, errors: &mut Errors) -> Option<Params> {
    let word = kind.word;
    let mut callable = true;
    let mut typed: Vec<&syn::PatType> = Vec::new();
    for a in &item.sig.inputs {
        match a {
            FnArg::Typed(t) => typed.push(t),
            // Said at the receiver; the function is emitted alone (a companion cannot be
            // declared inside the `impl` block it most likely sits in).
            FnArg::Receiver(r) => {
                let receiver = match &r.kind {
                    syn::ReceiverKind::Reference(_, _, Some(_)) => "&mut self",
                    syn::ReceiverKind::Reference(..) => "&self",
                    _ => "self",
                };
                errors.at(
                    r,
                    format!("a {word} is a free function, handed its client: remove `{receiver}` and move the function out of the `impl` block"),
                );
                return None;
            }
        }
    }
    // The cancellation token or the whole call context: last, or reported where it is.
    let is_call = |t: &syn::PatType| {
        last_segment_is(&t.ty, "CancellationToken") || last_segment_is(&t.ty, "ToolContext")
    };
    let mut call = false;
    if kind.takes_call
        && let Some(at) = typed.iter().position(|t| is_call(t))
    {
        let token = typed.remove(at);
        call = true;
        if at != typed.len() {
            // The rest in the order to write: the input before the client.
            let clientish = |t: &&syn::PatType| is_client(&t.ty) || last_segment_ends_with(&t.ty, "Client");
            let rest: Vec<String> = typed
                .iter()
                .filter(|t| !clientish(t))
                .chain(typed.iter().filter(|t| clientish(t)))
                .map(|t| param(t))
                .collect();
            errors.at(
                token,
                format!(
                    "the {} comes last: write `({}, {})`",
                    if last_segment_is(&token.ty, "ToolContext") {
                        "call context"
                    } else {
                        "cancellation token"
                    },
                    rest.join(", "),
                    param(token)
                ),
            );
            callable = false;
        }
    }
    // The client: the first `&…Client` (or `…Client`, or reference), else the last parameter.
    let client_at = typed
        .iter()
        .position(|t| is_client(&t.ty))
        .or_else(|| typed.iter().position(|t| last_segment_ends_with(&t.ty, "Client")))
        .or_else(|| typed.iter().position(|t| matches!(&*t.ty, Type::Reference(_))))
        .or_else(|| typed.len().checked_sub(1));
    let Some(client_at) = client_at else {
        errors.at(
            &item.sig.ident,
            format!("a {word} is handed its client: write `async fn name(client: &OpsClient)` (with `args: A` before it if it takes input)"),
        );
        return None;
    };
    let client = typed[client_at];
    let others: Vec<&syn::PatType> = typed
        .iter()
        .enumerate()
        .filter(|(i, _)| *i != client_at)
        .map(|(_, t)| *t)
        .collect();
    // A second client, or a second input: reported at that parameter.
    for extra in others.iter().skip(1) {
        let message = if is_client(&extra.ty) {
            format!("a {word} is handed one client: remove this parameter")
        } else {
            let most = if kind.takes_call {
                "(args, client, cancel)"
            } else {
                "(args, client)"
            };
            format!(
                "a {word} takes `{most}` at most: put `{}` in the args struct",
                extra.pat.to_token_stream()
            )
        };
        errors.at(extra, message);
        callable = false;
    }
    let mut args = others.first().copied();
    if let Some(a) = args
        && is_client(&a.ty)
    {
        errors.at(a, format!("a {word} is handed one client: remove this parameter"));
        callable = false;
        args = None;
    }
    // `(client: &C, args: A)`: reported at the input, which moves; the function is still
    // called in the order written.
    let args_first = args.is_none_or(|a| typed.iter().position(|t| std::ptr::eq(*t, a)) < Some(client_at));
    if let Some(a) = args
        && !args_first
        && callable
    {
        errors.at(
            a,
            format!(
                "the input comes before the client: write `({}, {})`",
                param(a),
                param(client)
            ),
        );
    }
    let args_ty = args.map(|a| match &*a.ty {
        Type::Reference(r) => {
            let (written, owned) = names::owned(&r.elem);
            errors.at(
                &a.ty,
                format!(
                    "a {word}'s input is decoded from JSON and owned: take it by value, `{}: {written}`",
                    a.pat.to_token_stream(),
                ),
            );
            callable = false;
            owned
        }
        other => other.clone(),
    });
    let client_ty = match &*client.ty {
        Type::Reference(r) if r.mutability.is_none() => (*r.elem).clone(),
        Type::Reference(r) => {
            errors.at(
                r,
                format!(
                    "the client is shared by concurrent calls: write `&{}`, not `&mut`",
                    names::rust_name(&r.elem)
                ),
            );
            callable = false;
            (*r.elem).clone()
        }
        other => {
            // `Arc<OpsClient>`: the client itself is what is borrowed.
            let client = names::pointee(other).unwrap_or_else(|| other.clone());
            errors.at(
                other,
                format!(
                    "a {word} borrows its client: write `&{}`",
                    names::rust_name(&client)
                ),
            );
            callable = false;
            client
        }
    };
    Some(Params {
        args: args_ty,
        client: client_ty,
        call,
        args_first,
        callable,
    })
}

/// Whether `ty` is a client taken by reference (`&OpsClient`).
fn is_client(ty: &Type) -> bool {
    matches!(ty, Type::Reference(r) if last_segment_ends_with(&r.elem, "Client"))
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

/// A descriptor's scope: `None`, or the scope `name` of the client's surface.
pub fn scope(client: &Type, name: Option<&Ident>) -> TokenStream {
    let Some(name) = name else {
        return quote!(::core::option::Option::None);
    };
    let name_str = name.to_string();
    let surface = quote_spanned!(name.span()=> <#client as ::surface::SurfaceClient>::Surface);
    quote_spanned! {name.span()=>
        ::surface::__private::keys::scope_named(
            <#surface as ::surface::__private::keys::SurfaceScopes>::SCOPES,
            #name_str,
        )
    }
}

/// The lookup of `scope = name` in the client's surface's `scopes!` declaration at compile
/// time, as an item of its own beside the function (so the error names no generated type): an
/// undeclared name fails there, at the name, with the closest declared one.
pub fn scope_check(client: &Type, name: Option<&Ident>) -> Option<TokenStream> {
    let name = name?;
    let name_str = name.to_string();
    let surface = quote_spanned!(name.span()=> <#client as ::surface::SurfaceClient>::Surface);
    Some(quote_spanned! {name.span()=>
        const _: () = if let ::core::option::Option::Some(why) = ::surface::__private::keys::scope_problem(
            <#surface as ::surface::SurfaceMembers>::NAME,
            <#surface as ::surface::__private::keys::SurfaceScopes>::NAMES,
            #name_str,
        ) {
            ::core::panic!("{}", why.as_str())
        };
    })
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

/// The body of a companion whose function cannot be called as written (a mistake was
/// reported, so the build fails and this never runs): a future of the expected type.
pub fn never() -> TokenStream {
    quote!(::surface::__private::FutureExt::boxed(::core::future::pending()))
}

/// `args, client` in the order the function takes them (reported when it is not this one).
pub fn pass(params: &Params, args: &TokenStream) -> TokenStream {
    if args.is_empty() {
        quote!(client)
    } else if params.args_first {
        quote!(#args client)
    } else {
        quote!(client, args)
    }
}
