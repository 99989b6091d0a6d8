//! `#[surface]` on an impl block: procedures.
//!
//! Accepts an inherent impl whose `#[procedure("ns.verb")]` (or `#[procedure(ns = "ns")]`, the
//! method name being the verb) methods are `async fn(&self)` or `async fn(&self, input: T)`
//! returning `Result<O, E>`. Other items pass through untouched.
//! Pipeline: parse → validate (names, receivers, arity, asyncness, duplicates; every error
//! spanned at the user's token) → expand `SurfaceProcedures`, one hidden marker constant per
//! procedure for `expose!`, and the client's namespace types (`OpsProcedures`,
//! `OpsProcNamespace`, ...). On error the impl is still emitted without our attributes.

use crate::docs::doc_text;
use crate::errors::{Errors, unknown_word};
use crate::names;
use proc_macro2::{Span, TokenStream};
use quote::{ToTokens, quote, quote_spanned};
use std::collections::BTreeMap;
use syn::spanned::Spanned;
use syn::{FnArg, Ident, ImplItem, ItemImpl, LitStr, Meta, ReturnType, Type};

struct Procedure {
    name: String,
    namespace: String,
    verb: String,
    name_span: Span,
    method: Ident,
    input: Option<Type>,
    output: Type,
    doc: String,
}

