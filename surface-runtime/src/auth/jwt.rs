//! JWT access tokens (RFC 9068) verified with `jsonwebtoken` against the issuer's published
//! key set, which is discovered from the issuer's metadata, cached, and fetched again on an
//! unknown key id at a bounded rate.

use super::fetch;
use super::{Refusal, TokenVerifier};
use crate::Principal;
use crate::sync::{read, write};
use jsonwebtoken::jwk::{Jwk, PublicKeyUse};
use jsonwebtoken::{Algorithm, DecodingKey, Validation};
use serde_json::{Map, Value};
use std::collections::HashMap;
use std::sync::RwLock;
use std::time::{Duration, Instant};

/// The signature algorithms accepted: the asymmetric ones only. `none` is not an algorithm
/// here, and no HMAC, so a published public key can never be used as a shared secret.
pub const ALGORITHMS: &[Algorithm] = &[
    Algorithm::RS256,
    Algorithm::RS384,
    Algorithm::RS512,
    Algorithm::PS256,
    Algorithm::PS384,
    Algorithm::PS512,
    Algorithm::ES256,
    Algorithm::ES384,
    Algorithm::EdDSA,
];

/// The clock skew allowed either way on `exp` and `nbf` (30 s).
pub const LEEWAY: Duration = Duration::from_secs(30);

/// The key set is fetched again for an unknown key id at most this often (1 s), however many
/// tokens name unknown keys.
pub const REFETCH_INTERVAL: Duration = Duration::from_secs(1);

/// At most this many keys of a key set are kept (64); the rest are ignored.
pub const MAX_KEYS: usize = 64;

pub(super) struct JwtVerifier {
    issuer: String,
    audience: String,
    keys: RwLock<Keys>,
    /// When the key set was last fetched; held while fetching, so fetches never overlap.
    fetched: tokio::sync::Mutex<Option<Instant>>,
}

#[derive(Default)]
struct Keys {
    /// Where the keys are (found in the issuer's metadata once).
    jwks_uri: Option<String>,
    by_id: HashMap<String, Key>,
    /// Keys without a `kid`, tried for a token without one.
    unnamed: Vec<Key>,
}

#[derive(Clone)]
struct Key {
    decoding: DecodingKey,
    /// The `alg` the key set pins the key to, if it does.
    alg: Option<String>,
}

impl JwtVerifier {
    pub(super) fn new(issuer: String, audience: String) -> JwtVerifier {
        JwtVerifier {
            issuer,
            audience,
            keys: RwLock::new(Keys::default()),
            fetched: tokio::sync::Mutex::new(None),
        }
    }

    fn key(&self, kid: Option<&str>, alg: Algorithm) -> Option<Key> {
        let keys = read(&self.keys);
        let fits = |key: &&Key| {
            key.decoding.family() == alg.family()
                && key
                    .alg
                    .as_deref()
                    .is_none_or(|pinned| pinned == format!("{alg:?}"))
        };
        match kid {
            Some(kid) => keys.by_id.get(kid).filter(fits).cloned(),
            None => keys.unnamed.iter().find(fits).cloned(),
        }
    }

    /// Fetches the key set again, unless it was fetched less than [`REFETCH_INTERVAL`] ago.
    /// A failed fetch keeps the keys already held.
    async fn refresh(&self) {
        let mut fetched = self.fetched.lock().await;
        if fetched.is_some_and(|at| at.elapsed() < REFETCH_INTERVAL) {
            return;
        }
        *fetched = Some(Instant::now());
        match self.fetch_keys().await {
            Ok((jwks_uri, by_id, unnamed)) => {
                *write(&self.keys) = Keys {
                    jwks_uri: Some(jwks_uri),
                    by_id,
                    unnamed,
                };
            }
            Err(e) => tracing::warn!(
                "surface-mcp: could not fetch the signing keys of {}: {e}",
                self.issuer
            ),
        }
    }

