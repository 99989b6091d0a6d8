//! The type checks generated bodies start with, one per type the user wrote.
//!
//! Each names a hidden constant of the rule the type must meet, with the user's type and every
//! token spanned at it: `let () = <Load as ::surface::IsMemberValue>::__QUALIFIES;`. rustc
//! reports a type that does not qualify at the type, in the rule's own words
//! (`#[diagnostic::on_unimplemented]`), and — the obligation being the path's own, not a
//! function's bound — with no note pointing into the runtime's source. Every body that needs
//! a type to qualify starts with its check: the errors are identical, so rustc shows one, and
//! it drops the errors that the body's later uses of the type imply at the same span (the
//! generated code passes each type as its own turbofish argument, so a later use is blamed on
//! the same token).

use proc_macro2::{Span, TokenStream};
use quote::quote_spanned;
use syn::Type;
use syn::spanned::Spanned;

/// `let () = <ty as ::surface::Trait>::__QUALIFIES;`, spanned at `span`.
fn qualifies(ty: &Type, bound: TokenStream, span: Span) -> TokenStream {
    quote_spanned!(span=> let () = <#ty as ::surface::#bound>::__QUALIFIES;)
}

/// A member's value type.
pub fn member_value(ty: &Type) -> TokenStream {
    qualifies(ty, quote_spanned!(ty.span()=> IsMemberValue), ty.span())
}

/// A collection's key type.
pub fn member_key(ty: &Type) -> TokenStream {
    qualifies(ty, quote_spanned!(ty.span()=> IsMemberKey), ty.span())
}

/// A procedure's input type.
pub fn procedure_input(ty: &Type) -> TokenStream {
    qualifies(ty, quote_spanned!(ty.span()=> IsProcedureInput), ty.span())
}

/// A procedure's return type.
pub fn procedure_result(ty: &Type) -> TokenStream {
    qualifies(ty, quote_spanned!(ty.span()=> ProcedureResult), ty.span())
}

/// A return type written `Result<T, E>` succeeds with `T` (a `Result` alias with its arguments
/// swapped does not).
pub fn procedure_ok(output: &Type, ok: &Type) -> TokenStream {
    quote_spanned!(ok.span()=> let () = <<#output as ::surface::IsResult>::Ok as ::surface::SucceedsWith<#ok>>::__QUALIFIES;)
}

/// A tool's input type.
pub fn tool_input(ty: &Type) -> TokenStream {
    qualifies(ty, quote_spanned!(ty.span()=> IsToolInput), ty.span())
}

/// A tool's return type.
pub fn tool_result(ty: &Type) -> TokenStream {
    qualifies(ty, quote_spanned!(ty.span()=> ToolResult), ty.span())
}

/// A `render = image` tool's return type, checked at `span` (the word `image`).
pub fn renders_image(ty: &Type, span: Span) -> TokenStream {
    qualifies(ty, quote_spanned!(span=> RendersImage), span)
}

/// A `render = audio` tool's return type, checked at `span` (the word `audio`).
pub fn renders_audio(ty: &Type, span: Span) -> TokenStream {
    qualifies(ty, quote_spanned!(span=> RendersAudio), span)
}