pub fn expand(args: TokenStream, mut item: ItemImpl) -> TokenStream {
    let mut errors = Errors::new();
    if !args.is_empty() {
        errors.at(&args, "`#[surface]` on an impl block takes no arguments");
    }
    let surface = check_impl(&item, &mut errors);
    let procedures = parse(&mut item, &mut errors);
    let output = match (&surface, errors.is_empty()) {
        (Some(surface), true) => emit(&item, surface, &procedures),
        _ => item.to_token_stream(),
    };
    let compile_errors = errors.to_compile_errors();
    quote! { #output #compile_errors }
}

fn check_impl(item: &ItemImpl, errors: &mut Errors) -> Option<Ident> {
    if let Some((path, _)) = &item.trait_ {
        errors.at(
            path,
            "`#[surface]` goes on the inherent impl block of a surface, not on a trait impl",
        );
        return None;
    }
    if !item.generics.params.is_empty() {
        errors.at(
            &item.generics,
            "a surface cannot be generic: its spec is one constant",
        );
    }
    match &*item.self_ty {
        Type::Path(p) if p.qself.is_none() => p.path.segments.last().map(|s| s.ident.clone()),
        other => {
            errors.at(other, "`#[surface]` needs `impl SurfaceType { … }`");
            None
        }
    }
}

fn parse(item: &mut ItemImpl, errors: &mut Errors) -> Vec<Procedure> {
    let mut procedures: Vec<Procedure> = Vec::new();
    for impl_item in &mut item.items {
        let ImplItem::Fn(f) = impl_item else { continue };
        let Some(pos) = f.attrs.iter().position(|a| a.path().is_ident("procedure")) else {
            continue;
        };
        let attr = f.attrs.remove(pos);
        let Some((name, name_span)) = procedure_name(&attr, &f.sig.ident, errors) else {
            continue;
        };
        if let Err(why) = names::check_procedure_name(&name) {
            errors.push(syn::Error::new(name_span, why));
            continue;
        }
        if let Some(first) = procedures.iter().find(|p| p.name == name) {
            errors.push(syn::Error::new(
                name_span,
                format!(
                    "procedure \"{name}\" is declared twice (first by `{}`)",
                    first.method
                ),
            ));
        }
        let sig = &f.sig;
        if sig.asyncness.is_none() {
            errors.at(
                sig.fn_token,
                format!("procedure \"{name}\" must be an `async fn`"),
            );
        }
        let mut inputs = sig.inputs.iter();
        match inputs.next() {
            Some(FnArg::Receiver(r)) if matches!(r.kind, syn::ReceiverKind::Reference(_, _, None)) => {}
            Some(FnArg::Receiver(r)) => {
                errors.at(r, format!("procedure \"{name}\" takes `&self`: procedures run concurrently, so state lives in members or interior-mutable fields"));
            }
            _ => errors.at(&sig.ident, format!("procedure \"{name}\" takes `&self` first")),
        }
        let input = match inputs.next() {
            Some(FnArg::Typed(t)) => Some((*t.ty).clone()),
            _ => None,
        };
        for extra in inputs {
            errors.at(
                extra,
                format!("procedure \"{name}\" takes one input at most: put these fields in one input struct"),
            );
        }
        let output = match &sig.output {
            ReturnType::Type(_, ty) => (**ty).clone(),
            ReturnType::Default => {
                errors.at(
                    &sig.ident,
                    format!("procedure \"{name}\" must return `Result<T, E>`"),
                );
                continue;
            }
        };
        let (namespace, verb) = name.rsplit_once('.').expect("checked");
        procedures.push(Procedure {
            namespace: namespace.to_owned(),
            verb: verb.to_owned(),
            name: name.clone(),
            name_span,
            method: sig.ident.clone(),
            input,
            output,
            doc: doc_text(&f.attrs),
        });
    }
    procedures
}

/// `#[procedure("proc.kill")]` or `#[procedure(ns = "proc")]` (the verb is the method name).
fn procedure_name(attr: &syn::Attribute, method: &Ident, errors: &mut Errors) -> Option<(String, Span)> {
    let Meta::List(list) = &attr.meta else {
        errors.at(
            attr,
            "write `#[procedure(\"<ns>.<verb>\")]` or `#[procedure(ns = \"<ns>\")]`",
        );
        return None;
    };
    if let Ok(lit) = syn::parse2::<LitStr>(list.tokens.clone()) {
        return Some((lit.value(), lit.span()));
    }
    let mut found = None;
    let parsed = list.parse_nested_meta(|meta| {
        if meta.path.is_ident("ns") {
            let lit: LitStr = meta.value()?.parse()?;
            let verb = method.to_string();
            found = Some((
                format!("{}.{}", lit.value(), verb.trim_start_matches("r#")),
                lit.span(),
            ));
            Ok(())
        } else {
            let w = meta.path.get_ident().map(ToString::to_string).unwrap_or_default();
            Err(meta.error(unknown_word(&w, "`#[procedure]`", &["ns"])))
        }
    });
    errors.take(parsed)?;
    if found.is_none() {
        errors.at(
            attr,
            "write `#[procedure(\"<ns>.<verb>\")]` or `#[procedure(ns = \"<ns>\")]`",
        );
    }
    found
}

fn emit(item: &ItemImpl, surface: &Ident, procedures: &[Procedure]) -> TokenStream {
    let self_ty = &item.self_ty;
    let procedures_ty = names::procedures(surface);

    let assertions = procedures.iter().map(|p| {
        let output = &p.output;
        let input = p
            .input
            .as_ref()
            .map(|t| quote_spanned!(t.span()=> ::surface::__private::assert_input::<#t>();));
        quote_spanned! {output.span()=>
            #input
            ::surface::__private::assert_procedure_result::<#output>();
        }
    });

    let specs = procedures.iter().map(|p| {
        let (name, namespace, verb, doc) = (&p.name, &p.namespace, &p.verb, &p.doc);
        let input = match &p.input {
            Some(t) => {
                let rust = t.to_token_stream().to_string().replace(' ', "");
                quote!(::core::option::Option::Some(::surface::TypeSpec { rust: #rust, schema: ::surface::__private::schema_of::<#t> }))
            }
            None => quote!(::core::option::Option::None),
        };
        let output = &p.output;
        let rust = ok_type_name(output);
        quote! {
            ::surface::ProcedureSpec {
                name: #name,
                namespace: #namespace,
                verb: #verb,
                doc: #doc,
                input: #input,
                output: ::surface::TypeSpec { rust: #rust, schema: ::surface::__private::output_schema_of::<#output> },
            }
        }
    });

    let arms = procedures.iter().map(|p| {
        let name = &p.name;
        let method = &p.method;
        let call = match &p.input {
            Some(t) => quote! {
                let input = ::surface::__private::decode_input::<#t>(input)?;
                ::surface::__private::ProcedureResult::into_answer(Self::#method(self, input).await)
            },
            None => quote! {
                let _ = input;
                ::surface::__private::ProcedureResult::into_answer(Self::#method(self).await)
            },
        };
        quote! {
            #name => ::surface::__private::FutureExt::boxed(async move { #call }),
        }
    });

    let markers = procedures.iter().map(|p| {
        let marker = names::procedure_marker(&p.name, p.name_span);
        quote! {
            #[doc(hidden)]
            pub const #marker: ::surface::__private::kind::Procedure = ::surface::__private::kind::Procedure;
        }
    });

    // One client type per namespace, in first-declared order.
    let mut namespaces: BTreeMap<&str, Vec<&Procedure>> = BTreeMap::new();
    for p in procedures {
        namespaces.entry(&p.namespace).or_default().push(p);
    }
    let ns_accessors = namespaces.keys().map(|ns| {
        let ty = names::namespace(surface, ns);
        let method = names::method(ns, Span::call_site());
        let doc = format!("The procedures of namespace `{ns}`.");
        quote! {
            #[doc = #doc]
            pub fn #method(&self) -> #ty<'_> {
                #ty { dispatch: &*self.dispatch }
            }
        }
    });
    let ns_types = namespaces.iter().map(|(ns, procs)| {
        let ty = names::namespace(surface, ns);
        let doc = format!("The procedures of namespace `{ns}` of [`{surface}`].");
        let methods = procs.iter().map(|p| {
            let verb = names::method(&p.verb, p.method.span());
            let name = &p.name;
            let output = &p.output;
            let doc = if p.doc.is_empty() { format!("Calls `{name}`.") } else { p.doc.clone() };
            let answer = quote!(::core::result::Result<<#output as ::surface::__private::ProcedureResult>::Ok, ::surface::Failure>);
            match &p.input {
                Some(t) => quote! {
                    #[doc = #doc]
                    pub async fn #verb(&self, input: #t) -> #answer {
                        ::surface::call_typed(self.dispatch, #name, &input).await
                    }
                },
                None => quote! {
                    #[doc = #doc]
                    pub async fn #verb(&self) -> #answer {
                        ::surface::call_typed(self.dispatch, #name, &::surface::__private::serde_json::Map::new()).await
                    }
                },
            }
        });
        quote! {
            #[doc = #doc]
            pub struct #ty<'a> {
                dispatch: &'a dyn ::surface::Dispatch,
            }
            impl #ty<'_> {
                #(#methods)*
            }
        }
    });
    let procedures_doc = format!("The procedure namespaces of [`{surface}`], for its typed client.");

    quote! {
        #item

        const _: () = {
            #(#assertions)*
        };

        #[automatically_derived]
        impl ::surface::SurfaceProcedures for #self_ty {
            const PROCEDURES: &'static [::surface::ProcedureSpec] = &[#(#specs),*];

            fn call<'a>(
                &'a self,
                name: &'a str,
                input: ::surface::__private::serde_json::Value,
            ) -> ::surface::__private::BoxFuture<'a, ::core::result::Result<::surface::__private::serde_json::Value, ::surface::Failure>> {
                match name {
                    #(#arms)*
                    _ => ::surface::__private::FutureExt::boxed(::core::future::ready(::core::result::Result::Err(
                        ::surface::__private::unknown_procedure(<Self as ::surface::SurfaceMembers>::NAME, name),
                    ))),
                }
            }
        }

        #[allow(non_upper_case_globals)]
        impl #self_ty {
            #(#markers)*
        }

        #[doc = #procedures_doc]
        #[derive(Clone)]
        pub struct #procedures_ty {
            dispatch: ::surface::__private::Arc<dyn ::surface::Dispatch>,
        }

        impl #procedures_ty {
            #[doc(hidden)]
            pub fn __from_dispatch(dispatch: ::surface::__private::Arc<dyn ::surface::Dispatch>) -> Self {
                #procedures_ty { dispatch }
            }
            #[doc(hidden)]
            pub fn __dispatch(&self) -> &::surface::__private::Arc<dyn ::surface::Dispatch> {
                &self.dispatch
            }
            #(#ns_accessors)*
        }

        #(#ns_types)*
    }
}

/// `Result<Process, Infallible>` → `"Process"`, for the spec's readable type name.
fn ok_type_name(output: &Type) -> String {
    if let Type::Path(p) = output
        && let Some(last) = p.path.segments.last()
        && let syn::PathArguments::AngleBracketed(args) = &last.arguments
        && let Some(syn::GenericArgument::Type(ok)) = args.args.first()
    {
        return ok.to_token_stream().to_string().replace(' ', "");
    }
    output.to_token_stream().to_string().replace(' ', "")
}
