//! `#[surface]` on a struct: members.
//!
//! Accepts a struct with named fields; a field marked `#[cell]`, `#[collection(key = K)]`,
//! `#[stream]` or `#[event]` is a member, any other field is private state.
//! Pipeline: parse the fields into a [`Model`] → validate (every error, spanned at the user's
//! token) → expand. Expansion rewrites each member's type to its live container
//! (`#[cell] load: Load` becomes `load: ::surface::Cell<Load>`; a member of a projected surface,
//! `#[cell(derived)]`, becomes `::surface::ReadOnly<::surface::Cell<Load>>`, and its accessor on
//! the client returns a `ReadOnly` client too: neither has a setter), implements `SurfaceMembers`
//! (whose `MEMBERS` `expose!` checks member keys against), adds `Ops::SPEC` and the typed
//! client `OpsClient`, which reaches the namespaces the impl block's expansion declares
//! through `::surface::Procedures<Ops>` (so neither expansion names the other's types, and a
//! missing half is one error). A mistake in one member is reported and the rest still
//! expands; a mistake in the struct itself leaves the struct (our attributes stripped) emitted
//! alone. Either way one mistake gives one error.

use crate::checks;
use crate::docs::{doc_attrs, doc_text};
use crate::errors::{Errors, unknown_word};
use crate::names;
use proc_macro2::{Span, TokenStream};
use quote::{ToTokens, quote, quote_spanned};
use syn::ext::IdentExt;
use syn::spanned::Spanned;
use syn::{Attribute, Fields, Ident, ItemStruct, Meta, Type};

/// One row per member kind: everything the expansion names for it.
struct KindRow {
    kind: Kind,
    /// The attribute (`#[cell]`) and the spec's word.
    word: &'static str,
    /// The live container (`::surface::Cell<T>`) and the `MemberKind` variant.
    container: &'static str,
    /// The typed client (`::surface::CellClient<'_, T>`).
    client: &'static str,
    /// `::surface::__private::members::…` functions: the live member and the client.
    live_fn: &'static str,
    client_fn: &'static str,
    /// The same two for a derived member (`#[cell(derived)]`: `::surface::ReadOnly<…>`).
    derived_live_fn: &'static str,
    derived_client_fn: &'static str,
}

#[rustfmt::skip]
const KINDS: [KindRow; 4] = [
    KindRow { kind: Kind::Cell, word: "cell", container: "Cell", client: "CellClient", live_fn: "live_cell", client_fn: "cell_client", derived_live_fn: "live_derived_cell", derived_client_fn: "derived_cell_client" },
    KindRow { kind: Kind::Collection, word: "collection", container: "Collection", client: "CollectionClient", live_fn: "live_collection", client_fn: "collection_client", derived_live_fn: "live_derived_collection", derived_client_fn: "derived_collection_client" },
    KindRow { kind: Kind::Stream, word: "stream", container: "Stream", client: "StreamClient", live_fn: "live_stream", client_fn: "stream_client", derived_live_fn: "live_derived_stream", derived_client_fn: "derived_stream_client" },
    KindRow { kind: Kind::Event, word: "event", container: "Event", client: "EventClient", live_fn: "live_event", client_fn: "event_client", derived_live_fn: "live_derived_event", derived_client_fn: "derived_event_client" },
];

/// Names a member accessor would take from the generated client: its inherent methods, those
/// of the traits it implements (`SurfaceClient`, `Clone`, `Deref`) and of `ToOwned`, which
/// every `Clone` type has. An inherent accessor named `clone` would shadow `Clone::clone` in
/// method calls (`client.clone()` would return the member), so such names are refused.
const RESERVED: &[&str] = &[
    "new",
    "direct",
    "procedures",
    "dispatch",
    "from_dispatch",
    "clone",
    "clone_from",
    "to_owned",
    "clone_into",
    "deref",
];

#[derive(Clone, Copy, PartialEq, Eq)]
enum Kind {
    Cell,
    Collection,
    Stream,
    Event,
}

