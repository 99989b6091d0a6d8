//! The error context every expander threads through (serde_derive's `Ctxt`, in small).
//!
//! Validation pushes every problem it finds, each spanned at the user's token; expansion then
//! emits all of them together with the best-effort output, so one build shows every mistake
//! and a mistake in one member does not cascade into errors about the others.

use proc_macro2::TokenStream;
use std::fmt::Display;

/// Collected errors of one macro invocation.
#[derive(Default)]
pub struct Errors {
    errors: Vec<syn::Error>,
}

impl Errors {
    pub fn new() -> Self {
        Self::default()
    }

    /// Records an error at `tokens`.
    pub fn at(&mut self, tokens: impl quote::ToTokens, message: impl Display) {
        self.errors.push(syn::Error::new_spanned(tokens, message));
    }

    /// Records an already-built error.
    pub fn push(&mut self, error: syn::Error) {
        self.errors.push(error);
    }

    /// Records a darling error (which may hold several).
    pub fn darling(&mut self, error: darling::Error) {
        for e in error.flatten() {
            self.errors.push(e.into());
        }
    }

    /// Keeps the value of `r`, recording its error.
    pub fn take<T>(&mut self, r: syn::Result<T>) -> Option<T> {
        r.map_err(|e| self.push(e)).ok()
    }

    /// How many errors were recorded.
    pub fn len(&self) -> usize {
        self.errors.len()
    }

    /// Whether nothing was recorded.
    pub fn is_empty(&self) -> bool {
        self.errors.is_empty()
    }

    /// Every error as `compile_error!` invocations.
    pub fn to_compile_errors(&self) -> TokenStream {
        self.errors.iter().map(syn::Error::to_compile_error).collect()
    }
}

/// The closest word to `word` among `words`, if any is close enough to be a likely typo.
pub fn did_you_mean<'a>(word: &str, words: impl IntoIterator<Item = &'a str>) -> Option<&'a str> {
    words
        .into_iter()
        .map(|w| (edit_distance(word, w), w))
        .filter(|(d, w)| *d <= (w.len().max(word.len()) / 3).max(1))
        .min_by_key(|(d, _)| *d)
        .map(|(_, w)| w)
}

/// `` `a`, `b` or `c` ``
pub fn one_of(words: &[&str]) -> String {
    let quoted: Vec<String> = words.iter().map(|w| format!("`{w}`")).collect();
    match quoted.split_last() {
        Some((last, [])) => last.clone(),
        Some((last, rest)) => format!("{} or {last}", rest.join(", ")),
        None => String::new(),
    }
}

/// The message for an unknown word in one of our attributes.
pub fn unknown_word(word: &str, place: &str, valid: &[&str]) -> String {
    let hint = did_you_mean(word, valid.iter().copied())
        .map(|w| format!("did you mean `{w}`? "))
        .unwrap_or_default();
    format!(
        "unknown word `{word}` in {place}: {hint}expected {}",
        one_of(valid)
    )
}

/// Optimal string alignment distance: Levenshtein plus adjacent transpositions (`kye` → `key`
/// is one edit, as rustc counts it).
fn edit_distance(a: &str, b: &str) -> usize {
    let a: Vec<char> = a.chars().collect();
    let b: Vec<char> = b.chars().collect();
    // d[i][j]: the distance between a[..i] and b[..j].
    let mut d = vec![vec![0; b.len() + 1]; a.len() + 1];
    for (i, row) in d.iter_mut().enumerate() {
        row[0] = i;
    }
    for (j, cell) in d[0].iter_mut().enumerate() {
        *cell = j;
    }
    for i in 1..=a.len() {
        for j in 1..=b.len() {
            let cost = usize::from(a[i - 1] != b[j - 1]);
            d[i][j] = (d[i - 1][j] + 1).min(d[i][j - 1] + 1).min(d[i - 1][j - 1] + cost);
            if i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1] {
                d[i][j] = d[i][j].min(d[i - 2][j - 2] + 1);
            }
        }
    }
    d[a.len()][b.len()]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn suggests_close_words_only() {
        assert_eq!(did_you_mean("mutate", ["mutates", "read_only"]), Some("mutates"));
        assert_eq!(did_you_mean("zzz", ["mutates", "read_only"]), None);
        assert_eq!(did_you_mean("kye", ["key"]), Some("key"));
        assert_eq!(did_you_mean("resourse", ["resource", "tool"]), Some("resource"));
        assert_eq!(one_of(&["a", "b", "c"]), "`a`, `b` or `c`");
    }
}
