//! `#[surface]` on an impl block: procedures.
//!
//! Accepts an inherent impl whose `#[procedure("ns.verb")]` (or `#[procedure(ns = "ns")]`, the
//! method name being the verb) methods are `async fn(&self)` or `async fn(&self, input: T)`
//! returning `Result<O, E>`. Other items pass through untouched.
//! Pipeline: parse → validate (names, receivers, arity, asyncness, duplicates; every error
//! spanned at the user's token) → expand `SurfaceProcedures`, the hidden
//! `Ops::__SURFACE_PROCEDURES` whose fields `expose!` checks keys against, the client's
//! namespaces (`OpsProcedures::proc()` → `OpsProcNamespace`).
//! A procedure with a mistake is reported and left out of the spec, the dispatch and the client
//! (but keeps its `expose!` key when its name is valid), so one mistake gives one error. Only a
//! mistake in the impl block itself leaves the block emitted alone.

use crate::docs::{doc_attrs, doc_text};
use crate::errors::{Errors, unknown_word};
use crate::names;
use proc_macro2::{Span, TokenStream};
use quote::{ToTokens, quote, quote_spanned};
use std::collections::BTreeMap;
use syn::spanned::Spanned;
use syn::{FnArg, Ident, ImplItem, ItemImpl, LitStr, Meta, Path, ReturnType, Type};

struct Procedure {
    name: String,
    namespace: String,
    verb: String,
    name_span: Span,
    method: Ident,
    input: Option<Type>,
    output: Type,
    doc: String,
    /// Whether its signature is right (else it was reported and only its key is emitted).
    valid: bool,
}

pub fn expand(args: TokenStream, mut item: ItemImpl) -> TokenStream {
    let mut errors = Errors::new();
    if !args.is_empty() {
        errors.at(&args, "`#[surface]` on an impl block takes no arguments");
    }
    let surface = check_impl(&item, &mut errors);
    let procedures = parse(&mut item, &mut errors);
    let output = match &surface {
        Some(surface) => {
            check_namespaces(
                &surface.segments.last().expect("a path").ident,
                &procedures,
                &mut errors,
            );
            emit(&item, surface, &procedures)
        }
        None => item.to_token_stream(),
    };
    let compile_errors = errors.to_compile_errors();
    quote! { #output #compile_errors }
}

/// The path of the surface type (`Ops`, `super::Ops`), or `None` after reporting why not.
fn check_impl(item: &ItemImpl, errors: &mut Errors) -> Option<Path> {
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
        return None;
    }
    match &*item.self_ty {
        Type::Path(p)
            if p.qself.is_none() && p.path.segments.last().is_some_and(|s| s.arguments.is_none()) =>
        {
            Some(p.path.clone())
        }
        other => {
            errors.at(other, "`#[surface]` needs `impl SurfaceType { … }`");
            None
        }
    }
}

/// Two namespaces whose client types or methods would share a name (`a.b` and `a_b`).
fn check_namespaces(surface: &Ident, procedures: &[Procedure], errors: &mut Errors) {
    let mut seen: BTreeMap<String, &str> = BTreeMap::new();
    for p in procedures {
        let ty = names::namespace(surface, &p.namespace).to_string();
        match seen.get(&ty) {
            Some(other) if *other != p.namespace => errors.push(syn::Error::new(
                p.name_span,
                format!(
                    "namespaces `{}` and `{other}` would share the client type `{ty}`: rename one",
                    p.namespace
                ),
            )),
            _ => {
                seen.insert(ty, &p.namespace);
            }
        }
    }
}

