//! The Streamable HTTP endpoint as a protected resource (feature `auth`): its metadata
//! documents, the bearer-token check every request passes before anything else, the
//! challenges, and the binding of each legacy session to the subject that opened it.
//!
//! What a token is worth is [`Auth`]'s to say (`crate::auth`); this module speaks HTTP.

use super::http_response::{Response, jsonrpc_body};
use super::http_sessions::{Owner, SessionSharing};
use crate::Principal;
use crate::auth::Auth;
use crate::sync::lock;
use bytes::Bytes;
use http_body_util::{BodyExt, Full};
use hyper::StatusCode;
use hyper::header::{AUTHORIZATION, HeaderValue, WWW_AUTHENTICATE};
use rmcp::transport::streamable_http_server::session::SessionId;
use serde_json::{Value, json};
use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Instant;

/// The well-known path of Protected Resource Metadata (RFC 9728 §3).
const METADATA: &str = "/.well-known/oauth-protected-resource";

pub(super) struct Guard {
    auth: Auth,
    /// The endpoint's path, for the path-inserted metadata URL.
    path: String,
    /// The resource URI's path (`/api/mcp`): where a mounted endpoint is, whatever path it
    /// is handed.
    resource_path: String,
    document: Bytes,
    /// `resource_metadata="…"`, the absolute URL of the metadata.
    metadata_url: String,
    /// The subject (issuer, subject) each legacy session was opened by, as far as this
    /// instance knows.
    sessions: Mutex<HashMap<String, Owner>>,
    max_sessions: usize,
    /// Where every instance records who opened each session, when sessions are shared.
    sharing: Option<Arc<dyn SessionSharing>>,
}

impl Guard {
    pub(super) fn new(
        auth: Auth,
        path: &str,
        max_sessions: usize,
        sharing: Option<Arc<dyn SessionSharing>>,
    ) -> Result<Guard, String> {
        if auth.resource().is_empty() {
            return Err(
                "the authentication has no resource URI: give it one with Auth::with_resource (the metadata and challenges name it)"
                    .to_owned(),
            );
        }
        let resource: hyper::Uri = auth
            .resource()
            .parse()
            .map_err(|e| format!("the resource URI {} is not a URL: {e}", auth.resource()))?;
        let (Some(scheme), Some(authority)) = (resource.scheme_str(), resource.authority()) else {
            return Err(format!(
                "the resource URI {} is not an absolute URL",
                auth.resource()
            ));
        };
        // RFC 9728 §3.1: the metadata of `https://host/path` is at
        // `https://host/.well-known/oauth-protected-resource/path`.
        let resource_path = resource.path().trim_end_matches('/').to_owned();
        let metadata_url = format!("{scheme}://{authority}{METADATA}{resource_path}");
        let mut document = json!({
            "resource": auth.resource(),
            "authorization_servers": auth.authorization_servers(),
            "bearer_methods_supported": ["header"],
        });
        if !auth.supported_scopes().is_empty() {
            document["scopes_supported"] = json!(auth.supported_scopes());
        }
        Ok(Guard {
            document: Bytes::from(document.to_string()),
            metadata_url,
            path: path.to_owned(),
            resource_path,
            auth,
            sessions: Mutex::new(HashMap::new()),
            max_sessions,
            sharing,
        })
    }

    /// The path-inserted well-known path of the metadata (RFC 9728 §3.1), from the resource
    /// URI: `/.well-known/oauth-protected-resource/api/mcp` for `https://host/api/mcp`.
    pub(super) fn metadata_path(&self) -> String {
        format!("{METADATA}{}", self.resource_path)
    }