impl Kind {
    fn from_word(w: &str) -> Option<Kind> {
        KINDS.iter().find(|r| r.word == w).map(|r| r.kind)
    }
    fn row(self) -> &'static KindRow {
        KINDS
            .iter()
            .find(|r| r.kind == self)
            .expect("every kind has a row")
    }
    /// `::surface::<name>`
    fn path(name: &str) -> TokenStream {
        let name = Ident::new(name, Span::call_site());
        quote!(::surface::#name)
    }
    /// `::surface::__private::members::<name>`
    fn function(name: &str, span: Span) -> TokenStream {
        let name = Ident::new(name, span);
        quote_spanned!(span=> ::surface::__private::members::#name)
    }
}

struct Member {
    ident: Ident,
    /// The member's key: the field name without `r#`.
    name: String,
    kind: Kind,
    value: Type,
    /// The key type of a collection (`String` stands in when it was left out, as reported).
    key: Option<Type>,
    doc: String,
    cfgs: Vec<Attribute>,
    /// Whether its name is reserved by the client (reported; the member gets no accessor).
    reserved: bool,
    /// `#[cell(derived)]`: a member of a projected surface, read-only (`::surface::ReadOnly`),
    /// with no setter on the member or on the client.
    derived: bool,
}

impl Member {
    /// `u32, Process` of a collection, `Load` of the others: each type with its own span, so
    /// a use of the container is blamed on the type that does not qualify.
    fn type_args(&self) -> TokenStream {
        let value = &self.value;
        match &self.key {
            Some(key) => quote!(#key, #value),
            None => quote!(#value),
        }
    }
}

struct Model {
    item: ItemStruct,
    members: Vec<Member>,
    /// The fields without a member attribute, with their `#[cfg]`s.
    plain: Vec<(String, Vec<Attribute>)>,
    /// A mistake in the struct itself (not in one member): nothing but the struct is emitted.
    fatal: bool,
}

pub fn expand(args: TokenStream, item: ItemStruct) -> TokenStream {
    let mut errors = Errors::new();
    if !args.is_empty() {
        errors.at(&args, "`#[surface]` on a struct takes no arguments");
    }
    let model = parse(item, &mut errors);
    // A mistake in one member is reported and that member still expands (with a stand-in key
    // type if its key is missing), so the client, the spec and `expose!` keys all exist and the
    // one mistake gives one error.
    let output = if model.fatal {
        model.item.to_token_stream()
    } else {
        emit(&model)
    };
    let compile_errors = errors.to_compile_errors();
    quote! { #output #compile_errors }
}

fn parse(mut item: ItemStruct, errors: &mut Errors) -> Model {
    let mut fatal = false;
    if !item.generics.params.is_empty() || item.generics.where_clause.is_some() {
        errors.at(
            &item.generics,
            format!(
                "a surface cannot be generic (its spec and its client are one set of types): remove `{}` and write each member's type out",
                item.generics.to_token_stream().to_string().replace(' ', "")
            ),
        );
        fatal = true;
    }
    let mut members = Vec::new();
    let mut plain = Vec::new();
    let item_ident = item.ident.clone();
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
                    // `#[cel]`: a member attribute misspelt (no attribute macro can sit on a
                    // field, so rustc would only say it cannot find it). Said with the word,
                    // and read as it.
                    if !ours
                        && let Some(ident) = a.path().get_ident()
                        && let Some(word) =
                            crate::errors::did_you_mean(&ident.to_string(), KINDS.iter().map(|r| r.word))
                    {
                        errors.at(
                            a.path(),
                            format!(
                                "unknown attribute `#[{ident}]`: did you mean `#[{word}]`? a member is {}",
                                crate::errors::one_of(&[
                                    "#[cell]",
                                    "#[collection(key = K)]",
                                    "#[stream]",
                                    "#[event]"
                                ])
                            ),
                        );
                        let mut fixed = a.clone();
                        let to = Ident::new(word, ident.span());
                        match &mut fixed.meta {
                            Meta::Path(p) => *p = to.into(),
                            Meta::List(l) => l.path = to.into(),
                            Meta::NameValue(nv) => nv.path = to.into(),
                        }
                        kind_attrs.push(fixed);
                        return false;
                    }
                    !ours
                });
                let Some(attr) = kind_attrs.first() else {
                    let name = field.ident.as_ref().expect("named field").unraw().to_string();
                    plain.push((name, cfgs_of(&field.attrs)));
                    continue;
                };
                for extra in &kind_attrs[1..] {
                    errors.at(extra, "a member has exactly one kind: remove this attribute");
                }
                let ident = field.ident.clone().expect("named field");
                let word = attr.path().get_ident().expect("checked above").to_string();
                let kind = Kind::from_word(&word).expect("checked above");
                let (key, derived) = parse_kind_args(attr, kind, errors);
                let key_missing = key.is_none();
                let key = key
                    .or_else(|| (kind == Kind::Collection).then(|| syn::parse_quote!(::std::string::String)));
                let name = ident.unraw().to_string();
                let reserved = RESERVED.contains(&name.as_str());
                if reserved {
                    errors.at(
                        &ident,
                        format!(
                            "a member cannot be called `{name}`: the typed client `{}` has a method of that name, which the member's accessor would shadow; rename the member (reserved: {})",
                            names::client(&item_ident),
                            crate::errors::one_of(RESERVED)
                        ),
                    );
                }
                let mut value = field.ty.clone();
                let mut key = key;
                // `load: Cell<Load>`: reported at the type, read as `load: Load`.
                if let Some((container, inner_key, inner)) = unwrap_container(&value) {
                    errors.at(
                        &field.ty,
                        format!(
                            "write the value type: `{name}: {}` (the member wraps it in `{container}<…>`)",
                            names::rust_name(&inner)
                        ),
                    );
                    if kind == Kind::Collection && inner_key.is_some() && key_missing {
                        key = inner_key;
                    }
                    value = inner;
                }
                // `processes: Vec<Process>`: a collection holds one value per key.
                if kind == Kind::Collection
                    && let Some(item) = vec_item(&value)
                {
                    errors.at(
                        &field.ty,
                        format!(
                            "a collection holds one value per key: write `{name}: {}` (each item is its own entry)",
                            names::rust_name(&item)
                        ),
                    );
                    value = item;
                }
                // `name: &'static str`: a member's value is encoded, decoded and kept, so owned;
                // reported at the type and read as the owned type (`String`).
                if let Type::Reference(r) = &value {
                    let (written, owned) = names::owned(&r.elem);
                    errors.at(
                        &value,
                        format!("a member owns its value (it is decoded from JSON and kept): write `{name}: {written}`"),
                    );
                    value = owned;
                }
                if let Some(Type::Reference(r)) = &key {
                    let (written, owned) = names::owned(&r.elem);
                    errors.at(
                        key.as_ref().expect("a key"),
                        format!("a collection owns its keys (they are decoded from JSON and kept): write `key = {written}`"),
                    );
                    key = Some(owned);
                }
                // `key = f64`: reported at the key, read as `u64` so the collection's own
                // methods do not each fail on the missing `Ord`.
                if let Some(float) = key.as_ref().and_then(float_name) {
                    let at = key.as_ref().expect("a float key");
                    errors.at(
                        at,
                        format!(
                            "a float is not a key: `{float}` has no total order (`NaN`), so entries could not be sorted or found; write an integer or string key: `key = u64` or `key = String`"
                        ),
                    );
                    key = Some(syn::parse_quote_spanned!(at.span()=> u64));
                }
                field.ty = container_type(kind, &value, key.as_ref(), derived);
                let cfgs = cfgs_of(&field.attrs);
                members.push(Member {
                    ident,
                    name,
                    kind,
                    value,
                    key,
                    doc: doc_text(&field.attrs),
                    cfgs,
                    reserved,
                    derived,
                });
            }
        }
        _ => {
            errors.at(&item.ident, "`#[surface]` needs a struct with named fields");
            fatal = true;
        }
    }
    Model {
        item,
        members,
        plain,
        fatal,
    }
}

