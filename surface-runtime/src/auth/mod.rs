//! Bearer-token authentication for Streamable HTTP (feature `auth`): the server as an OAuth 2.1
//! resource server, as the MCP authorization specification asks of it in both protocol eras.
//!
//! [`Auth`] is what [`HttpOptions::auth`](crate::mcp::HttpOptions::auth) takes:
//!
//! - [`Auth::jwt`]: JWT access tokens, checked against the issuer's signing keys (its `jwks_uri`,
//!   found in its RFC 8414 `/.well-known/oauth-authorization-server` or OpenID
//!   `/.well-known/openid-configuration` document), their `iss`, their `aud` (it must contain the
//!   server's resource URI, RFC 8707), `exp` (required, RFC 9068) and `nbf`, with
//!   [`LEEWAY`] of clock skew either way, and an algorithm allow-list ([`ALGORITHMS`]: no `none`,
//!   no HMAC, so a public key can never be used as a shared secret);
//! - [`Auth::introspection`]: opaque tokens, asked of the issuer's RFC 7662 introspection
//!   endpoint;
//! - [`Auth::custom`]: any [`TokenVerifier`] of your own.
//!
//! Every request to the endpoint is authenticated before anything else runs. A request without
//! a token answers `401` with `WWW-Authenticate: Bearer resource_metadata="…", scope="…"`; an
//! `Authorization` header that is not one `Bearer <token>` answers `400`; a token the verifier
//! refuses answers `401` with `error="invalid_token"`. Tokens are read only from the header,
//! never from the query string, are removed from the request before it is dispatched (so no
//! handler, log line or bridged daemon sees one), and are never logged.
//!
//! The server publishes its Protected Resource Metadata (RFC 9728) at
//! `/.well-known/oauth-protected-resource` and at the path-inserted
//! `/.well-known/oauth-protected-resource/<path>`, the same document at both.
//!
//! Bounds: a token longer than [`MAX_TOKEN`] bytes is refused unread; an authorization server
//! document (metadata, key set, introspection answer) larger than [`MAX_DOCUMENT`] or slower
//! than [`FETCH_TIMEOUT`] is refused (the keys already held stay); the key set is fetched again
//! for an unknown key id at most once per [`REFETCH_INTERVAL`]; at most [`MAX_KEYS`] keys are
//! kept; verified tokens are remembered by their SHA-256 until they expire, at most
//! [`MAX_CACHED_TOKENS`] of them (and a kept-alive connection remembers the one header its
//! last request carried, trusted no longer than the cache trusts its token, so the next
//! request with it costs one comparison); at most [`MAX_INTROSPECTIONS`] introspection requests are in
//! flight at once, so a flood of distinct opaque tokens cannot turn into a flood at the issuer
//! (a token that waits longer than [`FETCH_TIMEOUT`] for its turn is refused).
//!
//! Authorization servers are reached over plain `http://` only in this version: put a TLS
//! terminating proxy in front of a remote one.

mod cache;
mod fetch;
mod introspection;
mod jwt;
mod verifier;

use crate::Principal;
use std::sync::Arc;
use std::time::{Duration, Instant};

pub use cache::MAX_CACHED_TOKENS;
pub use fetch::{FETCH_TIMEOUT, MAX_DOCUMENT};
pub use introspection::MAX_INTROSPECTIONS;
pub use jwt::{ALGORITHMS, LEEWAY, MAX_KEYS, REFETCH_INTERVAL};
use verifier::DynVerifier;
pub use verifier::{Refusal, TokenVerifier};

/// The longest bearer token read, in bytes (16 KiB): a longer one is refused without being
/// decoded, so a hostile header (a megabyte of token, a hundred thousand claims) costs nothing.
pub const MAX_TOKEN: usize = 16 * 1024;

/// How Streamable HTTP authenticates its callers: a verifier, and what the server publishes
/// about itself as a protected resource.
///
/// ```
/// use surface_runtime::auth::Auth;
/// let auth = Auth::jwt("https://auth.example", "https://ops.example/mcp")
///     .scopes_supported(["ops.read", "ops.admin"])
///     .challenge_scopes(["ops.read"]);
/// assert_eq!(auth.resource(), "https://ops.example/mcp");
/// assert_eq!(auth.authorization_servers(), ["https://auth.example"]);
/// ```
#[derive(Clone)]
#[must_use = "hand it to `HttpOptions::auth`"]
pub struct Auth {
    verifier: Arc<dyn DynVerifier>,
    resource: String,
    authorization_servers: Vec<String>,
    scopes_supported: Vec<String>,
    challenge_scopes: Vec<String>,
    cache: Arc<cache::TokenCache>,
}

impl std::fmt::Debug for Auth {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Auth")
            .field("resource", &self.resource)
            .field("authorization_servers", &self.authorization_servers)
            .field("scopes_supported", &self.scopes_supported)
            .finish_non_exhaustive()
    }
}