    async fn fetch_keys(&self) -> Result<(String, HashMap<String, Key>, Vec<Key>), String> {
        let known = read(&self.keys).jwks_uri.clone();
        let jwks_uri = match known {
            Some(uri) => uri,
            None => fetch::issuer_metadata(&self.issuer)
                .await?
                .get("jwks_uri")
                .and_then(Value::as_str)
                .ok_or_else(|| format!("the metadata of {} has no jwks_uri", self.issuer))?
                .to_owned(),
        };
        let document = fetch::get_json(&jwks_uri).await?;
        let keys = document
            .get("keys")
            .and_then(Value::as_array)
            .ok_or_else(|| format!("{jwks_uri} is not a JWK set"))?;
        let (mut by_id, mut unnamed) = (HashMap::new(), Vec::new());
        // One key at a time, so one key of a kind we do not know does not spoil the rest.
        for jwk in keys.iter().take(MAX_KEYS) {
            let Ok(jwk) = serde_json::from_value::<Jwk>(jwk.clone()) else {
                continue;
            };
            if matches!(jwk.common.public_key_use, Some(ref u) if *u != PublicKeyUse::Signature) {
                continue;
            }
            let Ok(decoding) = DecodingKey::from_jwk(&jwk) else {
                continue;
            };
            let key = Key {
                decoding,
                alg: jwk.common.key_algorithm.map(|a| a.to_string()),
            };
            match jwk.common.key_id {
                Some(kid) => {
                    by_id.insert(kid, key);
                }
                None => unnamed.push(key),
            }
        }
        Ok((jwks_uri, by_id, unnamed))
    }

    fn validation(&self, alg: Algorithm) -> Validation {
        let mut validation = Validation::new(alg);
        validation.set_issuer(&[&self.issuer]);
        validation.set_audience(&[&self.audience]);
        validation.set_required_spec_claims(&["exp", "iss", "aud", "sub"]);
        validation.validate_nbf = true;
        validation.leeway = LEEWAY.as_secs();
        validation
    }
}

impl TokenVerifier for JwtVerifier {
    async fn verify(&self, token: &str) -> Result<Principal, Refusal> {
        let header =
            jsonwebtoken::decode_header(token).map_err(|_| Refusal::new("the token is not a signed JWT"))?;
        if !ALGORITHMS.contains(&header.alg) {
            return Err(Refusal::new(format!(
                "the token is signed with {:?}, which this server does not accept",
                header.alg
            )));
        }
        let kid = header.kid.as_deref();
        let key = match self.key(kid, header.alg) {
            Some(key) => key,
            None => {
                self.refresh().await;
                self.key(kid, header.alg).ok_or_else(|| {
                    Refusal::new("the token is signed with a key the issuer does not publish")
                })?
            }
        };
        let data =
            jsonwebtoken::decode::<Map<String, Value>>(token, &key.decoding, &self.validation(header.alg))
                .map_err(|e| Refusal::new(describe(e.kind())))?;
        principal(&self.issuer, data.claims)
    }
}

/// A verified claim set as a principal: its `sub`, its scopes (`scope`, space-separated, or
/// an `scp` array), its `exp`.
pub(super) fn principal(issuer: &str, claims: Map<String, Value>) -> Result<Principal, Refusal> {
    let subject = claims
        .get("sub")
        .and_then(Value::as_str)
        .ok_or_else(|| Refusal::new("the token names no subject (sub)"))?
        .to_owned();
    let mut principal = Principal::new(issuer, subject);
    if let Some(scope) = claims.get("scope").and_then(Value::as_str) {
        principal = principal.with_scope_string(scope);
    } else if let Some(scp) = claims.get("scp").and_then(Value::as_array) {
        principal = principal.with_scopes(scp.iter().filter_map(Value::as_str));
    }
    if let Some(exp) = claims.get("exp").and_then(Value::as_u64) {
        principal = principal.expiring_at(exp);
    }
    Ok(principal.with_claims(claims))
}

fn describe(kind: &jsonwebtoken::errors::ErrorKind) -> String {
    use jsonwebtoken::errors::ErrorKind as K;
    match kind {
        K::ExpiredSignature => "the token has expired".to_owned(),
        K::ImmatureSignature => "the token is not valid yet (nbf)".to_owned(),
        K::InvalidIssuer => "the token was issued by another issuer".to_owned(),
        K::InvalidAudience => "the token was issued for another resource (aud)".to_owned(),
        K::InvalidSignature => "the token's signature does not verify".to_owned(),
        K::MissingRequiredClaim(claim) => format!("the token has no {claim} claim"),
        K::InvalidClaimFormat(claim) => format!("the token's {claim} claim is malformed"),
        K::InvalidAlgorithm => "the token's algorithm does not fit its key".to_owned(),
        _ => "the token is malformed".to_owned(),
    }
}