    /// The metadata document, if `request` asks for it: at the well-known path, or with the
    /// endpoint's path or the resource URI's path inserted (a mounted endpoint is wherever
    /// its resource URI says).
    pub(super) fn metadata<B>(&self, request: &hyper::Request<B>) -> Option<Response> {
        let path = request.uri().path();
        let rest = path.strip_prefix(METADATA)?;
        if !(rest.is_empty() || rest == "/" || rest == self.path || rest == self.resource_path) {
            return None;
        }
        let response = match *request.method() {
            hyper::Method::GET | hyper::Method::HEAD => jsonrpc_body(StatusCode::OK, self.document.clone()),
            // A browser's preflight: the document is public.
            hyper::Method::OPTIONS => hyper::Response::builder()
                .status(StatusCode::NO_CONTENT)
                .header("access-control-allow-methods", "GET, OPTIONS")
                .header("access-control-allow-headers", "*")
                .body(Full::new(Bytes::new()).boxed())
                .expect("a preflight answer is valid"),
            _ => hyper::Response::builder()
                .status(StatusCode::METHOD_NOT_ALLOWED)
                .header(hyper::header::ALLOW, "GET, OPTIONS")
                .body(Full::new(Bytes::new()).boxed())
                .expect("a 405 is valid"),
        };
        let mut response = response;
        response
            .headers_mut()
            .insert("access-control-allow-origin", HeaderValue::from_static("*"));
        Some(response)
    }

    /// Authenticates a request by its `headers`: the principal its bearer token names, or the
    /// answer that refuses it. A request carrying the header its connection's last request
    /// carried, while the cache still trusts that token, is admitted by one comparison. The
    /// header stays: the gate strips it ([`strip`]) wherever the request's parts go on to
    /// rmcp, and the direct path keeps none of them.
    pub(super) async fn admit(
        &self,
        headers: &hyper::HeaderMap,
        connection: Option<&ConnectionToken>,
    ) -> Result<Arc<Principal>, Response> {
        let mut values = headers.get_all(AUTHORIZATION).iter();
        let (Some(value), None) = (values.next(), values.next()) else {
            return Err(if headers.contains_key(AUTHORIZATION) {
                self.malformed("more than one Authorization header")
            } else {
                self.challenge(None)
            });
        };
        if let Some(principal) = connection.and_then(|last| last.recall(value)) {
            return Ok(principal);
        }
        let token = match bearer(value) {
            Ok(token) => token,
            Err(why) => return Err(self.malformed(why)),
        };
        let verified = self.auth.verify_shared(token).await;
        if let (Some(last), Ok((principal, Some(until)))) = (connection, &verified) {
            last.remember(value, principal, *until);
        }
        verified
            .map(|(principal, _)| principal)
            .map_err(|refusal| self.challenge(Some(refusal.description())))
    }

    /// Whether `principal` may use the legacy session `id`: the subject that opened it may
    /// (with any of its tokens, a step-up one too); anyone else is told it does not exist. A
    /// session opened on another instance sharing the sessions is judged by the owner recorded
    /// there (and then remembered here); without such a record, nobody may. The session a
    /// connection's remembered principal was last let use is let again without looking
    /// (`connection`): a session's owner never changes, and a session since closed is
    /// unknown to what serves it next.
    pub(super) async fn may_use(
        &self,
        id: &str,
        principal: &Arc<Principal>,
        connection: Option<&ConnectionToken>,
    ) -> bool {
        if connection.is_some_and(|last| last.let_use(principal, id)) {
            return true;
        }
        let owns = |(iss, sub): &Owner| *iss == principal.issuer() && *sub == principal.subject();
        let owned = lock(&self.sessions).get(id).map(owns);
        let allowed = match owned {
            Some(owned) => owned,
            None => {
                let Some(sharing) = &self.sharing else {
                    return false;
                };
                match sharing.owner(&SessionId::from(id)).await {
                    Some(owner) if owns(&owner) => {
                        lock(&self.sessions).insert(id.to_owned(), owner);
                        true
                    }
                    _ => false,
                }
            }
        };
        if allowed && let Some(last) = connection {
            last.used(principal, id);
        }
        allowed
    }

    /// Records that `principal` opened the legacy session `id`, here and, when sessions are
    /// shared, where every instance finds it — before the session's id reaches its client, so
    /// no instance can meet the id before its owner is known.
    pub(super) async fn opened(
        &self,
        id: &str,
        principal: &Principal,
        live: impl Fn(&str) -> bool,
    ) -> Result<(), String> {
        let owner: Owner = (principal.issuer().to_owned(), principal.subject().to_owned());
        if let Some(sharing) = &self.sharing {
            sharing.bind(&SessionId::from(id), &owner).await?;
        }
        let mut sessions = lock(&self.sessions);
        // Sessions rmcp ended (idle) leave their entry: sweep when the table outgrows the cap.
        if sessions.len() >= self.max_sessions {
            sessions.retain(|id, _| live(id));
        }
        sessions.insert(id.to_owned(), owner);
        Ok(())
    }

