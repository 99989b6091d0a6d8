//! Who is calling: the [`Principal`] a face identified (a verified bearer token's subject on
//! Streamable HTTP), with the scopes it was granted and the claims it was identified by.
//!
//! Plain data with no dependency on any face, so every face can hand one to the code it runs.

use serde::de::DeserializeOwned;
use serde_json::{Map, Value};

/// A caller identified by a face: an issuer, a subject within it, the scopes it holds and the
/// claims it was verified by.
///
/// ```
/// use surface_runtime::Principal;
/// let who = Principal::new("https://auth.example", "alice")
///     .with_scopes(["ops.read"])
///     .with_claim("tenant", "acme");
/// assert_eq!(who.subject(), "alice");
/// assert!(who.has_scope("ops.read"));
/// assert_eq!(who.claim::<String>("tenant").as_deref(), Some("acme"));
/// ```
#[derive(Clone, Debug, PartialEq)]
pub struct Principal {
    issuer: String,
    subject: String,
    scopes: Vec<String>,
    claims: Map<String, Value>,
    expires_at: Option<u64>,
}

impl Principal {
    /// `subject` as named by `issuer`, with no scopes and no claims.
    pub fn new(issuer: impl Into<String>, subject: impl Into<String>) -> Self {
        Principal {
            issuer: issuer.into(),
            subject: subject.into(),
            scopes: Vec::new(),
            claims: Map::new(),
            expires_at: None,
        }
    }

    /// Adds `scopes` (each one scope token, e.g. `ops.read`).
    pub fn with_scopes<S: Into<String>>(mut self, scopes: impl IntoIterator<Item = S>) -> Self {
        for scope in scopes {
            let scope = scope.into();
            if !self.scopes.contains(&scope) {
                self.scopes.push(scope);
            }
        }
        self
    }

    /// Adds the scopes of a space-separated `scope` claim (RFC 6749 §3.3).
    pub fn with_scope_string(self, scope: &str) -> Self {
        self.with_scopes(scope.split(' ').filter(|s| !s.is_empty()))
    }

    /// Records one claim the principal was verified by.
    pub fn with_claim(mut self, name: impl Into<String>, value: impl Into<Value>) -> Self {
        self.claims.insert(name.into(), value.into());
        self
    }

    /// Records every claim the principal was verified by.
    pub fn with_claims(mut self, claims: Map<String, Value>) -> Self {
        self.claims = claims;
        self
    }

    /// The time (seconds since the Unix epoch) after which the credential no longer holds.
    pub fn expiring_at(mut self, seconds: u64) -> Self {
        self.expires_at = Some(seconds);
        self
    }

    /// Who vouched for the subject (a token's `iss`).
    pub fn issuer(&self) -> &str {
        &self.issuer
    }

    /// Who is calling, as the issuer names them (a token's `sub`).
    pub fn subject(&self) -> &str {
        &self.subject
    }

    /// The scopes granted, in the order they were given.
    pub fn scopes(&self) -> &[String] {
        &self.scopes
    }

    /// Whether `scope` was granted, exactly as spelled.
    pub fn has_scope(&self, scope: &str) -> bool {
        self.scopes.iter().any(|s| s == scope)
    }

    /// Every claim the principal was verified by.
    pub fn claims(&self) -> &Map<String, Value> {
        &self.claims
    }

    /// One claim, typed; `None` when it is absent or not a `T`.
    pub fn claim<T: DeserializeOwned>(&self, name: &str) -> Option<T> {
        T::deserialize(self.claims.get(name)?).ok()
    }

    /// When the credential stops holding (seconds since the Unix epoch), if it says.
    pub fn expires_at(&self) -> Option<u64> {
        self.expires_at
    }

    /// Whether `other` is the same subject of the same issuer (whatever its scopes).
    pub fn same_subject(&self, other: &Principal) -> bool {
        self.issuer == other.issuer && self.subject == other.subject
    }
}
