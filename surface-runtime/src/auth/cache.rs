//! Verified tokens, remembered by their SHA-256 until they expire (bounded), so a client's
//! every request does not pay for a signature check or an introspection round trip.

use crate::Principal;
use crate::sync::lock;
use sha2::{Digest, Sha256};
use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

/// At most this many verified tokens are remembered (by their SHA-256) until they expire.
pub const MAX_CACHED_TOKENS: usize = 10_000;

/// A cache time meaning "until the token's own `exp`".
pub(super) const UNTIL_EXPIRY: Duration = Duration::MAX;

/// A verified token's principal, and until when it is kept.
type Remembered = (Arc<Principal>, Instant);

pub(super) struct TokenCache {
    ttl: Duration,
    entries: Mutex<HashMap<[u8; 32], Remembered>>,
}

impl TokenCache {
    pub(super) fn new(ttl: Duration) -> TokenCache {
        TokenCache {
            ttl,
            entries: Mutex::new(HashMap::new()),
        }
    }

    /// A token's cache key: its SHA-256 (the token itself is never kept).
    pub(super) fn key(token: &str) -> [u8; 32] {
        Sha256::digest(token.as_bytes()).into()
    }

    /// The principal of the token `key` names and until when it is trusted, if remembered.
    pub(super) fn get(&self, key: &[u8; 32]) -> Option<Remembered> {
        if self.ttl.is_zero() {
            return None;
        }
        let mut entries = lock(&self.entries);
        match entries.get(key) {
            Some((principal, until)) if Instant::now() < *until => Some((principal.clone(), *until)),
            Some(_) => {
                entries.remove(key);
                None
            }
            None => None,
        }
    }

    /// Remembers a verified token's principal; answers until when, if it is remembered at all.
    pub(super) fn put(&self, key: [u8; 32], principal: &Arc<Principal>) -> Option<Instant> {
        if self.ttl.is_zero() {
            return None;
        }
        let now = Instant::now();
        // A principal without an expiry is kept for the cache time only (never "forever").
        let left = match principal.expires_at() {
            Some(exp) => {
                let unix = SystemTime::now().duration_since(UNIX_EPOCH).unwrap_or_default();
                Duration::from_secs(exp).saturating_sub(unix)
            }
            None if self.ttl == UNTIL_EXPIRY => return None,
            None => self.ttl,
        };
        let keep = left.min(self.ttl);
        if keep.is_zero() {
            return None;
        }
        let mut entries = lock(&self.entries);
        if entries.len() >= MAX_CACHED_TOKENS {
            entries.retain(|_, (_, until)| now < *until);
            if entries.len() >= MAX_CACHED_TOKENS {
                // Still full of live tokens: forget them all rather than grow (they verify
                // again, once each).
                entries.clear();
            }
        }
        entries.insert(key, (principal.clone(), now + keep));
        Some(now + keep)
    }

    #[cfg(test)]
    fn len(&self) -> usize {
        lock(&self.entries).len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn now() -> u64 {
        SystemTime::now().duration_since(UNIX_EPOCH).unwrap().as_secs()
    }

    #[test]
    fn remembers_until_expiry_and_never_past_it() {
        let cache = TokenCache::new(UNTIL_EXPIRY);
        let alive = Arc::new(Principal::new("i", "s").expiring_at(now() + 60));
        let until = cache
            .put(TokenCache::key("a"), &alive)
            .expect("an unexpired token is kept");
        assert!(until <= Instant::now() + Duration::from_secs(60));
        assert!(until > Instant::now() + Duration::from_secs(58));
        assert_eq!(cache.get(&TokenCache::key("a")), Some((alive, until)));
        assert_eq!(cache.get(&TokenCache::key("b")), None);
        let old = cache.put(
            TokenCache::key("old"),
            &Arc::new(Principal::new("i", "s").expiring_at(now() - 1)),
        );
        assert_eq!(old, None);
        assert_eq!(cache.get(&TokenCache::key("old")), None);
        // No expiry and no cache time of its own: not remembered.
        assert_eq!(
            cache.put(TokenCache::key("c"), &Arc::new(Principal::new("i", "s"))),
            None
        );
        assert_eq!(cache.get(&TokenCache::key("c")), None);
    }

    #[test]
    fn stays_bounded() {
        let cache = TokenCache::new(UNTIL_EXPIRY);
        let p = Arc::new(Principal::new("i", "s").expiring_at(now() + 600));
        for n in 0..(MAX_CACHED_TOKENS + 10) {
            cache.put(TokenCache::key(&n.to_string()), &p);
            assert!(cache.len() <= MAX_CACHED_TOKENS);
        }
    }

    #[test]
    fn zero_remembers_nothing() {
        let cache = TokenCache::new(Duration::ZERO);
        let kept = cache.put(
            TokenCache::key("a"),
            &Arc::new(Principal::new("i", "s").expiring_at(now() + 60)),
        );
        assert_eq!(kept, None);
        assert_eq!(cache.get(&TokenCache::key("a")), None);
    }
}
