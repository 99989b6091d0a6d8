//! The type checks generated bodies start with, one per type the user wrote.
//!
//! Each calls a function of the runtime whose bound is the requirement, with the user's type
//! and every token spanned at it: `::surface::__private::assert::member_value::<Load>();`.
//! rustc reports a type that does not qualify at the type, in the trait's own words. Every
//! body that needs a type to qualify starts with its check: the errors are identical, so rustc
//! shows one, and it drops the errors that the body's later uses of the type imply at the
//! same span (the generated code passes each type as its own turbofish argument, so a later
//! use is blamed on the same token).

use proc_macro2::{Ident, Span, TokenStream};
use quote::quote_spanned;
use syn::Type;
use syn::spanned::Spanned;

/// `::surface::__private::assert::<check>::<ty>();`, spanned at `span`.
fn assert(check: &str, ty: &Type, span: Span) -> TokenStream {
    let check = Ident::new(check, span);
    quote_spanned!(span=> ::surface::__private::assert::#check::<#ty>();)
}

/// A member's value type.
pub fn member_value(ty: &Type) -> TokenStream {
    assert("member_value", ty, ty.span())
}

/// A collection's key type.
pub fn member_key(ty: &Type) -> TokenStream {
    assert("member_key", ty, ty.span())
}

/// A procedure's input type.
pub fn procedure_input(ty: &Type) -> TokenStream {
    assert("procedure_input", ty, ty.span())
}

/// A procedure's return type.
pub fn procedure_result(ty: &Type) -> TokenStream {
    assert("procedure_result", ty, ty.span())
}

/// A return type written `Result<T, E>` succeeds with `T`.
pub fn procedure_ok(output: &Type, ok: &Type) -> TokenStream {
    quote_spanned!(ok.span()=> ::surface::__private::assert::procedure_ok::<#output, #ok>();)
}

/// A tool's input type.
pub fn tool_input(ty: &Type) -> TokenStream {
    assert("tool_input", ty, ty.span())
}

/// A tool's return type.
pub fn tool_result(ty: &Type) -> TokenStream {
    assert("tool_result", ty, ty.span())
}

/// A `render = image` tool's return type, checked at `span` (the word `image`).
pub fn renders_image(ty: &Type, span: Span) -> TokenStream {
    assert("renders_image", ty, span)
}

/// A `render = audio` tool's return type, checked at `span` (the word `audio`).
pub fn renders_audio(ty: &Type, span: Span) -> TokenStream {
    assert("renders_audio", ty, span)
}