    /// Forgets the session `id` (deleted).
    pub(super) fn closed(&self, id: &str) {
        lock(&self.sessions).remove(id);
    }

    /// `401` with the challenge: `error="invalid_token"` and why, when a token was refused.
    fn challenge(&self, refused: Option<&str>) -> Response {
        let mut value = format!("Bearer resource_metadata=\"{}\"", self.metadata_url);
        if !self.auth.first_scopes().is_empty() {
            value.push_str(&format!(", scope=\"{}\"", self.auth.first_scopes().join(" ")));
        }
        if let Some(why) = refused {
            value.push_str(&format!(
                ", error=\"invalid_token\", error_description=\"{}\"",
                quoted(why)
            ));
        }
        let message = match refused {
            Some(why) => format!("Unauthorized: {why}"),
            None => "Unauthorized: this server needs a bearer token (Authorization: Bearer <token>); its metadata says where to get one".to_owned(),
        };
        self.refusal(StatusCode::UNAUTHORIZED, value, message)
    }

    /// `403` with the step-up challenge: the request needs the scope `needed`, which the
    /// caller's token does not grant (RFC 6750 §3.1 `insufficient_scope`).
    pub(super) fn forbidden(&self, needed: &str) -> Response {
        let value = format!(
            "Bearer error=\"insufficient_scope\", scope=\"{needed}\", resource_metadata=\"{}\", error_description=\"this request needs the scope {needed}\"",
            self.metadata_url
        );
        let message = format!(
            "Forbidden: this request needs the scope {needed}; ask the authorization server for a token that grants it"
        );
        self.refusal(StatusCode::FORBIDDEN, value, message)
    }

    /// The scope `message` needs that `principal` lacks, if any (see `reach::missing`).
    pub(super) fn missing_scope(
        generation: &super::generation::Generation,
        message: &rmcp::model::ClientJsonRpcMessage,
        principal: &Principal,
    ) -> Option<&'static str> {
        super::reach::missing(generation, message, principal)
    }

    /// `400`: an `Authorization` header that is not one `Bearer <token>`.
    fn malformed(&self, why: &str) -> Response {
        let value = format!(
            "Bearer resource_metadata=\"{}\", error=\"invalid_request\", error_description=\"{}\"",
            self.metadata_url,
            quoted(why)
        );
        self.refusal(StatusCode::BAD_REQUEST, value, format!("Bad Request: {why}"))
    }

    fn refusal(&self, status: StatusCode, challenge: String, message: String) -> Response {
        let body =
            json!({"jsonrpc": "2.0", "id": Value::Null, "error": {"code": -32001, "message": message}});
        let mut response = jsonrpc_body(status, Bytes::from(body.to_string()));
        if let Ok(value) = HeaderValue::from_str(&challenge) {
            response.headers_mut().insert(WWW_AUTHENTICATE, value);
        }
        response
    }
}

/// Takes the bearer token out of a request's headers before they go where a handler could read
/// them (rmcp keeps a request's parts in its context).
pub(super) fn strip(headers: &mut hyper::HeaderMap) {
    headers.remove(AUTHORIZATION);
}

/// The `Authorization` header one connection's last admitted request carried, and what it
/// was verified as: a client sends its one token on every request of a kept-alive
/// connection, and comparing the header costs far less than reading the token, hashing it
/// for the shared cache and looking it up there. It is trusted no longer than the cache
/// trusts the token. The serving loop gives each connection one (as a request extension).
#[derive(Default)]
pub(super) struct ConnectionToken(Mutex<Option<Seen>>);

struct Seen {
    header: Box<[u8]>,
    principal: Arc<Principal>,
    until: Instant,
    /// The legacy session `principal` was last let use on this connection.
    session: Option<Box<str>>,
}