impl Auth {
    /// JWT access tokens issued by `issuer` for `audience` (this server's resource URI, e.g.
    /// `https://ops.example/mcp`; a token whose `aud` does not contain it is refused). Both
    /// are used exactly as given: the token's `iss` must equal `issuer`, and the metadata
    /// names `issuer` as the authorization server and `audience` as the resource.
    pub fn jwt(issuer: impl Into<String>, audience: impl Into<String>) -> Auth {
        let (issuer, audience) = (issuer.into(), audience.into());
        let verifier = jwt::JwtVerifier::new(issuer.clone(), audience.clone());
        Auth::with(Arc::new(verifier), issuer, audience, cache::UNTIL_EXPIRY)
    }

    /// Opaque (or any) access tokens, each asked of `issuer`'s RFC 7662 introspection endpoint
    /// (found in its metadata), authenticating as `client_id` / `client_secret` (HTTP Basic).
    /// The answer must be `active`, name `issuer` if it names an issuer, and have an `aud`
    /// containing `audience`. An answer is remembered for at most a minute, so a revoked token
    /// stops working within one.
    pub fn introspection(
        issuer: impl Into<String>,
        audience: impl Into<String>,
        client_id: impl Into<String>,
        client_secret: impl Into<String>,
    ) -> Auth {
        let (issuer, audience) = (issuer.into(), audience.into());
        let verifier = introspection::Introspection::new(
            issuer.clone(),
            audience.clone(),
            client_id.into(),
            client_secret.into(),
        );
        Auth::with(Arc::new(verifier), issuer, audience, Duration::from_secs(60))
    }

    /// Tokens judged by `verifier`. Say where tokens come from and what this server is with
    /// [`authorization_server`](Self::authorization_server) and [`resource`](Self::with_resource)
    /// (the metadata and the challenge name them). Its answers are not remembered unless
    /// [`cache_for`](Self::cache_for) says how long.
    pub fn custom(verifier: impl TokenVerifier) -> Auth {
        Auth::with(Arc::new(verifier), String::new(), String::new(), Duration::ZERO)
    }

    fn with(verifier: Arc<dyn DynVerifier>, issuer: String, resource: String, ttl: Duration) -> Auth {
        Auth {
            verifier,
            resource,
            authorization_servers: if issuer.is_empty() {
                Vec::new()
            } else {
                vec![issuer]
            },
            scopes_supported: Vec::new(),
            challenge_scopes: Vec::new(),
            cache: Arc::new(cache::TokenCache::new(ttl)),
        }
    }

    /// This server's resource URI (the metadata's `resource`).
    pub fn with_resource(mut self, resource: impl Into<String>) -> Self {
        self.resource = resource.into();
        self
    }

    /// Adds an authorization server the metadata names.
    pub fn authorization_server(mut self, issuer: impl Into<String>) -> Self {
        self.authorization_servers.push(issuer.into());
        self
    }

    /// The scopes the metadata lists as `scopes_supported`.
    pub fn scopes_supported<S: Into<String>>(mut self, scopes: impl IntoIterator<Item = S>) -> Self {
        self.scopes_supported = scopes.into_iter().map(Into::into).collect();
        self
    }

    /// The scopes a first call needs, named in the `401` challenge's `scope` (none: no `scope`).
    pub fn challenge_scopes<S: Into<String>>(mut self, scopes: impl IntoIterator<Item = S>) -> Self {
        self.challenge_scopes = scopes.into_iter().map(Into::into).collect();
        self
    }

    /// How long a verified token is remembered at most (never past its expiry): `Duration::ZERO`
    /// asks the verifier every time.
    pub fn cache_for(mut self, ttl: Duration) -> Self {
        self.cache = Arc::new(cache::TokenCache::new(ttl));
        self
    }

    /// The resource URI this server publishes.
    pub fn resource(&self) -> &str {
        &self.resource
    }

    /// The authorization servers the metadata names.
    pub fn authorization_servers(&self) -> &[String] {
        &self.authorization_servers
    }

    /// See [`scopes_supported`](Self::scopes_supported).
    pub fn supported_scopes(&self) -> &[String] {
        &self.scopes_supported
    }

    /// See [`challenge_scopes`](Self::challenge_scopes).
    pub fn first_scopes(&self) -> &[String] {
        &self.challenge_scopes
    }

    /// Verifies `token`: from the cache of verified tokens when it is there and unexpired,
    /// else by the verifier (and then remembered).
    pub async fn verify(&self, token: &str) -> Result<Principal, Refusal> {
        self.verify_shared(token).await.map(|(p, _)| (*p).clone())
    }

    /// [`verify`](Self::verify), the principal shared with the cache (a request with a token
    /// already verified costs a hash and a lookup, no copy), and until when the cache trusts
    /// it without asking the verifier again (`None`: it does not remember it).
    pub(crate) async fn verify_shared(
        &self,
        token: &str,
    ) -> Result<(Arc<Principal>, Option<Instant>), Refusal> {
        if token.len() > MAX_TOKEN {
            return Err(Refusal::new(format!(
                "the token is longer than {MAX_TOKEN} bytes"
            )));
        }
        let key = cache::TokenCache::key(token);
        if let Some((principal, until)) = self.cache.get(&key) {
            return Ok((principal, Some(until)));
        }
        let principal = Arc::new(self.verifier.verify_boxed(token).await?);
        let until = self.cache.put(key, &principal);
        Ok((principal, until))
    }
}
