//! Reading attribute arguments token by token, where a mistake must still be understood.

use proc_macro2::{TokenStream, TokenTree};

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
