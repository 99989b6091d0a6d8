//! `#[surface]` on an impl block: procedures.
//!
//! Accepts an inherent impl whose `#[procedure("ns.verb")]` (or `#[procedure(ns = "ns")]`, the
//! method name being the verb) methods are `async fn(&self)` or `async fn(&self, input: T)`
//! returning `Result<O, E>`. Other items pass through untouched.
//! Pipeline: parse → validate (names, receivers, arity, asyncness, duplicates; every error
//! spanned at the user's token) → expand `SurfaceProcedures`, the `SurfaceKeys` `expose!` looks keys
//! up in (the one place this expansion names the struct's half, at the user's `Ops`), and the
//! client's namespaces (`OpsProcedures::proc()` → `OpsProcNamespace`), declared here.
//! A procedure with a mistake is reported and left out of the spec and the dispatch, but keeps
//! its `expose!` key and, when its types can be named, its client method; a name that is not
//! one is read as the best guess at the name meant (`load.zero` unquoted is `"load.zero"`). So
//! one mistake gives one error. Only a mistake in the impl block itself leaves the block
//! emitted alone.

use crate::checks;
use crate::docs::{doc_attrs, doc_text};
use crate::errors::Errors;
use crate::names;
use proc_macro2::{Span, TokenStream};
use quote::{ToTokens, quote, quote_spanned};
use std::collections::BTreeMap;
use syn::ext::IdentExt;
use syn::spanned::Spanned;
use syn::{FnArg, Ident, ImplItem, ItemImpl, LitStr, Meta, Path, ReturnType, Type};

struct Procedure {
    name: String,
    namespace: String,
    verb: String,
    name_span: Span,
    /// The tool name it becomes when exposed (`proc.kill` → `proc_kill`).
    tool: String,
    method: Ident,
    input: Option<Type>,
    output: Type,
    doc: String,
    /// Whether its signature is right (else it was reported and is left out of the spec and
    /// the dispatch).
    valid: bool,
    /// Whether its types can be named by the client's method (even when its signature was
    /// reported, so code calling it does not fail too).
    in_client: bool,
}