impl ConnectionToken {
    /// The principal `header` was last admitted as on this connection, while still trusted.
    fn recall(&self, header: &HeaderValue) -> Option<Arc<Principal>> {
        let seen = lock(&self.0);
        let seen = seen.as_ref()?;
        (same_bytes(&seen.header, header.as_bytes()) && Instant::now() < seen.until)
            .then(|| seen.principal.clone())
    }

    fn remember(&self, header: &HeaderValue, principal: &Arc<Principal>, until: Instant) {
        *lock(&self.0) = Some(Seen {
            header: header.as_bytes().into(),
            principal: principal.clone(),
            until,
            session: None,
        });
    }

    /// Whether `principal` (this connection's remembered one, by identity) was let use the
    /// session `id` last.
    fn let_use(&self, principal: &Arc<Principal>, id: &str) -> bool {
        let seen = lock(&self.0);
        seen.as_ref().is_some_and(|seen| {
            Arc::ptr_eq(&seen.principal, principal) && seen.session.as_deref() == Some(id)
        })
    }

    /// Notes that `principal` may use the session `id`, if it is this connection's remembered
    /// principal.
    fn used(&self, principal: &Arc<Principal>, id: &str) {
        if let Some(seen) = lock(&self.0).as_mut()
            && Arc::ptr_eq(&seen.principal, principal)
            && seen.session.as_deref() != Some(id)
        {
            seen.session = Some(id.into());
        }
    }
}

/// Whether `a` and `b` are equal, in a time that does not depend on where they first differ:
/// behind a proxy, one connection may carry several callers' requests.
fn same_bytes(a: &[u8], b: &[u8]) -> bool {
    // Eight bytes a step: a token is hundreds of bytes, compared on every request.
    let word = |bytes: &[u8]| u64::from_ne_bytes(bytes.try_into().expect("eight bytes"));
    let (mut words_a, mut words_b) = (a.chunks_exact(8), b.chunks_exact(8));
    let differ = (&mut words_a)
        .zip(&mut words_b)
        .fold(0u64, |differ, (x, y)| differ | (word(x) ^ word(y)));
    let rest = words_a.remainder().iter().zip(words_b.remainder());
    let differ = rest.fold(differ, |differ, (x, y)| differ | u64::from(x ^ y));
    a.len() == b.len() && std::hint::black_box(differ) == 0
}

/// The token of an `Authorization: Bearer <token>` header (RFC 6750 §2.1: the scheme is
/// case-insensitive, the token is `token68`).
fn bearer(value: &HeaderValue) -> Result<&str, &'static str> {
    let value = value
        .to_str()
        .map_err(|_| "the Authorization header is not ASCII")?;
    let (scheme, token) = value
        .split_once(' ')
        .ok_or("the Authorization header is not `Bearer <token>`")?;
    if !scheme.eq_ignore_ascii_case("bearer") {
        return Err("the Authorization header's scheme is not Bearer");
    }
    let token = token.trim_start_matches(' ');
    let token68 = |b: u8| b.is_ascii_alphanumeric() || matches!(b, b'-' | b'.' | b'_' | b'~' | b'+' | b'/');
    let body = token.trim_end_matches('=');
    if body.is_empty() || !body.bytes().all(token68) {
        return Err("the bearer token is empty or has characters a token cannot have");
    }
    Ok(token)
}

