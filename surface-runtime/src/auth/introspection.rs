//! Opaque access tokens through the issuer's RFC 7662 introspection endpoint.

use super::fetch;
use super::{LEEWAY, Refusal, TokenVerifier};
use crate::Principal;
use serde_json::Value;
use std::time::{SystemTime, UNIX_EPOCH};
use tokio::sync::{OnceCell, Semaphore};

/// How many introspection requests one [`Auth::introspection`](super::Auth::introspection)
/// sends at once (32); more wait their turn, at most [`FETCH_TIMEOUT`](super::FETCH_TIMEOUT),
/// and are then refused.
pub const MAX_INTROSPECTIONS: usize = 32;

pub(super) struct Introspection {
    issuer: String,
    audience: String,
    client_id: String,
    client_secret: String,
    /// The endpoint, found in the issuer's metadata once.
    endpoint: OnceCell<String>,
    /// Turns to ask the endpoint: a flood of distinct tokens waits here, not at the issuer.
    turns: Semaphore,
}

impl Introspection {
    pub(super) fn new(issuer: String, audience: String, client_id: String, client_secret: String) -> Self {
        Introspection {
            issuer,
            audience,
            client_id,
            client_secret,
            endpoint: OnceCell::new(),
            turns: Semaphore::new(MAX_INTROSPECTIONS),
        }
    }

    async fn endpoint(&self) -> Result<&str, Refusal> {
        self.endpoint
            .get_or_try_init(|| async {
                fetch::issuer_metadata(&self.issuer)
                    .await?
                    .get("introspection_endpoint")
                    .and_then(Value::as_str)
                    .map(str::to_owned)
                    .ok_or_else(|| format!("the metadata of {} has no introspection_endpoint", self.issuer))
            })
            .await
            .map(String::as_str)
            .map_err(|e| {
                tracing::warn!("surface-mcp: {e}");
                Refusal::new("the token could not be checked with its issuer")
            })
    }
}

impl TokenVerifier for Introspection {
    async fn verify(&self, token: &str) -> Result<Principal, Refusal> {
        let endpoint = self.endpoint().await?;
        let _turn = tokio::time::timeout(fetch::FETCH_TIMEOUT, self.turns.acquire())
            .await
            .ok()
            .and_then(Result::ok)
            .ok_or_else(|| {
                Refusal::new("the token could not be checked with its issuer in time (too many at once)")
            })?;
        let answer = fetch::post_form(
            endpoint,
            &[("token", token), ("token_type_hint", "access_token")],
            (&self.client_id, &self.client_secret),
        )
        .await
        .map_err(|e| {
            tracing::warn!("surface-mcp: introspection failed: {e}");
            Refusal::new("the token could not be checked with its issuer")
        })?;
        let Value::Object(claims) = answer else {
            return Err(Refusal::new("the issuer's introspection answer is not an object"));
        };
        if claims.get("active") != Some(&Value::Bool(true)) {
            return Err(Refusal::new("the token is not active"));
        }
        let now = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .unwrap_or_default()
            .as_secs();
        if let Some(exp) = claims.get("exp").and_then(Value::as_u64)
            && exp + LEEWAY.as_secs() < now
        {
            return Err(Refusal::new("the token has expired"));
        }
        if let Some(nbf) = claims.get("nbf").and_then(Value::as_u64)
            && nbf > now + LEEWAY.as_secs()
        {
            return Err(Refusal::new("the token is not valid yet (nbf)"));
        }
        if let Some(iss) = claims.get("iss")
            && iss.as_str() != Some(&self.issuer)
        {
            return Err(Refusal::new("the token was issued by another issuer"));
        }
        let for_us = match claims.get("aud") {
            Some(Value::String(aud)) => *aud == self.audience,
            Some(Value::Array(auds)) => auds.iter().any(|a| a.as_str() == Some(&self.audience)),
            _ => false,
        };
        if !for_us {
            return Err(Refusal::new("the token was issued for another resource (aud)"));
        }
        super::jwt::principal(&self.issuer, claims)
    }
}