pub fn expand(args: TokenStream, mut item: ItemImpl) -> TokenStream {
    let mut errors = Errors::new();
    if !args.is_empty() {
        errors.at(&args, "`#[surface]` on an impl block takes no arguments");
    }
    let surface = check_impl(&item, &mut errors);
    let (procedures, declared) = parse(&mut item, &mut errors);
    let output = match &surface {
        Some(surface) => {
            check_namespaces(
                &surface.segments.last().expect("a path").ident,
                &procedures,
                &mut errors,
            );
            emit(&item, surface, &procedures, &declared)
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
        // `impl<T> Ops<T>`: the struct is generic too, and its `#[surface]` says so.
        let of_generic_struct = matches!(&*item.self_ty, Type::Path(p)
            if p.path.segments.last().is_some_and(|s| !s.arguments.is_none()));
        if !of_generic_struct {
            errors.at(
                &item.generics,
                format!(
                "a surface cannot be generic (its spec and its client are one set of types): remove `{}` and write each member's type out",
                item.generics.to_token_stream().to_string().replace(' ', "")
            ),
            );
        }
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

/// Every procedure of the block, and every name declared (those refused included: `expose!`
/// looks keys up among them, so a refused name is reported once, here). A name whose
/// namespace had to be invented adds `""`, which `expose!` reads as "not every name is known".
fn parse(item: &mut ItemImpl, errors: &mut Errors) -> (Vec<Procedure>, Vec<String>) {
    let mut procedures: Vec<Procedure> = Vec::new();
    let mut declared: Vec<String> = Vec::new();
    let ns = fallback_namespace(item);
    for impl_item in &mut item.items {
        let ImplItem::Fn(f) = impl_item else { continue };
        let Some(pos) = f.attrs.iter().position(|a| a.path().is_ident("procedure")) else {
            continue;
        };
        let attr = f.attrs.remove(pos);
        // A second `#[procedure]` on the method: said once, and stripped.
        while let Some(again) = f.attrs.iter().position(|a| a.path().is_ident("procedure")) {
            let extra = f.attrs.remove(again);
            errors.at(
                &extra,
                "a method is one procedure: write `#[procedure(…)]` once and remove this one",
            );
        }
        let Named {
            name,
            written,
            span: name_span,
            invented,
        } = procedure_name(&attr, &f.sig.ident, &ns, errors);
        if invented && !declared.iter().any(String::is_empty) {
            declared.push(String::new());
        }
        // The name as written resolves too: a key copied from it is not a second mistake.
        if let Some(written) = written
            && !declared.contains(&written)
        {
            declared.push(written);
        }
        if !declared.contains(&name) {
            declared.push(name.clone());
        }
        let tool = match check_name(&name, name_span, &procedures) {
            Ok(tool) => tool,
            Err(e) => {
                errors.push(e);
                continue;
            }
        };
        let (namespace, verb) = name.rsplit_once('.').expect("checked");
        let sig = signature(&f.sig, &name, errors);
        procedures.push(Procedure {
            tool,
            namespace: namespace.to_owned(),
            verb: verb.to_owned(),
            name: name.clone(),
            name_span,
            method: f.sig.ident.clone(),
            input: sig.input,
            output: sig.output,
            doc: doc_text(&f.attrs),
            valid: sig.valid,
            in_client: sig.in_client,
        });
    }
    // Sorted, so that `expose!`'s lookup of each key is a binary search: a linear one per key
    // made a crate of 1,000 procedures spend seconds in const evaluation.
    declared.sort_unstable();
    (procedures, declared)
}

/// The namespace a guessed procedure name takes when nothing written names one: the first
/// namespace the block's other names use, else the surface's name in lower case.
fn fallback_namespace(item: &ItemImpl) -> String {
    let written = item.items.iter().find_map(|i| {
        let ImplItem::Fn(f) = i else { return None };
        let attr = f.attrs.iter().find(|a| a.path().is_ident("procedure"))?;
        let lit: LitStr = attr.parse_args().ok()?;
        let name = lit.value();
        names::check_procedure_name(&name).ok()?;
        Some(name.rsplit_once('.')?.0.to_owned())
    });
    written.unwrap_or_else(|| match &*item.self_ty {
        Type::Path(p) => p
            .path
            .segments
            .last()
            .map(|s| s.ident.to_string().to_lowercase())
            .unwrap_or_else(|| "proc".to_owned()),
        _ => "proc".to_owned(),
    })
}

/// The tool name `name` becomes (`proc.kill` → `proc_kill`), or why it cannot be declared: an
/// invalid name, a tool name over the limit, one another procedure already mints, or a
/// name declared twice.
fn check_name(name: &str, span: Span, procedures: &[Procedure]) -> syn::Result<String> {
    names::check_procedure_name(name).map_err(|why| syn::Error::new(span, why))?;
    let (namespace, verb) = name.rsplit_once('.').expect("checked");
    let tool = format!("{namespace}_{verb}");
    if tool.len() > names::MAX_TOOL_NAME {
        return Err(syn::Error::new(
            span,
            format!(
                "procedure \"{name}\" becomes the tool name `{tool}`, {} characters: MCP clients accept at most {}; shorten the name",
                tool.len(),
                names::MAX_TOOL_NAME
            ),
        ));
    }
    if let Some(other) = procedures.iter().find(|p| p.tool == tool && p.name != name) {
        return Err(syn::Error::new(
            span,
            format!(
                "procedures \"{}\" and \"{name}\" both become the tool name `{tool}`: rename one",
                other.name
            ),
        ));
    }
    if let Some(first) = procedures.iter().find(|p| p.name == name) {
        return Err(syn::Error::new(
            span,
            format!(
                "procedure \"{name}\" is declared twice (first by `{}`)",
                first.method
            ),
        ));
    }
    Ok(tool)
}

/// A procedure method's signature, read.
struct Sig {
    input: Option<Type>,
    output: Type,
    /// `async fn(&self[, input: T]) -> R`, as the dispatch calls it.
    valid: bool,
    /// Its input and output are types the client can name.
    in_client: bool,
}

/// The input and return types of procedure `name`'s method, and whether its signature is
/// right (`async fn(&self[, input: T]) -> R`; each mistake reported at its token).
fn signature(sig: &syn::Signature, name: &str, errors: &mut Errors) -> Sig {
    let mut valid = true;
    let mut in_client = true;
    if sig.asyncness.is_none() {
        errors.at(
            sig.fn_token,
            format!(
                "procedure \"{name}\" must be an `async fn`: write `async fn {}`",
                sig.ident
            ),
        );
        valid = false;
    }
    // Lifetimes alone (`<'a>(&'a self, input: &'a str)`) ask for no type to be chosen: they
    // come with a borrow, which is the mistake reported (at the input), or are harmless.
    let lifetimes_only = sig
        .generics
        .params
        .iter()
        .all(|p| matches!(p, syn::GenericParam::Lifetime(_)));
    if !lifetimes_only {
        errors.at(
            &sig.generics,
            format!("procedure \"{name}\" cannot be generic: its input is decoded from JSON into one type; write that type in place of the parameter"),
        );
        valid = false;
        in_client = false;
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
        Some(FnArg::Typed(t)) => match &*t.ty {
            // Reported at the `&`, and read as the owned type for the client (`&str` as
            // `String`).
            Type::Reference(r) => {
                let (written, owned) = names::owned(&r.elem);
                errors.at(
                    &t.ty,
                    format!(
                        "take the input by value: `{}: {written}` (it is decoded from JSON and owned)",
                        t.pat.to_token_stream(),
                    ),
                );
                valid = false;
                Some(owned)
            }
            ty => Some(ty.clone()),
        },
        _ => None,
    };
    let extra: Vec<&FnArg> = inputs.collect();
    if !extra.is_empty() {
        errors.at(
            quote!(#(#extra),*),
            format!("procedure \"{name}\" takes one input at most: put these fields in one input struct"),
        );
        valid = false;
        in_client = false;
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
    let mut output = output;
    // `Result<&str, E>`: the answer is encoded as JSON and decoded by the client, so owned;
    // reported at the `&str` and read as the owned type (`String`).
    if let Some((borrowed, written)) = borrowed_ok(&mut output) {
        errors.at(
            &borrowed,
            format!("procedure \"{name}\" answers with owned data (it is encoded as JSON and decoded by the client): write `{written}` in place of `{}`", names::rust_name(&borrowed)),
        );
        valid = false;
    }
    if let Some(opaque) = impl_trait(&output) {
        errors.at(
            opaque,
            format!("procedure \"{name}\" names its output: its schema is in the spec and the typed client decodes it, so write the type it returns in place of `{}`", opaque.to_token_stream()),
        );
        valid = false;
        // The client still has the method (answering JSON), so code calling it does not fail
        // too.
        output = without_impl_trait(output);
    }
    if input.as_ref().is_some_and(|t| impl_trait(t).is_some()) {
        in_client = false;
    }
    // A declared lifetime left in a type the expansion names (`Cow<'a, str>`) would be
    // undeclared there: said at that type.
    if lifetimes_only && !sig.generics.params.is_empty() {
        let borrowing = input
            .iter()
            .chain(std::iter::once(&output))
            .find(|t| names_lifetime(t, &sig.generics));
        if let Some(ty) = borrowing {
            let generics = sig.generics.to_token_stream().to_string().replace(' ', "");
            errors.at(
                ty,
                format!(
                    "procedure \"{name}\" cannot borrow through `{generics}`: its input and output travel as JSON and own their data; write an owned type in place of `{}` and remove `{generics}`",
                    names::rust_name(ty)
                ),
            );
            valid = false;
            in_client = false;
        }
    }
    Sig {
        input,
        output,
        valid,
        in_client,
    }
}

/// In a return type written `Result<&T, E>`, the borrowed success type, replaced in place by
/// the owned type it stands for; with that type as written in a message.
fn borrowed_ok(output: &mut Type) -> Option<(Type, String)> {
    let Type::Path(p) = output else { return None };
    let last = p.path.segments.last_mut()?;
    if last.ident != "Result" {
        return None;
    }
    let syn::PathArguments::AngleBracketed(args) = &mut last.arguments else {
        return None;
    };
    if args.args.len() != 2 {
        return None;
    }
    let Some(syn::GenericArgument::Type(ok)) = args.args.first_mut() else {
        return None;
    };
    let Type::Reference(r) = &*ok else { return None };
    let (written, owned) = names::owned(&r.elem);
    let borrowed = std::mem::replace(ok, owned);
    Some((borrowed, written))
}

/// Whether `ty` names one of the lifetimes `generics` declares.
fn names_lifetime(ty: &Type, generics: &syn::Generics) -> bool {
    fn walk(tokens: TokenStream, declared: &[String]) -> bool {
        let mut quote_seen = false;
        for tt in tokens {
            match tt {
                proc_macro2::TokenTree::Group(g) if walk(g.stream(), declared) => return true,
                proc_macro2::TokenTree::Punct(p) if p.as_char() == '\'' => {
                    quote_seen = true;
                    continue;
                }
                proc_macro2::TokenTree::Ident(i) if quote_seen && declared.contains(&i.to_string()) => {
                    return true;
                }
                _ => {}
            }
            quote_seen = false;
        }
        false
    }
    let declared: Vec<String> = generics
        .lifetimes()
        .map(|l| l.lifetime.ident.to_string())
        .collect();
    walk(ty.to_token_stream(), &declared)
}

/// `ty` with each `impl Trait` in it replaced by a JSON value (a stand-in for a reported
/// mistake).
fn without_impl_trait(ty: Type) -> Type {
    match ty {
        Type::ImplTrait(_) => syn::parse_quote!(::surface::__private::serde_json::Value),
        Type::Path(mut p) => {
            for segment in &mut p.path.segments {
                if let syn::PathArguments::AngleBracketed(a) = &mut segment.arguments {
                    for arg in &mut a.args {
                        if let syn::GenericArgument::Type(t) = arg {
                            *t = without_impl_trait(t.clone());
                        }
                    }
                }
            }
            Type::Path(p)
        }
        other => other,
    }
}

/// The first `impl Trait` inside `ty`, if any.
fn impl_trait(ty: &Type) -> Option<&syn::TypeImplTrait> {
    match ty {
        Type::ImplTrait(t) => Some(t),
        Type::Path(p) => p.path.segments.iter().find_map(|s| match &s.arguments {
            syn::PathArguments::AngleBracketed(a) => a.args.iter().find_map(|g| match g {
                syn::GenericArgument::Type(t) => impl_trait(t),
                _ => None,
            }),
            _ => None,
        }),
        Type::Reference(r) => impl_trait(&r.elem),
        Type::Tuple(t) => t.elems.iter().find_map(impl_trait),
        Type::Paren(p) => impl_trait(&p.elem),
        _ => None,
    }
}

/// A procedure's name as read from its attribute: the name written, or the best guess at the
/// one meant after a mistake (reported), so the procedure keeps its `expose!` key and client
/// method and one mistake gives one error.
struct Named {
    name: String,
    /// The name as written, when it was a string and not a valid name.
    written: Option<String>,
    span: Span,
    /// Whether the namespace was invented (nothing written says it): `expose!` then does not
    /// look keys up in this surface, since the key meant may be under another namespace.
    invented: bool,
}

/// `#[procedure("proc.kill")]` or `#[procedure(ns = "proc")]` (the verb is the method name).
///
/// A name that is not one (unquoted, spaced, without a namespace or verb, written `name = …`,
/// given twice, or missing) is reported once, saying the attribute to write with the best
/// guess at the name meant (`ns` stands in for a namespace nothing names), and the procedure
/// keeps that guess.
fn procedure_name(attr: &syn::Attribute, method: &Ident, ns: &str, errors: &mut Errors) -> Named {
    let verb = method.unraw().to_string();
    // No name at all: the method's name under the stand-in namespace.
    let missing = |errors: &mut Errors| {
        let guess = format!("{ns}.{verb}");
        errors.at(
            attr,
            format!("a procedure needs its name, \"<ns>.<verb>\": write `#[procedure(\"{guess}\")]`"),
        );
        Named {
            name: guess,
            written: None,
            span: attr.span(),
            invented: true,
        }
    };
    let Meta::List(list) = &attr.meta else {
        return missing(errors);
    };
    let items: Vec<TokenStream> = crate::tokens::split_commas(list.tokens.clone());
    // The first item names the procedure; each is read as what it most likely means.
    let mut name: Option<(String, Span)> = None;
    let mut problem: Option<(TokenStream, &str)> = None;
    for item in &items {
        let (value, span) = match read_item(item) {
            Item::Name(lit) => (lit.value(), lit.span()),
            Item::Ns(lit) => (format!("{}.{verb}", lit.value()), lit.span()),
            Item::Keyed(lit) => {
                problem.get_or_insert((item.clone(), "the name is written alone, quoted"));
                (lit.value(), lit.span())
            }
            Item::Tokens(text) => {
                problem.get_or_insert((item.clone(), "the name is a string"));
                (text, item.span())
            }
        };
        match &name {
            None => name = Some((value, span)),
            Some(_) => {
                problem.get_or_insert((item.clone(), "a procedure has one name"));
            }
        }
    }
    let Some((written, span)) = name else {
        return missing(errors);
    };
    let (guess, invented) = match names::check_procedure_name(&written) {
        Ok(()) => (written.clone(), false),
        Err(_) => names::guess_procedure_name(&written, &verb, ns),
    };
    if let Some((tokens, why)) = problem {
        errors.at(tokens, format!("{why}: write `#[procedure(\"{guess}\")]`"));
    } else if let Err(why) = names::check_procedure_name(&written) {
        errors.push(syn::Error::new(
            span,
            format!("{why}: write `#[procedure(\"{guess}\")]`"),
        ));
    }
    let written = (guess != written).then_some(written);
    Named {
        name: guess,
        written,
        span,
        invented,
    }
}

/// What one comma-separated item of `#[procedure(…)]` is.
enum Item {
    /// `"proc.kill"`
    Name(LitStr),
    /// `ns = "proc"`
    Ns(LitStr),
    /// `name = "proc.kill"` (any other word with a string)
    Keyed(LitStr),
    /// Anything else, as its text without spaces (`proc.kill`).
    Tokens(String),
}

fn read_item(item: &TokenStream) -> Item {
    if let Ok(lit) = syn::parse2::<LitStr>(item.clone()) {
        return Item::Name(lit);
    }
    if let Ok(nv) = syn::parse2::<syn::MetaNameValue>(item.clone())
        && let syn::Expr::Lit(syn::ExprLit {
            lit: syn::Lit::Str(lit),
            ..
        }) = &nv.value
    {
        return if nv.path.is_ident("ns") {
            Item::Ns(lit.clone())
        } else {
            Item::Keyed(lit.clone())
        };
    }
    let text: String = item.to_string().chars().filter(|c| !c.is_whitespace()).collect();
    Item::Tokens(text.trim_matches('"').to_owned())
}

/// The checks of one procedure's types, each spanned at the user's type (see
/// `surface_struct::member_checks`: every body that needs them starts with them, so a type that does
/// not qualify is reported once).
fn procedure_checks(p: &Procedure) -> TokenStream {
    let input = p.input.as_ref().map(checks::procedure_input);
    let output = checks::procedure_result(&p.output);
    let written = written_ok(&p.output).map(|ok| checks::procedure_ok(&p.output, ok));
    quote!(#input #output #written)
}

/// The success type of a procedure for the client, with the bounds its method needs.
///
/// Written `Result<T, E>`, it is `T`, and the procedure's checks assert that `T` is what the
/// `ProcedureResult` projection says (so a `Result` alias with its arguments swapped is an
/// error, not a client that decodes the wrong type). Written any other way (`Doubled`,
/// `Answer<MyErr>`), it is the projection `<R as ProcedureResult>::Ok` itself, with the
/// bounds as where-clauses; the `for<'x>` keeps rustc from checking them where the method is
/// declared: a wrong `R` is reported once, by its check, and the method merely cannot be
/// called.
fn ok_type(output: &Type) -> TokenStream {
    match written_ok(output) {
        Some(ok) => ok.to_token_stream(),
        None => quote!(<#output as ::surface::ProcedureResult>::Ok),
    }
}

/// `T` of a return type written `Result<T, E>` (two arguments).
fn written_ok(output: &Type) -> Option<&Type> {
    if let Type::Path(p) = output
        && let Some(last) = p.path.segments.last()
        && last.ident == "Result"
        && let syn::PathArguments::AngleBracketed(args) = &last.arguments
        && args.args.len() == 2
        && let Some(syn::GenericArgument::Type(ok)) = args.args.first()
    {
        return Some(ok);
    }
    None
}

/// The success type's name for the spec: `T` of a return type written `Result<T, E>`, else
/// the return type as written (`Doubled`, `Answer<MyErr>`). Only a name for people: the
/// schema, the dispatch and the client all go through the `ProcedureResult` projection.
fn ok_name(output: &Type) -> String {
    names::rust_name(written_ok(output).unwrap_or(output))
}

fn emit(item: &ItemImpl, surface: &Path, procedures: &[Procedure], declared: &[String]) -> TokenStream {
    let self_ty = &item.self_ty;
    let surface_ident = &surface.segments.last().expect("a path").ident;
    let valid: Vec<&Procedure> = procedures.iter().filter(|p| p.valid).collect();
    let surface_name = surface_ident.to_string();
    let checks = valid.iter().map(|p| procedure_checks(p));
    let specs = valid.iter().map(|p| procedure_spec(p));
    let arms = valid.iter().map(|p| dispatch_arm(p));
    let decoders = input_decoders(&valid);
    let detailed = refusals_with_detail(&valid);
    let namespaces_ty = names::procedures(surface_ident);
    let in_client: Vec<&Procedure> = procedures.iter().filter(|p| p.in_client).collect();
    let client = emit_client(surface_ident, &in_client);
    // The one place this expansion names the struct's half, at the user's `Ops`: a struct
    // without `#[surface]` is reported here, once, in `SurfaceMembers`' words.
    let members = quote_spanned!(self_ty.span()=> <#self_ty as ::surface::SurfaceMembers>);
    quote! {
        #item

        #[automatically_derived]
        impl ::surface::SurfaceKeys for #self_ty {
            const KEYS: (&'static str, &'static [::surface::MemberSpec], &'static [&'static str], &'static [(&'static str, bool)]) = (
                #members::NAME,
                #members::MEMBERS,
                <Self as ::surface::SurfaceProcedures>::DECLARED,
                #members::OTHER_FIELDS,
            );
            type Surface = Self;
        }

        #[automatically_derived]
        impl ::surface::SurfaceProcedures for #self_ty {
            const PROCEDURES: &'static [::surface::ProcedureSpec] = {
                #(#checks)*
                &[#(#specs),*]
            };
            const DECLARED: &'static [&'static str] = &[#(#declared),*];
            type Namespaces = #namespaces_ty;
            fn namespaces(dispatch: ::surface::__private::Arc<dyn ::surface::Dispatch>) -> #namespaces_ty {
                #namespaces_ty { dispatch }
            }

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

            #decoders
            #detailed
        }

        #client
    }
}

/// `TypeSpec { rust: "Kill", schema: schema_of::<Kill> }`, spanned at the type.
fn input_spec(ty: &Type) -> TokenStream {
    let rust = names::rust_name(ty);
    quote_spanned! {ty.span()=>
        ::surface::TypeSpec { rust: #rust, schema: ::surface::__private::schema_of::<#ty> }
    }
}

/// One `ProcedureSpec`.
fn procedure_spec(p: &Procedure) -> TokenStream {
    let (name, namespace, verb, doc) = (&p.name, &p.namespace, &p.verb, &p.doc);
    let input = match &p.input {
        Some(t) => {
            let spec = input_spec(t);
            quote!(::core::option::Option::Some(#spec))
        }
        None => quote!(::core::option::Option::None),
    };
    let output = &p.output;
    let rust = ok_name(output);
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
}

/// `"proc.kill" => boxed(async move { …decode, call, encode… })`
fn dispatch_arm(p: &Procedure) -> TokenStream {
    let name = &p.name;
    let checks = procedure_checks(p);
    // The answer's type named at the user's return type, like its check (see `checks`).
    let span = p.output.span();
    let output = &p.output;
    let mut method = p.method.clone();
    method.set_span(span);
    let call = match &p.input {
        Some(t) => {
            let decode = quote_spanned!(t.span()=> ::surface::__private::decode_input::<#t>(input)?);
            let answer = quote_spanned! {span=>
                ::surface::__private::answer::<#output>(Self::#method(self, input).await)
            };
            quote! {
                let input = #decode;
                #answer
            }
        }
        None => {
            let answer = quote_spanned! {span=>
                ::surface::__private::answer::<#output>(Self::#method(self).await)
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
}

/// `fn refuses_with_detail`: whether each procedure's failure may carry a detail (then its
/// tool advertises no `outputSchema`). Left to the trait's default when it has no procedure.
fn refusals_with_detail(valid: &[&Procedure]) -> TokenStream {
    if valid.is_empty() {
        return TokenStream::new();
    }
    let arms = valid.iter().map(|p| {
        let (name, output) = (&p.name, &p.output);
        // The checks first and the type at the user's token, as in the dispatch arm: a return
        // type that does not qualify is reported once, by its check.
        let check = checks::procedure_result(output);
        let written = written_ok(output).map(|ok| checks::procedure_ok(output, ok));
        let answer = quote_spanned!(output.span()=> ::surface::__private::refuses_with_detail::<#output>());
        quote! {
            #name => {
                #check
                #written
                #answer
            }
        }
    });
    quote! {
        fn refuses_with_detail(name: &str) -> bool {
            match name {
                #(#arms)*
                _ => false,
            }
        }
    }
}

/// `fn input_decoder`: each procedure's input decoder, the one its dispatch arm runs, for the
/// faces that decode before they dial (the argv face). Left to the trait's default (`None`)
/// when no procedure takes input.
fn input_decoders(valid: &[&Procedure]) -> TokenStream {
    let arms: Vec<TokenStream> = valid
        .iter()
        .filter_map(|p| {
            let t = p.input.as_ref()?;
            let name = &p.name;
            // The input's check first, as in the dispatch arm: a type that does not qualify is
            // reported once, by the check, and not again for the decoder's bound.
            let check = checks::procedure_input(t);
            let decoder = quote_spanned!(t.span()=> ::surface::__private::check_input::<#t>);
            Some(quote! {
                #name => {
                    #check
                    ::core::option::Option::Some(#decoder)
                }
            })
        })
        .collect();
    if arms.is_empty() {
        return TokenStream::new();
    }
    quote! {
        fn input_decoder(name: &str) -> ::core::option::Option<::surface::__private::InputDecoder> {
            match name {
                #(#arms)*
                _ => ::core::option::Option::None,
            }
        }
    }
}

/// The client's namespaces: `OpsProcedures::proc()` → `OpsProcNamespace`, one method per verb.
fn emit_client(surface_ident: &Ident, procedures: &[&Procedure]) -> TokenStream {
    let procedures_ty = names::procedures(surface_ident);
    // One client type per namespace, in name order.
    let mut namespaces: BTreeMap<&str, Vec<&Procedure>> = BTreeMap::new();
    for p in procedures {
        namespaces.entry(&p.namespace).or_default().push(p);
    }
    let accessors = namespaces.keys().map(|ns| {
        let ty = names::namespace(surface_ident, ns);
        let method = names::method(ns, Span::call_site());
        let doc = doc_attrs(&format!("The procedures of namespace `{ns}`."));
        let allow = allow_case(ns);
        quote! {
            #doc
            #allow
            pub fn #method(&self) -> #ty<'_> {
                #ty { dispatch: &*self.dispatch }
            }
        }
    });
    let types = namespaces.iter().map(|(ns, procs)| {
        let ty = names::namespace(surface_ident, ns);
        let doc = doc_attrs(&format!(
            "The procedures of namespace `{ns}` of [`{surface_ident}`]."
        ));
        let methods = procs.iter().map(|p| client_method(p));
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
    let doc = doc_attrs(&format!(
        "The procedure namespaces of [`{surface_ident}`], which its typed client reaches by `Deref`\n\
         (`client.proc()`) or through `client.procedures()`."
    ));
    quote! {
        #doc
        pub struct #procedures_ty {
            dispatch: ::surface::__private::Arc<dyn ::surface::Dispatch>,
        }

        impl #procedures_ty {
            #(#accessors)*
        }

        #(#types)*
    }
}

/// `#[allow(non_snake_case)]` for a method named after `word` when it is not snake case
/// (`"Type.Get"` is a valid procedure name; the user never wrote the method `Get`).
fn allow_case(word: &str) -> Option<TokenStream> {
    word.contains(|c: char| c.is_ascii_uppercase())
        .then(|| quote!(#[allow(non_snake_case)]))
}

/// `pub async fn kill(&self, input: Kill) -> Result<Killed, Failure>` on the namespace type.
fn client_method(p: &Procedure) -> TokenStream {
    let verb = names::method(&p.verb, p.method.span());
    let name = &p.name;
    let doc = doc_attrs(&if p.doc.is_empty() {
        format!("Calls `{name}`.")
    } else {
        p.doc.clone()
    });
    let ok = ok_type(&p.output);
    let answer = quote!(::core::result::Result<#ok, ::surface::Failure>);
    let output = &p.output;
    // Its types are checked by the procedure's checks; these bounds, under a `for<'x>` rustc
    // does not check where the method is declared, keep a type that does not qualify from
    // being reported a second time here (the method merely cannot be called).
    let input_bound = p
        .input
        .as_ref()
        .map(|t| quote!(for<'x> #t: ::surface::__private::serde::Serialize,));
    // The projection needs its trait; a success type written out does not.
    let projection_bound = written_ok(output)
        .is_none()
        .then(|| quote!(for<'x> #output: ::surface::ProcedureResult,));
    let bound = quote! {
        where
            #projection_bound
            #input_bound
            for<'x> #ok: ::surface::__private::serde::de::DeserializeOwned,
    };
    // Spanned so that rustc points at the input type when it cannot be encoded and at the
    // return type when the answer cannot be decoded.
    let output_span = p.output.span();
    let (param, input) = match &p.input {
        Some(t) => (quote!(input: #t), quote_spanned!(t.span()=> &input)),
        None => (quote!(), quote!(&::surface::__private::serde_json::Map::new())),
    };
    let call = quote_spanned! {output_span=>
        ::surface::call_typed(self.dispatch, #name, #input).await
    };
    let allow = allow_case(&p.verb);
    quote! {
        #doc
        #allow
        pub async fn #verb(&self, #param) -> #answer #bound {
            #call
        }
    }
}
