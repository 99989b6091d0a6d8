//! `#[derive(Elicit)]`: marks a struct as an elicitation form, or a unit enum as a choice in
//! one, and checks the shape at compile time.
//!
//! On a struct of named fields it implements `ElicitForm` and asks, at each field's type,
//! that the type be a form field (`ElicitField`: a string, number, integer, boolean, a choice,
//! a list of choices, or an `Option` of one of these), so a nested struct is an error at that
//! field. On an enum it refuses any variant with data (at the variant) and implements
//! `ElicitField` and `ElicitChoice`. Anything else is an error at the item.

use proc_macro2::TokenStream;
use quote::{quote, quote_spanned};
use syn::spanned::Spanned;
use syn::{Data, DeriveInput, Fields};

pub fn expand(input: DeriveInput) -> TokenStream {
    match build(&input) {
        Ok(tokens) => tokens,
        Err(e) => e.to_compile_error(),
    }
}

/// Whether a field has `#[serde(skip)]` or `#[serde(skip_deserializing)]`: not in the form.
fn skipped(field: &syn::Field) -> bool {
    field.attrs.iter().any(|a| {
        a.path().is_ident("serde") && {
            let mut skip = false;
            let _ = a.parse_nested_meta(|m| {
                if m.path.is_ident("skip") || m.path.is_ident("skip_deserializing") {
                    skip = true;
                }
                // Consume any value (`rename = "x"`) so parsing goes on.
                if m.input.peek(syn::Token![=]) {
                    let _: syn::Expr = m.value()?.parse()?;
                } else if m.input.peek(syn::token::Paren) {
                    let _ = m.parse_nested_meta(|inner| {
                        if inner.input.peek(syn::Token![=]) {
                            let _: syn::Expr = inner.value()?.parse()?;
                        }
                        Ok(())
                    });
                }
                Ok(())
            });
            skip
        }
    })
}

fn build(input: &DeriveInput) -> syn::Result<TokenStream> {
    let name = &input.ident;
    let (impl_generics, ty_generics, where_clause) = input.generics.split_for_impl();
    match &input.data {
        Data::Struct(s) => {
            let Fields::Named(fields) = &s.fields else {
                return Err(syn::Error::new(
                    s.fields.span(),
                    "an elicitation form is a struct of named fields: each becomes a field of the form",
                ));
            };
            let checks = fields.named.iter().filter(|f| !skipped(f)).map(|f| {
                let ty = &f.ty;
                quote_spanned!(ty.span()=> let () = <#ty as ::surface::ask::ElicitField>::__QUALIFIES;)
            });
            Ok(quote! {
                impl #impl_generics ::surface::ask::ElicitForm for #name #ty_generics #where_clause {}
                const _: () = {
                    #[allow(dead_code)]
                    fn check #impl_generics () #where_clause {
                        #(#checks)*
                    }
                };
            })
        }
        Data::Enum(e) => {
            // A variant with data is reported at the variant as written (`Chat(String)`, not
            // its doc comment), and the choice is still implemented, so a form using it does
            // not fail too.
            let error = e.variants.iter().find(|v| !matches!(v.fields, Fields::Unit)).map(|v| {
                let (ident, fields) = (&v.ident, &v.fields);
                syn::Error::new_spanned(
                    quote!(#ident #fields),
                    format!(
                        "an elicitation choice is a unit variant: `{ident}` carries data, which a form cannot ask for; write `{ident},` and ask for the data in a field of its own"
                    ),
                )
                .to_compile_error()
            });
            Ok(quote! {
                impl #impl_generics ::surface::ask::ElicitField for #name #ty_generics #where_clause {}
                impl #impl_generics ::surface::ask::ElicitChoice for #name #ty_generics #where_clause {}
                #error
            })
        }
        Data::Union(u) => Err(syn::Error::new(
            u.union_token.span(),
            "`Elicit` derives on a struct (a form) or a unit enum (a choice), not a union",
        )),
    }
}
