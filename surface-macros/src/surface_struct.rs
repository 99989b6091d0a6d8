//! `#[surface]` on a struct: members.
//!
//! Accepts a struct with named fields; a field marked `#[cell]`, `#[collection(key = K)]`,
//! `#[stream]` or `#[event]` is a member, any other field is private state.
//! Pipeline: parse the fields into a [`Model`] → validate (every error, spanned at the user's
//! token) → expand. Expansion rewrites each member's type to its live container
//! (`#[cell] load: Load` becomes `load: ::surface::Cell<Load>`), implements
//! `SurfaceMembers`, adds `Ops::SPEC`, one hidden marker constant per member for `expose!`, and
//! the typed client `OpsClient`. On error the struct is still emitted (with our attributes
//! stripped) so one mistake gives one error.

use crate::docs::doc_text;
use crate::errors::{Errors, unknown_word};
use crate::names;
use darling::FromMeta;
use darling::ast::NestedMeta;
use proc_macro2::{Span, TokenStream};
use quote::{ToTokens, quote, quote_spanned};
use syn::spanned::Spanned;
use syn::{Attribute, Fields, Ident, ItemStruct, Meta, Type};

const KINDS: &[&str] = &["cell", "collection", "stream", "event"];
/// Inherent methods of the generated client that a member accessor must not shadow.
const RESERVED: &[&str] = &["new", "direct", "procedures", "dispatch"];

#[derive(Clone, Copy, PartialEq, Eq)]
enum Kind {
    Cell,
    Collection,
    Stream,
    Event,
}

impl Kind {
    fn from_word(w: &str) -> Option<Kind> {
        Some(match w {
            "cell" => Kind::Cell,
            "collection" => Kind::Collection,
            "stream" => Kind::Stream,
            "event" => Kind::Event,
            _ => return None,
        })
    }
    fn variant(self) -> Ident {
        Ident::new(
            match self {
                Kind::Cell => "Cell",
                Kind::Collection => "Collection",
                Kind::Stream => "Stream",
                Kind::Event => "Event",
            },
            Span::call_site(),
        )
    }
}

#[derive(FromMeta)]
struct CollectionArgs {
    key: Type,
}

struct Member {
    ident: Ident,
    kind: Kind,
    value: Type,
    key: Option<Type>,
    doc: String,
    cfgs: Vec<Attribute>,
}

struct Model {
    item: ItemStruct,
    members: Vec<Member>,
}