/// The `#[cfg]` attributes among `attrs`.
fn cfgs_of(attrs: &[Attribute]) -> Vec<Attribute> {
    attrs
        .iter()
        .filter(|a| a.path().is_ident("cfg"))
        .cloned()
        .collect()
}

/// Reads the arguments of `#[cell]`, `#[collection(key = K)]`, `#[stream]`, `#[event]`: the
/// key type of a collection, and whether the member is `derived`. Each mistake is reported and
/// read as what it most likely means (`derived = true` and `derive` are `derived`, `key: u32`
/// is `key = u32`), so the member expands as meant and one mistake gives one error.
fn parse_kind_args(attr: &Attribute, kind: Kind, errors: &mut Errors) -> (Option<Type>, bool) {
    let word = kind.row().word;
    let list = match (&attr.meta, kind) {
        (Meta::Path(_), Kind::Collection) => {
            errors.at(
                attr,
                "a collection needs its key type: write `#[collection(key = u32)]`",
            );
            return (None, false);
        }
        (Meta::Path(_), _) => return (None, false),
        (Meta::List(list), _) => list,
        (other, _) => {
            errors.at(other, format!("write `#[{word}]` or `#[{word}(derived)]`"));
            return (None, false);
        }
    };
    let valid: &[&str] = if kind == Kind::Collection {
        &["key", "derived"]
    } else {
        &["derived"]
    };
    let mut key = None;
    let mut derived = false;
    let before = errors.len();
    for item in crate::tokens::split_commas(list.tokens.clone()) {
        let mut tokens = item.clone().into_iter();
        let first = tokens.next();
        let second = tokens.next();
        let rest: TokenStream = tokens.collect();
        let Some(proc_macro2::TokenTree::Ident(w)) = &first else {
            errors.at(
                &item,
                format!(
                    "`#[{word}]` takes words, not {}: expected {}",
                    if matches!(first, Some(proc_macro2::TokenTree::Literal(_))) {
                        "a literal"
                    } else {
                        "this"
                    },
                    crate::errors::one_of(valid)
                ),
            );
            continue;
        };
        let sep = match &second {
            Some(proc_macro2::TokenTree::Punct(p)) => Some(p.clone()),
            _ => None,
        };
        match (w.to_string().as_str(), sep.as_ref().map(|p| p.as_char())) {
            ("derived", None) if second.is_none() => derived = true,
            ("derived", _) => {
                errors.at(&item, "`derived` is a word: write `derived` alone");
                derived = true;
            }
            ("key", _) if kind != Kind::Collection => errors.at(
                &item,
                format!("`#[{word}]` takes no arguments but `derived`: only a collection has a key; write `#[{word}]`"),
            ),
            ("key", Some(c @ (':' | '='))) => match syn::parse2::<Type>(rest.clone()) {
                Ok(ty) => {
                    if c == ':' {
                        errors.at(
                            sep.as_ref().expect("a separator"),
                            format!("write `key = {}`", names::rust_name(&ty)),
                        );
                    }
                    key = Some(ty);
                }
                Err(_) => errors.at(&item, "write the key type: `key = u32`"),
            },
            ("key", _) => errors.at(&item, "write the key type: `key = u32`"),
            (other, sep) => {
                errors.at(w, unknown_word(other, &format!("`#[{word}]`"), valid));
                // `derive`, `kye = u32`: the word meant, read as such.
                if crate::errors::did_you_mean(other, ["derived"]).is_some() {
                    derived = true;
                } else if kind == Kind::Collection
                    && sep == Some('=')
                    && crate::errors::did_you_mean(other, ["key"]).is_some()
                {
                    key = syn::parse2::<Type>(rest.clone()).ok();
                }
            }
        }
    }
    if kind == Kind::Collection && key.is_none() && !errors_since(errors, before) {
        errors.at(
            list,
            "a collection needs its key type: write `#[collection(key = u32)]`",
        );
    }
    (key, derived)
}