/// `text` safe inside a quoted-string.
fn quoted(text: &str) -> String {
    text.chars()
        .filter(|c| *c != '"' && *c != '\\' && !c.is_control())
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bearer_headers_are_judged_strictly() {
        let ok = HeaderValue::from_static("Bearer abc.def-ghi_~+/==");
        assert_eq!(bearer(&ok), Ok("abc.def-ghi_~+/=="));
        assert_eq!(bearer(&HeaderValue::from_static("bearer x")), Ok("x"));
        for bad in [
            "Basic abc",
            "Bearer",
            "Bearer ",
            "Bearer a b",
            "Bearer a,b",
            "Token",
        ] {
            assert!(bearer(&HeaderValue::from_static(bad)).is_err(), "{bad}");
        }
    }

    #[test]
    fn a_remembered_header_matches_only_itself_and_only_while_trusted() {
        assert!(same_bytes(b"Bearer abc", b"Bearer abc"));
        for other in [
            &b"Bearer abd"[..],
            b"Bearer ab",
            b"Bearer abcd",
            b"bearer abc",
            b"",
        ] {
            assert!(!same_bytes(b"Bearer abc", other), "{other:?}");
        }
        // A difference in any eight-byte word or in the bytes after the last one.
        let token = b"Bearer eyJhbGciOiJSUzI1NiJ9.eyJzdWIiOiJiZW5jaCJ9.c2ln".to_vec();
        assert!(same_bytes(&token, &token.clone()));
        for at in 0..token.len() {
            let mut other = token.clone();
            other[at] ^= 1;
            assert!(!same_bytes(&token, &other), "a difference at byte {at}");
        }
        let last = ConnectionToken::default();
        let header = HeaderValue::from_static("Bearer abc");
        assert_eq!(last.recall(&header), None);
        let alice = Arc::new(Principal::new("i", "alice"));
        last.remember(
            &header,
            &alice,
            Instant::now() + std::time::Duration::from_secs(60),
        );
        assert_eq!(last.recall(&header), Some(alice.clone()));
        assert_eq!(last.recall(&HeaderValue::from_static("Bearer abd")), None);
        last.remember(&header, &alice, Instant::now());
        assert_eq!(last.recall(&header), None, "no longer trusted");
    }

    #[test]
    fn a_connection_lets_its_principal_use_the_session_it_was_let_use_last() {
        let last = ConnectionToken::default();
        let header = HeaderValue::from_static("Bearer abc");
        let alice = Arc::new(Principal::new("i", "alice"));
        let until = Instant::now() + std::time::Duration::from_secs(60);
        last.used(&alice, "s1");
        assert!(!last.let_use(&alice, "s1"), "nothing remembered yet");
        last.remember(&header, &alice, until);
        assert!(!last.let_use(&alice, "s1"));
        last.used(&alice, "s1");
        assert!(last.let_use(&alice, "s1"));
        assert!(!last.let_use(&alice, "s2"));
        let also_alice = Arc::new(Principal::new("i", "alice"));
        assert!(
            !last.let_use(&also_alice, "s1"),
            "only the remembered principal itself"
        );
        last.used(&also_alice, "s2");
        assert!(!last.let_use(&also_alice, "s2"));
        assert!(
            last.let_use(&alice, "s1"),
            "another principal's use changes nothing"
        );
        last.remember(&header, &alice, until);
        assert!(!last.let_use(&alice, "s1"), "a new admission starts afresh");
    }

    #[test]
    fn metadata_lives_at_both_paths() {
        let auth =
            Auth::jwt("http://issuer.example", "http://ops.example/mcp").scopes_supported(["ops.read"]);
        let guard = Guard::new(auth, "/mcp", 10, None).unwrap();
        assert_eq!(
            guard.metadata_url,
            "http://ops.example/.well-known/oauth-protected-resource/mcp"
        );
        let get = |path: &str| hyper::Request::get(path).body(()).unwrap();
        assert!(
            guard
                .metadata(&get("/.well-known/oauth-protected-resource"))
                .is_some()
        );
        assert!(
            guard
                .metadata(&get("/.well-known/oauth-protected-resource/mcp"))
                .is_some()
        );
        assert!(
            guard
                .metadata(&get("/.well-known/oauth-protected-resource/other"))
                .is_none()
        );
        assert!(guard.metadata(&get("/mcp")).is_none());
    }

    #[test]
    fn a_custom_verifier_needs_a_resource() {
        struct No;
        impl crate::auth::TokenVerifier for No {
            async fn verify(&self, _: &str) -> Result<Principal, crate::auth::Refusal> {
                Err(crate::auth::Refusal::new("no"))
            }
        }
        let e = Guard::new(Auth::custom(No), "/mcp", 10, None).err().unwrap();
        assert!(e.contains("Auth::with_resource"), "{e}");
    }
}
