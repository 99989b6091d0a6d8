//! What a verifier is: the trait [`TokenVerifier`] turns a bearer token into a [`Principal`] by,
//! and the [`Refusal`] it answers otherwise.

use crate::Principal;
use std::future::Future;
use std::pin::Pin;

/// Why a token was refused: the `error_description` of the `401` it answers.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Refusal {
    description: String,
}

impl Refusal {
    /// A refusal saying `description` (one sentence, no token in it).
    pub fn new(description: impl Into<String>) -> Self {
        Refusal {
            description: description.into(),
        }
    }

    /// What was wrong.
    pub fn description(&self) -> &str {
        &self.description
    }
}

impl std::fmt::Display for Refusal {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.description)
    }
}

impl std::error::Error for Refusal {}

/// Turns a bearer token into the [`Principal`] it names, or refuses it.
///
/// The JWT and introspection verifiers behind [`Auth::jwt`](super::Auth::jwt) and [`Auth::introspection`](super::Auth::introspection)
/// implement it; implement it yourself for anything else and hand it to [`Auth::custom`](super::Auth::custom).
///
/// ```
/// use surface_runtime::Principal;
/// use surface_runtime::auth::{Refusal, TokenVerifier};
///
/// /// One fixed token, for a demo.
/// struct Fixed;
///
/// impl TokenVerifier for Fixed {
///     async fn verify(&self, token: &str) -> Result<Principal, Refusal> {
///         if token == "let-me-in" {
///             Ok(Principal::new("https://demo", "demo-user").with_scopes(["ops.read"]))
///         } else {
///             Err(Refusal::new("unknown token"))
///         }
///     }
/// }
/// ```
pub trait TokenVerifier: Send + Sync + 'static {
    /// Verifies `token` (the bearer token exactly as sent). Never log it.
    fn verify(&self, token: &str) -> impl Future<Output = Result<Principal, Refusal>> + Send;
}

type Verified<'a> = Pin<Box<dyn Future<Output = Result<Principal, Refusal>> + Send + 'a>>;

/// [`TokenVerifier`] as an object.
pub(super) trait DynVerifier: Send + Sync {
    fn verify_boxed<'a>(&'a self, token: &'a str) -> Verified<'a>;
}

impl<T: TokenVerifier> DynVerifier for T {
    fn verify_boxed<'a>(&'a self, token: &'a str) -> Verified<'a> {
        Box::pin(self.verify(token))
    }
}