/// Whether an error was recorded after the first `before`.
fn errors_since(errors: &Errors, before: usize) -> bool {
    errors.len() > before
}

/// `T` of `Vec<T>`.
fn vec_item(ty: &Type) -> Option<Type> {
    let Type::Path(p) = ty else { return None };
    let last = p.path.segments.last()?;
    if last.ident != "Vec" {
        return None;
    }
    match &last.arguments {
        syn::PathArguments::AngleBracketed(a) => match a.args.first()? {
            syn::GenericArgument::Type(t) => Some(t.clone()),
            _ => None,
        },
        _ => None,
    }
}

/// `f32` or `f64` (also written `core::primitive::f64`), by name.
fn float_name(ty: &Type) -> Option<String> {
    let Type::Path(p) = ty else { return None };
    let last = p.path.segments.last()?;
    (p.qself.is_none() && last.arguments.is_none() && (last.ident == "f32" || last.ident == "f64"))
        .then(|| last.ident.to_string())
}

/// The value type inside a member type written with its container (`Cell<Load>` → `Load`,
/// `Collection<u32, Process>` → `Process` and its key `u32`), if it was.
fn unwrap_container(ty: &Type) -> Option<(String, Option<Type>, Type)> {
    let Type::Path(p) = ty else { return None };
    let last = p.path.segments.last()?;
    let container = last.ident.to_string();
    if !["Cell", "Collection", "Stream", "Event", "ReadOnly"].contains(&container.as_str()) {
        return None;
    }
    let syn::PathArguments::AngleBracketed(args) = &last.arguments else {
        return None;
    };
    let types: Vec<&Type> = args
        .args
        .iter()
        .filter_map(|a| match a {
            syn::GenericArgument::Type(t) => Some(t),
            _ => None,
        })
        .collect();
    match types.as_slice() {
        // `ReadOnly<Cell<Load>>`: the derived form, written out.
        [inner] if container == "ReadOnly" => unwrap_container(inner),
        [value] => Some((container, None, (*value).clone())),
        [key, value] => Some((container, Some((*key).clone()), (*value).clone())),
        _ => None,
    }
}

