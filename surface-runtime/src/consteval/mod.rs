//! Every check the macros leave to const evaluation, in one place: `expose!`'s key lookup
//! ([`keys`]), the composition rules boot time shares ([`rules`]), `bundle!`'s roster
//! ([`static_bundle`]) and the argv face's reserved names (`cli`), all writing their message
//! through the one [`Sentence`] builder. The macros reach these through `__private` only.

#[cfg(feature = "cli")]
pub(crate) mod cli;
pub(crate) mod keys;
pub mod rules;
mod sentence;
pub(crate) mod static_bundle;

pub use sentence::Sentence;
