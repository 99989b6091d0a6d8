//! Reading attribute arguments token by token, where a mistake must still be understood, and
//! the shapes `expose!` and `skill!` share.

use proc_macro2::{Span, TokenStream, TokenTree};
use syn::ext::IdentExt;
use syn::parse::{Parse, ParseStream};
use syn::{Ident, LitStr, Path, Token, braced};

/// `tokens` split at its top-level commas (empty items dropped).
pub fn split_commas(tokens: TokenStream) -> Vec<TokenStream> {
    let mut items = vec![TokenStream::new()];
    for tt in tokens {
        match &tt {
            TokenTree::Punct(p) if p.as_char() == ',' => items.push(TokenStream::new()),
            _ => items.last_mut().expect("one item at least").extend([tt]),
        }
    }
    items.retain(|i| !i.is_empty());
    items
}

/// What a `name!(Head { item, … })` macro says about each way its shape can be wrong.
pub struct Shape {
    /// Nothing at all was written.
    pub empty: String,
    /// The head is not a path.
    pub head: String,
    /// No braces follow the head.
    pub braces: String,
    /// What the items are called (`entries`, `fields`).
    pub items: &'static str,
    /// Something follows the braces.
    pub after: String,
}

/// `Head { item, item, … }` (a trailing comma allowed), each mistake in its shape reported
/// with `shape`'s sentence at the token: `expose!` and `skill!` read their input so.
pub fn head_and_items<T: Parse>(input: ParseStream, shape: &Shape) -> syn::Result<(Path, Vec<T>)> {
    if input.is_empty() {
        return Err(syn::Error::new(Span::call_site(), &shape.empty));
    }
    let head: Path = input
        .parse()
        .map_err(|e| syn::Error::new(e.span(), &shape.head))?;
    if !input.peek(syn::token::Brace) {
        return Err(input.error(&shape.braces));
    }
    let body;
    braced!(body in input);
    let mut items = Vec::new();
    while !body.is_empty() {
        items.push(body.parse()?);
        if body.is_empty() {
            break;
        }
        if body.peek(Token![;]) {
            return Err(body.error(format!(
                "{} are separated by `,`: write `,` instead of `;`",
                shape.items
            )));
        }
        body.parse::<Token![,]>()
            .map_err(|e| syn::Error::new(e.span(), format!("expected `,` between {}", shape.items)))?;
    }
    if !input.is_empty() {
        return Err(input.error(&shape.after));
    }
    Ok((head, items))
}

/// A key of an expose map as written: a procedure's quoted name or a member's bare one.
pub struct ExposeKey {
    pub key: String,
    pub span: Span,
    pub quoted: bool,
}

/// An expose key; a procedure's name written bare (`proc.kill`) is an error at it saying to
/// quote it, and anything else an error saying `expected`.
pub fn expose_key(input: ParseStream, expected: &str) -> syn::Result<ExposeKey> {
    if input.peek(LitStr) {
        let lit: LitStr = input.parse()?;
        return Ok(ExposeKey {
            key: lit.value(),
            span: lit.span(),
            quoted: true,
        });
    }
    if !input.peek(Ident::peek_any) {
        return Err(input.error(expected));
    }
    let ident: Ident = input.call(Ident::parse_any)?;
    if input.peek(Token![.]) {
        // `proc.spawn`: say how to write it rather than what token was expected next.
        let mut name = ident.unraw().to_string();
        while input.peek(Token![.]) {
            input.parse::<Token![.]>()?;
            name.push('.');
            if let Ok(segment) = input.call(Ident::parse_any) {
                name.push_str(&segment.unraw().to_string());
            }
        }
        return Err(syn::Error::new(
            ident.span(),
            format!("a procedure's key is quoted: write \"{name}\""),
        ));
    }
    Ok(ExposeKey {
        key: ident.unraw().to_string(),
        span: ident.span(),
        quoted: false,
    })
}