pub fn expand(args: TokenStream, item: ItemStruct) -> TokenStream {
    let mut errors = Errors::new();
    if !args.is_empty() {
        errors.at(&args, "`#[surface]` on a struct takes no arguments");
    }
    let model = parse(item, &mut errors);
    let output = emit(&model, errors.is_empty());
    let compile_errors = errors.to_compile_errors();
    quote! { #output #compile_errors }
}

fn parse(mut item: ItemStruct, errors: &mut Errors) -> Model {
    if !item.generics.params.is_empty() || item.generics.where_clause.is_some() {
        errors.at(
            &item.generics,
            "a surface cannot be generic: its spec is one constant",
        );
    }
    let mut members = Vec::new();
    match &mut item.fields {
        Fields::Named(fields) => {
            for field in fields.named.iter_mut() {
                let mut kind_attrs = Vec::new();
                field.attrs.retain(|a| {
                    let ours = a
                        .path()
                        .get_ident()
                        .is_some_and(|i| Kind::from_word(&i.to_string()).is_some());
                    if ours {
                        kind_attrs.push(a.clone());
                    }
                    !ours
                });
                let Some(attr) = kind_attrs.first() else {
                    continue;
                };
                for extra in &kind_attrs[1..] {
                    errors.at(extra, "a member has exactly one kind: remove this attribute");
                }
                let ident = field.ident.clone().expect("named field");
                let word = attr.path().get_ident().expect("checked above").to_string();
                let kind = Kind::from_word(&word).expect("checked above");
                let key = parse_kind_args(attr, kind, errors);
                let name = ident.to_string();
                if RESERVED.contains(&name.as_str()) {
                    errors.at(
                        &ident,
                        format!("`{name}` is reserved by the generated client: rename this member"),
                    );
                }
                let value = field.ty.clone();
                field.ty = container_type(kind, &value, key.as_ref());
                let cfgs = field
                    .attrs
                    .iter()
                    .filter(|a| a.path().is_ident("cfg"))
                    .cloned()
                    .collect();
                members.push(Member {
                    ident,
                    kind,
                    value,
                    key,
                    doc: doc_text(&field.attrs),
                    cfgs,
                });
            }
        }
        _ => errors.at(&item.ident, "`#[surface]` needs a struct with named fields"),
    }
    Model { item, members }
}

/// Reads the arguments of `#[cell]`, `#[collection(key = K)]`, `#[stream]`, `#[event]`.
fn parse_kind_args(attr: &Attribute, kind: Kind, errors: &mut Errors) -> Option<Type> {
    let word = KINDS[kind as usize];
    match (&attr.meta, kind) {
        (Meta::Path(_), Kind::Collection) => {
            errors.at(
                attr,
                "a collection needs its key type: write `#[collection(key = u32)]`",
            );
            None
        }
        (Meta::Path(_), _) => None,
        (Meta::List(list), Kind::Collection) => {
            let nested = match NestedMeta::parse_meta_list(list.tokens.clone()) {
                Ok(n) => n,
                Err(e) => {
                    errors.push(e);
                    return None;
                }
            };
            for n in &nested {
                if let NestedMeta::Meta(m) = n {
                    let w = m.path().get_ident().map(ToString::to_string).unwrap_or_default();
                    if w != "key" {
                        errors.at(m.path(), unknown_word(&w, "`#[collection]`", &["key"]));
                        return None;
                    }
                }
            }
            match CollectionArgs::from_list(&nested) {
                Ok(args) => Some(args.key),
                Err(e) => {
                    errors.darling(e.with_span(&list.tokens));
                    None
                }
            }
        }
        (other, _) => {
            errors.at(other, format!("`#[{word}]` takes no arguments"));
            None
        }
    }
}

fn container_type(kind: Kind, value: &Type, key: Option<&Type>) -> Type {
    let span = value.span();
    let tokens = match (kind, key) {
        (Kind::Cell, _) => quote_spanned!(span=> ::surface::Cell<#value>),
        (Kind::Collection, Some(key)) => quote_spanned!(span=> ::surface::Collection<#key, #value>),
        // A collection without a key was reported; keep the field typed so nothing else errs.
        (Kind::Collection, None) => {
            quote_spanned!(span=> ::surface::Collection<::std::string::String, #value>)
        }
        (Kind::Stream, _) => quote_spanned!(span=> ::surface::Stream<#value>),
        (Kind::Event, _) => quote_spanned!(span=> ::surface::Event<#value>),
    };
    syn::parse2(tokens).expect("a path type")
}

fn type_spec(ty: &Type) -> TokenStream {
    let rust = ty.to_token_stream().to_string().replace(' ', "");
    quote! {
        ::surface::TypeSpec { rust: #rust, schema: ::surface::__private::schema_of::<#ty> }
    }
}

fn emit(model: &Model, valid: bool) -> TokenStream {
    let item = &model.item;
    let ident = &item.ident;
    if !valid {
        // Keep the user's struct (attributes stripped) so the rest of their crate still checks.
        return item.to_token_stream();
    }
    let vis = &item.vis;
    let name = ident.to_string();
    let doc = doc_text(&item.attrs);
    let client = names::client(ident);
    let procedures = names::procedures(ident);

    let assertions = model.members.iter().map(|m| {
        let value = &m.value;
        let key = m
            .key
            .as_ref()
            .map(|k| quote_spanned!(k.span()=> ::surface::__private::assert_member_key::<#k>();));
        let cfgs = &m.cfgs;
        quote_spanned! {value.span()=>
            #(#cfgs)*
            ::surface::__private::assert_member_value::<#value>();
            #key
        }
    });

    let specs = model.members.iter().map(|m| {
        let member = m.ident.to_string();
        let kind = m.kind.variant();
        let doc = &m.doc;
        let value = type_spec(&m.value);
        let key = match &m.key {
            Some(k) => {
                let k = type_spec(k);
                quote!(::core::option::Option::Some(#k))
            }
            None => quote!(::core::option::Option::None),
        };
        let cfgs = &m.cfgs;
        quote! {
            #(#cfgs)*
            ::surface::MemberSpec {
                name: #member,
                kind: ::surface::MemberKind::#kind,
                doc: #doc,
                value: #value,
                key: #key,
            }
        }
    });

    let arms = model.members.iter().map(|m| {
        let field = &m.ident;
        let member = field.to_string();
        let cfgs = &m.cfgs;
        quote!(#(#cfgs)* #member => ::core::option::Option::Some(&self.#field),)
    });

    let markers = model.members.iter().map(|m| {
        let marker = names::member_marker(&m.ident.to_string(), m.ident.span());
        let kind = m.kind.variant();
        let cfgs = &m.cfgs;
        quote! {
            #(#cfgs)*
            #[doc(hidden)]
            pub const #marker: ::surface::__private::kind::#kind = ::surface::__private::kind::#kind;
        }
    });

    let accessors = model.members.iter().map(|m| {
        let field = &m.ident;
        let member = field.to_string();
        let value = &m.value;
        let cfgs = &m.cfgs;
        let doc = if m.doc.is_empty() {
            format!("The `{member}` member.")
        } else {
            m.doc.clone()
        };
        let (ty, new) = match (m.kind, &m.key) {
            (Kind::Cell, _) => (
                quote!(::surface::CellClient<'_, #value>),
                quote!(::surface::CellClient::__new),
            ),
            (Kind::Collection, Some(k)) => (
                quote!(::surface::CollectionClient<'_, #k, #value>),
                quote!(::surface::CollectionClient::__new),
            ),
            (Kind::Collection, None) => unreachable!("reported as an error"),
            (Kind::Stream, _) => (
                quote!(::surface::StreamClient<'_, #value>),
                quote!(::surface::StreamClient::__new),
            ),
            (Kind::Event, _) => (
                quote!(::surface::EventClient<'_, #value>),
                quote!(::surface::EventClient::__new),
            ),
        };
        quote! {
            #(#cfgs)*
            #[doc = #doc]
            pub fn #field(&self) -> #ty {
                #new(&**::surface::SurfaceClient::dispatch(self), #member)
            }
        }
    });

    let client_doc = format!(
        "The typed client of [`{name}`]: one method per member, procedures by namespace.\n\n\
         Procedure namespaces are reached through [`{procedures}`] (`client.procedures()`), \
         and directly on the client unless a member has the same name."
    );

    quote! {
        #item

        const _: () = {
            #(#assertions)*
        };

        #[automatically_derived]
        impl ::surface::SurfaceMembers for #ident {
            const NAME: &'static str = #name;
            const DOC: &'static str = #doc;
            const MEMBERS: &'static [::surface::MemberSpec] = &[#(#specs),*];
            type Client = #client;

            fn member(&self, name: &str) -> ::core::option::Option<&dyn ::surface::LiveMember> {
                match name {
                    #(#arms)*
                    _ => ::core::option::Option::None,
                }
            }
        }

        #[allow(non_upper_case_globals)]
        impl #ident {
            /// The spec of this surface: every member and procedure with its kind, types and schemas.
            pub const SPEC: ::surface::SurfaceSpec = <Self as ::surface::Surface>::SPEC;
            #(#markers)*
        }

        #[doc = #client_doc]
        #[derive(Clone)]
        #vis struct #client {
            procedures: #procedures,
        }

        #[automatically_derived]
        impl ::surface::SurfaceClient for #client {
            type Surface = #ident;
            fn from_dispatch(dispatch: ::surface::__private::Arc<dyn ::surface::Dispatch>) -> Self {
                #client { procedures: #procedures::__from_dispatch(dispatch) }
            }
            fn dispatch(&self) -> &::surface::__private::Arc<dyn ::surface::Dispatch> {
                self.procedures.__dispatch()
            }
        }

        impl #client {
            /// The client over `dispatch`.
            pub fn new(dispatch: ::surface::__private::Arc<dyn ::surface::Dispatch>) -> Self {
                <Self as ::surface::SurfaceClient>::from_dispatch(dispatch)
            }
            /// The client of `surface`, in this process.
            pub fn direct(surface: ::surface::__private::Arc<#ident>) -> Self {
                ::surface::DirectDispatch::client(surface)
            }
            /// Every procedure namespace.
            pub fn procedures(&self) -> &#procedures {
                &self.procedures
            }
            #(#accessors)*
        }

        impl ::core::ops::Deref for #client {
            type Target = #procedures;
            fn deref(&self) -> &#procedures {
                &self.procedures
            }
        }
    }
}