/// `::surface::Cell<Load>`, `::surface::Collection<u32, Process>` (in `::surface::ReadOnly<…>`
/// when derived), spanned at the value type.
fn container_type(kind: Kind, value: &Type, key: Option<&Type>, derived: bool) -> Type {
    let container = Ident::new(kind.row().container, value.span());
    let key = key.map(|k| quote!(#k,));
    let live = quote_spanned!(value.span()=> ::surface::#container<#key #value>);
    let ty = if derived {
        quote_spanned!(value.span()=> ::surface::ReadOnly<#live>)
    } else {
        live
    };
    syn::parse2(ty).expect("a path type")
}

/// `TypeSpec { rust: "Load", schema: schema_of::<Load> }`, spanned at the type.
fn type_spec(ty: &Type) -> TokenStream {
    let rust = names::rust_name(ty);
    quote_spanned! {ty.span()=>
        ::surface::TypeSpec { rust: #rust, schema: ::surface::__private::schema_of::<#ty> }
    }
}

/// The checks of one member's types, each spanned at the user's type.
///
/// Every generated body that needs a member's types to qualify starts with these: rustc then
/// reports a type that does not qualify once, with the message of `MemberValue`/`MemberKey`,
/// and drops the errors of the same type at the same span that these imply.
fn member_checks(m: &Member) -> TokenStream {
    let value = checks::member_value(&m.value);
    let key = m.key.as_ref().map(checks::member_key);
    quote!(#key #value)
}

fn emit(model: &Model) -> TokenStream {
    let item = &model.item;
    let members = members_impl(model);
    let client = emit_client(model);
    quote! {
        #item

        #members

        #client
    }
}

/// `ident` spanned like the rest of the expansion, so the error of a surface without its
/// `#[surface]` impl block (in `SPEC` and in `direct`) is one error at the attribute.
fn call_site_surface(ident: &Ident) -> Ident {
    let mut surface = ident.clone();
    surface.set_span(Span::call_site());
    surface
}

/// A member's tokens under its `#[cfg]`s (a block, for statements).
fn cfg_block(m: &Member, tokens: TokenStream) -> TokenStream {
    let cfgs = &m.cfgs;
    if cfgs.is_empty() {
        tokens
    } else {
        quote!(#(#cfgs)* { #tokens })
    }
}

/// `impl SurfaceMembers for Ops` (each member's checks once per body that needs them) and
/// `Ops::SPEC`.
fn members_impl(model: &Model) -> TokenStream {
    let ident = &model.item.ident;
    let name = ident.to_string();
    let doc = doc_text(&model.item.attrs);
    let client = names::client(ident);
    let surface = call_site_surface(ident);
    let members = &model.members;
    let checks: Vec<TokenStream> = members.iter().map(|m| cfg_block(m, member_checks(m))).collect();
    let specs = members.iter().map(member_spec);
    let arms = members.iter().map(live_arm);
    let other_fields = other_fields(model);
    quote! {
        #[automatically_derived]
        impl ::surface::SurfaceMembers for #ident {
            const NAME: &'static str = #name;
            const DOC: &'static str = #doc;
            const MEMBERS: &'static [::surface::MemberSpec] = {
                #(#checks)*
                &[#(#specs),*]
            };
            #other_fields
            type Client = #client;

            fn member(&self, name: &str) -> ::core::option::Option<&dyn ::surface::LiveMember> {
                #(#checks)*
                match name {
                    #(#arms)*
                    _ => ::core::option::Option::None,
                }
            }
        }

        impl #ident {
            /// The spec of this surface: every member and procedure with its kind, types and schemas.
            pub const SPEC: ::surface::SurfaceSpec = ::surface::SurfaceSpec {
                name: #name,
                doc: #doc,
                members: <Self as ::surface::SurfaceMembers>::MEMBERS,
                procedures: <#surface as ::surface::SurfaceProcedures>::PROCEDURES,
            };
        }

    }
}

/// `OTHER_FIELDS`, for `expose!`'s messages: the plain fields, and each member its `#[cfg]`
/// leaves out (`#[cfg(not(all(…)))]`); left to the trait's default when there is none.
fn other_fields(model: &Model) -> Option<TokenStream> {
    let plain = model
        .plain
        .iter()
        .map(|(name, cfgs)| quote!(#(#cfgs)* (#name, false)));
    let compiled_out = model.members.iter().filter(|m| !m.cfgs.is_empty()).map(|m| {
        let name = &m.name;
        let conditions = m
            .cfgs
            .iter()
            .filter_map(|c| c.meta.require_list().ok().map(|l| &l.tokens));
        quote!(#[cfg(not(all(#(#conditions),*)))] (#name, true))
    });
    let fields: Vec<TokenStream> = plain.chain(compiled_out).collect();
    (!fields.is_empty())
        .then(|| quote!(const OTHER_FIELDS: &'static [(&'static str, bool)] = &[#(#fields),*];))
}

/// One `MemberSpec`.
fn member_spec(m: &Member) -> TokenStream {
    let member = &m.name;
    let kind = Ident::new(m.kind.row().container, Span::call_site());
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
}

/// `"load" => Some(live_cell::<Load>(&self.load)),`
fn live_arm(m: &Member) -> TokenStream {
    let field = &m.ident;
    let member = &m.name;
    let cfgs = &m.cfgs;
    let row = m.kind.row();
    let live = Kind::function(
        if m.derived {
            row.derived_live_fn
        } else {
            row.live_fn
        },
        Span::call_site(),
    );
    let args = m.type_args();
    quote!(#(#cfgs)* #member => ::core::option::Option::Some(#live::<#args>(&self.#field)),)
}

/// The client's accessor of one member: `pub fn load(&self) -> CellClient<'_, Load>`.
fn accessor(m: &Member) -> TokenStream {
    let field = &m.ident;
    let member = &m.name;
    let cfgs = &m.cfgs;
    let checks = member_checks(m);
    let doc = doc_attrs(&if m.doc.is_empty() {
        format!("The `{member}` member.")
    } else {
        m.doc.clone()
    });
    let row = m.kind.row();
    let client = Kind::path(row.client);
    let args = m.type_args();
    // A derived member's client reads only: it has no setter to call.
    let (ty, client_fn) = if m.derived {
        (
            quote!(::surface::ReadOnly<#client<'_, #args>>),
            Kind::function(row.derived_client_fn, Span::call_site()),
        )
    } else {
        (
            quote!(#client<'_, #args>),
            Kind::function(row.client_fn, Span::call_site()),
        )
    };
    let new = quote!(#client_fn::<#args>(&**::surface::SurfaceClient::dispatch(self), #member));
    quote! {
        #(#cfgs)*
        #doc
        pub fn #field(&self) -> #ty {
            #checks
            #new
        }
    }
}

/// The typed client `OpsClient`: its accessors, `new`/`direct`/`procedures`, and `Deref` to
/// the namespaces (`::surface::Procedures<Ops>`, which the impl block's expansion fills).
fn emit_client(model: &Model) -> TokenStream {
    let ident = &model.item.ident;
    let vis = &model.item.vis;
    let name = ident.to_string();
    let client = names::client(ident);
    let surface = call_site_surface(ident);
    let accessors = model.members.iter().filter(|m| !m.reserved).map(accessor);
    let client_doc = doc_attrs(&format!(
        "The typed client of [`{name}`]: one method per member, procedures by namespace.\n\n\
         Namespaces are reached through `client.procedures()` and, by `Deref`, on the client\n\
         itself (`client.proc()`). A member's accessor always owns its name: a namespace\n\
         named like a member is reached through `client.procedures()` only."
    ));
    quote! {
        #client_doc
        #[derive(Clone)]
        #vis struct #client {
            procedures: ::surface::Procedures<#ident>,
        }

        #[automatically_derived]
        impl ::surface::SurfaceClient for #client {
            type Surface = #ident;
            fn from_dispatch(dispatch: ::surface::__private::Arc<dyn ::surface::Dispatch>) -> Self {
                #client { procedures: ::surface::Procedures::new(dispatch) }
            }
            fn dispatch(&self) -> &::surface::__private::Arc<dyn ::surface::Dispatch> {
                self.procedures.dispatch()
            }
        }

        #[automatically_derived]
        impl ::surface::__private::ClientOf<#ident> for #client {}

        impl #client {
            /// The client over `dispatch`.
            pub fn new(dispatch: ::surface::__private::Arc<dyn ::surface::Dispatch>) -> Self {
                <Self as ::surface::SurfaceClient>::from_dispatch(dispatch)
            }
            /// The client of `surface`, in this process.
            pub fn direct(surface: ::surface::__private::Arc<#ident>) -> Self {
                let _ = <#surface as ::surface::SurfaceProcedures>::PROCEDURES;
                ::surface::DirectDispatch::client(surface)
            }
            /// Every procedure namespace (`client.procedures().proc()`).
            pub fn procedures(&self) -> &::surface::Procedures<#ident> {
                &self.procedures
            }
            #(#accessors)*
        }

        impl ::core::ops::Deref for #client {
            type Target = ::surface::Procedures<#ident>;
            fn deref(&self) -> &::surface::Procedures<#ident> {
                &self.procedures
            }
        }
    }
}