/// `Ops` + `OpsProcedures` → the path of `OpsProcedures` as seen from this impl block
/// (`super::Ops` gives `super::OpsProcedures`), spanned at the attribute: if the struct lacks
/// `#[surface]`, rustc says so there rather than suggesting a rename of the user's `Ops`.
fn sibling(surface: &Path, ident: Ident) -> Path {
    let mut path = surface.clone();
    path.segments.last_mut().expect("a path").ident = ident;
    for segment in &mut path.segments {
        segment.ident.set_span(Span::call_site());
    }
    path
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
            continue;
        }
        let sig = &f.sig;
        let mut valid = true;
        if sig.asyncness.is_none() {
            errors.at(
                sig.fn_token,
                format!("procedure \"{name}\" must be an `async fn`"),
            );
            valid = false;
        }
        let mut inputs = sig.inputs.iter();
        match inputs.next() {
            Some(FnArg::Receiver(r)) if matches!(r.kind, syn::ReceiverKind::Reference(_, _, None)) => {}
            Some(FnArg::Receiver(r)) => {
                errors.at(r, format!("procedure \"{name}\" takes `&self`: procedures run concurrently, so state lives in members or interior-mutable fields"));
                valid = false;
            }
            _ => {
                errors.at(&sig.ident, format!("procedure \"{name}\" takes `&self` first"));
                valid = false;
            }
        }
        let input = match inputs.next() {
            Some(FnArg::Typed(t)) => Some((*t.ty).clone()),
            _ => None,
        };
        let extra: Vec<&FnArg> = inputs.collect();
        if !extra.is_empty() {
            errors.at(
                quote!(#(#extra),*),
                format!("procedure \"{name}\" takes one input at most: put these fields in one input struct"),
            );
            valid = false;
        }
        let output = match &sig.output {
            ReturnType::Type(_, ty) => (**ty).clone(),
            ReturnType::Default => {
                errors.at(
                    &sig.ident,
                    format!("procedure \"{name}\" must return `Result<T, E>`"),
                );
                valid = false;
                syn::parse_quote!(())
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
            valid,
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

/// The checks of one procedure's types, each spanned at the user's type (see
/// `surface_struct::member_checks`: every body that needs them starts with them, so a type that does
/// not qualify is reported once).
fn procedure_checks(p: &Procedure) -> TokenStream {
    let output = &p.output;
    let input = p
        .input
        .as_ref()
        .map(|t| quote_spanned!(t.span()=> ::surface::__private::assert_input::<#t>();));
    let output = quote_spanned!(output.span()=> ::surface::__private::assert_procedure_result::<#output>(););
    quote!(#input #output)
}

/// The success type of a procedure: `T` of `Result<T, E>` when written so, else the projection
/// `<R as ProcedureResult>::Ok` with the bounds the client method needs as where-clauses (the
/// `for<'x>` keeps rustc from checking them where the method is declared: a wrong `R` is then
/// reported once, by its check, and the method merely cannot be called).
fn ok_type(output: &Type) -> (TokenStream, Option<TokenStream>) {
    if let Type::Path(p) = output
        && let Some(last) = p.path.segments.last()
        && let syn::PathArguments::AngleBracketed(args) = &last.arguments
        && let Some(syn::GenericArgument::Type(ok)) = args.args.first()
    {
        return (ok.to_token_stream(), None);
    }
    let ok = quote!(<#output as ::surface::__private::ProcedureResult>::Ok);
    let bound = quote! {
        where
            for<'x> #output: ::surface::__private::ProcedureResult,
            for<'x> #ok: ::surface::__private::serde::de::DeserializeOwned,
    };
    (ok, Some(bound))
}

fn emit(item: &ItemImpl, surface: &Path, procedures: &[Procedure]) -> TokenStream {
    let self_ty = &item.self_ty;
    let surface_ident = &surface.segments.last().expect("a path").ident;
    let procedures_ty = sibling(surface, names::procedures(surface_ident));
    let namespaces_keys = names::namespaces_keys(surface_ident);
    let procedures_const = Ident::new(names::PROCEDURES_CONST, Span::call_site());
    let valid: Vec<&Procedure> = procedures.iter().filter(|p| p.valid).collect();
    let surface_name = surface_ident.to_string();

    let checks: Vec<TokenStream> = valid.iter().map(|p| procedure_checks(p)).collect();

    let specs = valid.iter().map(|p| {
        let (name, namespace, verb, doc) = (&p.name, &p.namespace, &p.verb, &p.doc);
        let input = match &p.input {
            Some(t) => {
                let rust = t.to_token_stream().to_string().replace(' ', "");
                let spec = quote_spanned! {t.span()=>
                    ::surface::TypeSpec { rust: #rust, schema: ::surface::__private::schema_of::<#t> }
                };
                quote!(::core::option::Option::Some(#spec))
            }
            None => quote!(::core::option::Option::None),
        };
        let output = &p.output;
        // The success type as written (`Process` of `Result<Process, E>`), else the return type.
        let rust = match ok_type(output) {
            (ok, None) => ok.to_string(),
            (_, Some(_)) => output.to_token_stream().to_string(),
        }
        .replace(' ', "");
        let output = quote_spanned! {output.span()=>
            ::surface::TypeSpec { rust: #rust, schema: ::surface::__private::output_schema_of::<#output> }
        };
        quote! {
            ::surface::ProcedureSpec {
                name: #name,
                namespace: #namespace,
                verb: #verb,
                doc: #doc,
                input: #input,
                output: #output,
            }
        }
    });

    let arms = valid.iter().map(|p| {
        let name = &p.name;
        let method = &p.method;
        let checks = procedure_checks(p);
        // Spanned at the user's types, like their checks.
        let span = p.output.span();
        let mut method = method.clone();
        method.set_span(span);
        let call = match &p.input {
            Some(t) => {
                let decode = quote_spanned!(t.span()=> ::surface::__private::decode_input::<#t>(input)?);
                let answer = quote_spanned! {span=>
                    ::surface::__private::ProcedureResult::into_answer(Self::#method(self, input).await)
                };
                quote! {
                    let input = #decode;
                    #answer
                }
            }
            None => {
                let answer = quote_spanned! {span=>
                    ::surface::__private::ProcedureResult::into_answer(Self::#method(self).await)
                };
                quote! {
                    let _ = input;
                    #answer
                }
            }
        };
        quote! {
            #name => ::surface::__private::FutureExt::boxed(async move {
                #checks
                #call
            }),
        }
    });

    // One client type and one key type per namespace, in name order.
    let mut namespaces: BTreeMap<&str, Vec<&Procedure>> = BTreeMap::new();
    for p in procedures {
        namespaces.entry(&p.namespace).or_default();
    }
    for p in &valid {
        namespaces.entry(&p.namespace).or_default().push(p);
    }
    let ns_accessors = namespaces
        .iter()
        .filter(|(_, procs)| !procs.is_empty())
        .map(|(ns, _)| {
            let ty = names::namespace(surface_ident, ns);
            let method = names::method(ns, Span::call_site());
            let doc = doc_attrs(&format!("The procedures of namespace `{ns}`."));
            quote! {
                #doc
                pub fn #method(&self) -> #ty<'_> {
                    #ty { dispatch: &**self.__dispatch() }
                }
            }
        });
    let ns_types = namespaces.iter().filter(|(_, procs)| !procs.is_empty()).map(|(ns, procs)| {
        let ty = names::namespace(surface_ident, ns);
        let doc = doc_attrs(&format!("The procedures of namespace `{ns}` of [`{surface_ident}`]."));
        let methods = procs.iter().map(|p| {
            let verb = names::method(&p.verb, p.method.span());
            let name = &p.name;
            let doc = doc_attrs(&if p.doc.is_empty() { format!("Calls `{name}`.") } else { p.doc.clone() });
            let (ok, bound) = ok_type(&p.output);
            let answer = quote!(::core::result::Result<#ok, ::surface::Failure>);
            // Spanned so that rustc points at the input type when it cannot be encoded and at
            // the return type when the answer cannot be decoded.
            let output_span = p.output.span();
            match &p.input {
                Some(t) => {
                    let input = quote_spanned!(t.span()=> &input);
                    let call = quote_spanned! {output_span=>
                        ::surface::call_typed(self.dispatch, #name, #input).await
                    };
                    quote! {
                        #doc
                        pub async fn #verb(&self, input: #t) -> #answer #bound {
                            #call
                        }
                    }
                }
                None => {
                    let call = quote_spanned! {output_span=>
                        ::surface::call_typed(self.dispatch, #name, &::surface::__private::serde_json::Map::new()).await
                    };
                    quote! {
                        #doc
                        pub async fn #verb(&self) -> #answer #bound {
                            #call
                        }
                    }
                }
            }
        });
        quote! {
            #doc
            pub struct #ty<'a> {
                dispatch: &'a dyn ::surface::Dispatch,
            }
            impl #ty<'_> {
                #(#methods)*
            }
        }
    });

    // The keys `expose!` checks: `Ops::__SURFACE_PROCEDURES.<namespace>.<verb>`.
    let key_types = namespaces.keys().map(|ns| {
        let ty = names::verbs_keys(surface_ident, ns);
        let doc = doc_attrs(&format!(
            "The procedures of namespace `{ns}`, one field each, for `expose!`."
        ));
        let verbs: Vec<Ident> = procedures
            .iter()
            .filter(|p| p.namespace == *ns)
            .map(|p| names::method(&p.verb, p.method.span()))
            .collect();
        quote! {
            #doc
            #[doc(hidden)]
            #[allow(dead_code)]
            pub struct #ty {
                #(pub #verbs: ::surface::__private::kind::Procedure,)*
            }
        }
    });
    let ns_fields: Vec<(Ident, Ident)> = namespaces
        .keys()
        .map(|ns| {
            (
                names::namespace_field(ns, Span::call_site()),
                names::verbs_keys(surface_ident, ns),
            )
        })
        .collect();
    let ns_field_decls = ns_fields.iter().map(|(field, ty)| quote!(pub #field: #ty,));
    let ns_field_values = ns_fields.iter().map(|(field, ty)| {
        let verbs = procedures
            .iter()
            .filter(|p| names::namespace_field(&p.namespace, Span::call_site()) == *field)
            .map(|p| names::method(&p.verb, p.method.span()));
        quote!(#field: #ty { #(#verbs: ::surface::__private::kind::Procedure,)* },)
    });
    let namespaces_doc = doc_attrs(&format!(
        "The procedure namespaces of [`{surface_ident}`], one field each, for `expose!`."
    ));

    quote! {
        #item

        #[automatically_derived]
        impl ::surface::SurfaceProcedures for #self_ty {
            const PROCEDURES: &'static [::surface::ProcedureSpec] = {
                #(#checks)*
                &[#(#specs),*]
            };

            fn call<'a>(
                &'a self,
                name: &'a str,
                input: ::surface::__private::serde_json::Value,
            ) -> ::surface::__private::BoxFuture<'a, ::core::result::Result<::surface::__private::serde_json::Value, ::surface::Failure>> {
                match name {
                    #(#arms)*
                    _ => ::surface::__private::FutureExt::boxed(::core::future::ready(::core::result::Result::Err(
                        ::surface::__private::unknown_procedure(#surface_name, name),
                    ))),
                }
            }
        }

        impl #self_ty {
            #[doc(hidden)]
            #[allow(dead_code)]
            pub const #procedures_const: #namespaces_keys = #namespaces_keys { #(#ns_field_values)* };
        }

        #namespaces_doc
        #[doc(hidden)]
        #[allow(dead_code)]
        pub struct #namespaces_keys {
            #(#ns_field_decls)*
        }

        #(#key_types)*

        impl #procedures_ty {
            #(#ns_accessors)*
        }

        #(#ns_types)*
    }
}
