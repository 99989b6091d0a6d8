//! Streamable HTTP as an OAuth 2.1 resource server (`HttpOptions::auth`), over raw HTTP against
//! `serve_http` in this process.
//!
//! The token checks run against a real authorization server, oauth2-mock-server
//! (`interop/auth/issuer.mjs`, installed by `bash interop/auth/install`), started by each test:
//! its tokens are accepted, its keys followed through a rotation and an outage. Without `node`
//! or the installed module those tests skip saying so (under `CI` they fail instead). The
//! hostile-input checks use a hand-written issuer in this file that misbehaves on purpose.

mod common;

#[allow(dead_code)]
#[path = "../examples/ops.rs"]
mod ops;

use common::raw_http::{Answer, http, http_at};
use futures::StreamExt;
use serde_json::{Value, json};
use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};
use surface::auth::Auth;
use surface::context::ToolContext;
use surface::mcp::{BundleClient, HttpOptions, HttpServer, McpServer};
use surface::{Failure, tool};
use tokio::io::{AsyncBufReadExt, AsyncReadExt, AsyncWriteExt, BufReader, Lines};
use tokio::process::{Child, ChildStdin, ChildStdout};

const JSON: (&str, &str) = ("Content-Type", "application/json");
const ACCEPT: (&str, &str) = ("Accept", "application/json, text/event-stream");

fn now() -> u64 {
    SystemTime::now().duration_since(UNIX_EPOCH).unwrap().as_secs()
}

/// A free loopback port, so the audience can be the endpoint's own URL.
fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

/// The ops surface served over HTTP with JWTs from `issuer` required; its audience is its own
/// URL.
async fn ops_with_jwt(issuer: &str) -> (HttpServer, String) {
    let port = free_port();
    let audience = format!("http://127.0.0.1:{port}/mcp");
    let served = ops::mcp_server(Arc::new(ops::Ops::new())).start().unwrap();
    let options = HttpOptions::loopback(port).auth(ops::ops_auth(issuer, &audience));
    (served.serve_http(options).await.unwrap(), audience)
}

async fn initialize(addr: SocketAddr, token: Option<&str>) -> Answer {
    let body = json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-11-25", "capabilities": {},
        "clientInfo": {"name": "auth", "version": "0"}}});
    let bearer = token.map(|t| format!("Bearer {t}"));
    let mut headers = vec![JSON, ACCEPT];
    if let Some(b) = &bearer {
        headers.push(("Authorization", b));
    }
    http(addr, "POST", &headers, &body.to_string()).await
}

async fn list_tools(addr: SocketAddr, token: &str, session: &str) -> Answer {
    let body = json!({"jsonrpc": "2.0", "id": 2, "method": "tools/list", "params": {}});
    let bearer = format!("Bearer {token}");
    http(
        addr,
        "POST",
        &[
            JSON,
            ACCEPT,
            ("Authorization", &bearer),
            ("Mcp-Session-Id", session),
            ("MCP-Protocol-Version", "2025-11-25"),
        ],
        &body.to_string(),
    )
    .await
}

/// A 2026-07-28 `POST` of `body` with `Authorization: <bearer>` and `extra` headers.
async fn post_modern(addr: SocketAddr, bearer: &str, extra: &[(&str, &str)], body: &Value) -> Answer {
    let mut headers = vec![
        JSON,
        ACCEPT,
        ("Authorization", bearer),
        ("MCP-Protocol-Version", "2026-07-28"),
    ];
    headers.extend_from_slice(extra);
    http(addr, "POST", &headers, &body.to_string()).await
}

/// Asserts `answer` is the `401` challenge for a request without a token, to the ops endpoint
/// on `port`.
fn assert_first_challenge(answer: &Answer, port: u16) {
    assert_eq!(answer.status, 401, "{answer:?}");
    let metadata = format!("http://127.0.0.1:{port}/.well-known/oauth-protected-resource/mcp");
    let expected = format!("Bearer resource_metadata=\"{metadata}\", scope=\"ops.read\"");
    assert_eq!(answer.header("www-authenticate"), Some(expected.as_str()));
}

/// Asserts `answer` is the `401` challenge for a refused token, naming none of it.
fn assert_refused(answer: &Answer, token: &str, what: &str) {
    assert_eq!(answer.status, 401, "{what}: {answer:?}");
    let challenge = answer.header("www-authenticate").unwrap_or_default();
    assert!(
        challenge.starts_with("Bearer resource_metadata=\""),
        "{what}: {challenge}"
    );
    assert!(
        challenge.contains("error=\"invalid_token\""),
        "{what}: {challenge}"
    );
    assert_eq!(answer.message()["error"]["code"], -32001, "{what}: {answer:?}");
    if token.len() > 8 {
        assert!(
            !answer.body.contains(token) && !challenge.contains(token),
            "{what}: the token is echoed"
        );
    }
}

// ---------------------------------------------------------------------------------------------
// Without an authorization server: the metadata and the challenges.

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_metadata_is_the_same_document_at_both_well_known_paths() {
    // The issuer exactly as given, trailing slash and all.
    let (server, audience) = ops_with_jwt("http://auth.invalid/realm/").await;
    let addr = server.local_addr();
    let root = http_at(addr, "GET", "/.well-known/oauth-protected-resource", &[], "").await;
    let inserted = http_at(addr, "GET", "/.well-known/oauth-protected-resource/mcp", &[], "").await;
    assert_eq!(root.status, 200, "{root:?}");
    assert_eq!(inserted.status, 200, "{inserted:?}");
    assert_eq!(root.body, inserted.body);
    let document: Value = serde_json::from_str(&root.body).unwrap();
    assert_eq!(
        document,
        json!({
            "resource": audience,
            "authorization_servers": ["http://auth.invalid/realm/"],
            "scopes_supported": ["ops.read", "ops.admin"],
            "bearer_methods_supported": ["header"],
        })
    );
    // Another path under the well-known prefix is no metadata of ours.
    let other = http_at(
        addr,
        "GET",
        "/.well-known/oauth-protected-resource/elsewhere",
        &[],
        "",
    )
    .await;
    assert_eq!(other.status, 404, "{other:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_request_without_a_token_is_challenged_and_a_malformed_header_is_a_bad_request() {
    let (server, _) = ops_with_jwt("http://auth.invalid").await;
    let addr = server.local_addr();
    let port = addr.port();
    let bare = initialize(addr, None).await;
    assert_first_challenge(&bare, port);
    let error = bare.message();
    assert_eq!(error["jsonrpc"], "2.0");
    assert!(
        error["error"]["message"]
            .as_str()
            .unwrap()
            .starts_with("Unauthorized"),
        "{error}"
    );
    // A GET (the standalone stream) and a DELETE are challenged the same way.
    for method in ["GET", "DELETE"] {
        let answer = http(addr, method, &[ACCEPT, ("Mcp-Session-Id", "x")], "").await;
        assert_eq!(answer.status, 401, "{method}: {answer:?}");
    }
    // A token in the query string is not a token.
    let body = json!({"jsonrpc": "2.0", "id": 1, "method": "tools/list"}).to_string();
    let query = http_at(
        addr,
        "POST",
        "/mcp?access_token=abc.def.ghi",
        &[JSON, ACCEPT],
        &body,
    )
    .await;
    assert_eq!(query.status, 401, "{query:?}");
    // Not one `Bearer <token>`: 400.
    for header in ["Basic dXNlcjpwYXNz", "Bearer", "Bearer a b", "Bearer a\"b"] {
        let answer = http(addr, "POST", &[JSON, ACCEPT, ("Authorization", header)], &body).await;
        assert_eq!(answer.status, 400, "{header}: {answer:?}");
        let challenge = answer.header("www-authenticate").unwrap_or_default();
        assert!(
            challenge.contains("error=\"invalid_request\""),
            "{header}: {challenge}"
        );
    }
    let twice = http(
        addr,
        "POST",
        &[
            JSON,
            ACCEPT,
            ("Authorization", "Bearer a"),
            ("Authorization", "Bearer b"),
        ],
        &body,
    )
    .await;
    assert_eq!(twice.status, 400, "{twice:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn without_auth_a_remote_bind_is_still_refused_and_with_it_allowed() {
    let served = ops::mcp_server(Arc::new(ops::Ops::new())).start().unwrap();
    let e = served
        .serve_http(HttpOptions::new(([0, 0, 0, 0], 0)))
        .await
        .err()
        .expect("a remote bind without auth is refused");
    assert!(e.to_string().contains("allow_remote"), "{e}");
    let server = served
        .serve_http(
            HttpOptions::new(([0, 0, 0, 0], 0))
                .auth(Auth::jwt("http://auth.invalid", "http://ops.invalid/mcp")),
        )
        .await
        .expect("with auth the bind is allowed");
    server.shutdown().await.unwrap();
}

// ---------------------------------------------------------------------------------------------
// A real authorization server.

/// oauth2-mock-server, driven by `interop/auth/issuer.mjs` over its stdin and stdout.
struct Issuer {
    _child: Child,
    stdin: ChildStdin,
    stdout: Lines<BufReader<ChildStdout>>,
    url: String,
    kid: String,
}

impl Issuer {
    /// Starts one, or says why it cannot and answers `None` (fails under `CI`).
    async fn start() -> Option<Issuer> {
        let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("interop/auth");
        let module = dir.join("node_modules/oauth2-mock-server");
        let node_works = std::process::Command::new("node")
            .arg("--version")
            .output()
            .is_ok_and(|o| o.status.success());
        if !node_works || !module.exists() {
            let why = format!(
                "SKIP: the authorization server is not installed (node on PATH: {node_works}, {} present: {}) — run `bash interop/auth/install`",
                module.display(),
                module.exists()
            );
            assert!(std::env::var_os("CI").is_none(), "{why}");
            eprintln!("{why}");
            return None;
        }
        let mut child = tokio::process::Command::new("node")
            .arg(dir.join("issuer.mjs"))
            .current_dir(&dir)
            .stdin(std::process::Stdio::piped())
            .stdout(std::process::Stdio::piped())
            .kill_on_drop(true)
            .spawn()
            .expect("node starts");
        let stdin = child.stdin.take().unwrap();
        let mut stdout = BufReader::new(child.stdout.take().unwrap()).lines();
        let hello: Value = tokio::time::timeout(Duration::from_secs(30), stdout.next_line())
            .await
            .expect("the issuer starts within 30 s")
            .unwrap()
            .map(|l| serde_json::from_str(&l).unwrap())
            .expect("the issuer says where it is");
        Some(Issuer {
            _child: child,
            stdin,
            stdout,
            url: hello["issuer"].as_str().unwrap().to_owned(),
            kid: hello["kid"].as_str().unwrap().to_owned(),
        })
    }

    async fn ask(&mut self, command: Value) -> Value {
        self.stdin
            .write_all(format!("{command}\n").as_bytes())
            .await
            .unwrap();
        let line = tokio::time::timeout(Duration::from_secs(30), self.stdout.next_line())
            .await
            .expect("the issuer answers")
            .unwrap()
            .expect("the issuer is alive");
        let answer: Value = serde_json::from_str(&line).unwrap();
        assert!(answer.get("error").is_none(), "{command}: {answer}");
        answer
    }

    /// A token it signs: `sub` alice, `aud` `audience`, `ops.read`, unless `claims` say otherwise.
    async fn token(&mut self, audience: &str, claims: Value) -> String {
        let mut all = json!({"sub": "alice", "aud": audience, "scope": "ops.read"});
        all.as_object_mut()
            .unwrap()
            .extend(claims.as_object().unwrap().clone());
        let answer = self.ask(json!({"op": "token", "claims": all})).await;
        answer["token"].as_str().unwrap().to_owned()
    }

    /// A token signed with the key `kid`, for `sub`.
    async fn token_by(&mut self, kid: &str, sub: &str, audience: &str) -> String {
        let claims = json!({"sub": sub, "aud": audience});
        let answer = self
            .ask(json!({"op": "token", "kid": kid, "claims": claims}))
            .await;
        answer["token"].as_str().unwrap().to_owned()
    }

    async fn forge(&mut self, kind: &str, audience: &str) -> String {
        let claims = json!({"sub": "alice", "aud": audience, "scope": "ops.read"});
        let answer = self
            .ask(json!({"op": "forge", "kind": kind, "claims": claims}))
            .await;
        answer["token"].as_str().unwrap().to_owned()
    }
}

/// A running issuer and the ops surface trusting it: the issuer, the server, its audience and
/// address (`None`: no issuer installed, said why).
async fn issuer_and_ops() -> Option<(Issuer, HttpServer, String, SocketAddr)> {
    let issuer = Issuer::start().await?;
    let (server, audience) = ops_with_jwt(&issuer.url).await;
    let addr = server.local_addr();
    Some((issuer, server, audience, addr))
}

/// A running issuer, a free port for a server of its own and that server's audience.
async fn issuer_and_port() -> Option<(Issuer, u16, String)> {
    let issuer = Issuer::start().await?;
    let port = free_port();
    Some((issuer, port, format!("http://127.0.0.1:{port}/mcp")))
}

/// Initializes with `token` and lists the tools in that session: the statuses.
async fn use_token(addr: SocketAddr, token: &str) -> Answer {
    let opened = initialize(addr, Some(token)).await;
    if opened.status != 200 {
        return opened;
    }
    let session = opened.header("mcp-session-id").expect("a session").to_owned();
    list_tools(addr, token, &session).await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn tokens_the_issuer_signs_are_accepted_and_every_forgery_refused() {
    let Some((mut issuer, _server, audience, addr)) = issuer_and_ops().await else {
        return;
    };

    let good = issuer.token(&audience, json!({})).await;
    let listed = use_token(addr, &good).await;
    assert_eq!(listed.status, 200, "{listed:?}");
    assert!(
        listed.message()["result"]["tools"].as_array().unwrap().len() > 3,
        "{listed:?}"
    );
    // The 2026-07-28 era is stateless: the token rides every request.
    let bearer = format!("Bearer {good}");
    let modern = json!({"jsonrpc": "2.0", "id": 3, "method": "server/discover", "params": {}});
    let discovered = post_modern(addr, &bearer, &[], &modern).await;
    assert_ne!(discovered.status, 401, "{discovered:?}");

    let iat = now();
    let bad = [
        (
            "expired",
            issuer
                .token(&audience, json!({"exp": iat - 120, "iat": iat - 600}))
                .await,
        ),
        (
            "not yet valid",
            issuer.token(&audience, json!({"nbf": iat + 600})).await,
        ),
        (
            "wrong issuer",
            issuer
                .token(&audience, json!({"iss": "http://evil.invalid"}))
                .await,
        ),
        (
            "wrong audience",
            issuer
                .token(&audience, json!({"aud": "http://127.0.0.1:1/mcp"}))
                .await,
        ),
        ("no exp", issuer.token(&audience, json!({"exp": null})).await),
        ("alg none", issuer.forge("none", &audience).await),
        (
            "HS256 with the public key",
            issuer.forge("hs256", &audience).await,
        ),
        ("tampered", issuer.forge("tampered", &audience).await),
        ("unknown kid", issuer.forge("unknown-kid", &audience).await),
        ("garbage", "garbage".to_owned()),
        ("three garbage parts", "a.b.c".to_owned()),
    ];
    for (what, token) in &bad {
        assert_refused(&initialize(addr, Some(token)).await, token, what);
    }
    // Each refusal says why.
    let expired = initialize(addr, Some(&bad[0].1)).await;
    assert!(
        expired.header("www-authenticate").unwrap().contains("expired"),
        "{expired:?}"
    );
    let audience_refused = initialize(addr, Some(&bad[3].1)).await;
    assert!(
        audience_refused
            .header("www-authenticate")
            .unwrap()
            .contains("another resource"),
        "{audience_refused:?}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_key_rotation_is_followed_and_an_outage_keeps_the_keys_held() {
    let Some((mut issuer, _server, audience, addr)) = issuer_and_ops().await else {
        return;
    };
    let first = issuer.token(&audience, json!({})).await;
    assert_eq!(use_token(addr, &first).await.status, 200);

    // A new key at the issuer: a token signed with it is an unknown kid, fetched again.
    tokio::time::sleep(Duration::from_millis(1100)).await; // past the refetch interval
    let kid = issuer.ask(json!({"op": "rotate"})).await["kid"]
        .as_str()
        .unwrap()
        .to_owned();
    assert_ne!(kid, issuer.kid);
    let rotated = issuer.token_by(&kid, "bob", &audience).await;
    assert_eq!(
        use_token(addr, &rotated).await.status,
        200,
        "a rotated key is followed"
    );

    // The issuer goes down: a fresh token (not cached) on a held key still verifies; a token on
    // a key never seen fails closed.
    issuer.ask(json!({"op": "stop"})).await;
    let original_kid = issuer.kid.clone();
    let held = issuer.token_by(&original_kid, "carol", &audience).await;
    assert_eq!(
        use_token(addr, &held).await.status,
        200,
        "held keys survive the outage"
    );
    tokio::time::sleep(Duration::from_millis(1100)).await;
    let unknown = issuer.forge("unknown-kid", &audience).await;
    assert_refused(
        &initialize(addr, Some(&unknown)).await,
        &unknown,
        "unknown kid while down",
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_session_belongs_to_its_subject_not_to_its_token() {
    let Some((mut issuer, _server, audience, addr)) = issuer_and_ops().await else {
        return;
    };
    let alice = issuer.token(&audience, json!({})).await;
    let opened = initialize(addr, Some(&alice)).await;
    assert_eq!(opened.status, 200, "{opened:?}");
    let session = opened.header("mcp-session-id").unwrap().to_owned();

    let mallory = issuer.token(&audience, json!({"sub": "mallory"})).await;
    let stolen = list_tools(addr, &mallory, &session).await;
    assert_eq!(
        stolen.status, 404,
        "another subject's token on alice's session: {stolen:?}"
    );
    // The same subject of another issuer is another subject too (refused at the token).
    // A step-up token of alice's continues her session.
    let stepped_up = issuer
        .token(&audience, json!({"scope": "ops.read ops.admin"}))
        .await;
    assert_ne!(stepped_up, alice);
    let continued = list_tools(addr, &stepped_up, &session).await;
    assert_eq!(continued.status, 200, "{continued:?}");
    // Deleting needs the owner as well.
    let bearer = format!("Bearer {mallory}");
    let deleted = http(
        addr,
        "DELETE",
        &[
            ("Authorization", &bearer),
            ("Mcp-Session-Id", &session),
            ("MCP-Protocol-Version", "2025-11-25"),
        ],
        "",
    )
    .await;
    assert_eq!(deleted.status, 404, "{deleted:?}");
    assert_eq!(list_tools(addr, &alice, &session).await.status, 200);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn opaque_tokens_are_introspected() {
    let Some((mut issuer, port, audience)) = issuer_and_port().await else {
        return;
    };
    issuer
        .ask(json!({"op": "opaque", "token": "opaque-alice", "claims": {
            "sub": "alice", "aud": audience, "scope": "ops.read", "exp": now() + 600, "iss": issuer.url}}))
        .await;
    issuer
        .ask(json!({"op": "opaque", "token": "opaque-elsewhere", "claims": {
            "sub": "alice", "aud": "http://127.0.0.1:1/mcp", "exp": now() + 600}}))
        .await;
    issuer
        .ask(json!({"op": "opaque", "token": "opaque-expired", "claims": {
            "sub": "alice", "aud": audience, "exp": now() - 600}}))
        .await;
    let served = ops::mcp_server(Arc::new(ops::Ops::new())).start().unwrap();
    let auth = Auth::introspection(&issuer.url, &audience, "surface", "secret");
    let server = served
        .serve_http(HttpOptions::loopback(port).auth(auth))
        .await
        .unwrap();
    let addr = server.local_addr();
    let alice = use_token(addr, "opaque-alice").await;
    assert_eq!(alice.status, 200, "{alice:?}");
    for token in ["opaque-elsewhere", "opaque-expired", "opaque-unknown"] {
        assert_refused(&initialize(addr, Some(token)).await, token, token);
    }
}

/// Who is calling, as the tool sees it.
#[tool(read_only)]
async fn whoami(_client: &ops::OpsClient, ctx: ToolContext) -> Result<Value, Failure> {
    let who = ctx.principal().expect("an authenticated call has a principal");
    Ok(json!({
        "issuer": who.issuer(),
        "subject": who.subject(),
        "scopes": who.scopes(),
        "tenant": who.claim::<String>("tenant"),
    }))
}

/// The ops surface with [`whoami`] beside its tools, served on `port` with `auth`.
async fn serve_whoami(port: u16, auth: Auth) -> HttpServer {
    let ops = Arc::new(ops::Ops::new());
    let served = McpServer::new("whoami", "0")
        .core(ops::core().tool(WhoamiTool))
        .view(ops::PROCESSES)
        .client(move || BundleClient::with_core(ops::OpsClient::direct(ops.clone())))
        .start()
        .unwrap();
    served
        .serve_http(HttpOptions::loopback(port).auth(auth))
        .await
        .unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_tool_sees_who_calls_in_both_eras() {
    let Some((mut issuer, port, audience)) = issuer_and_port().await else {
        return;
    };
    let server = serve_whoami(port, ops::ops_auth(&issuer.url, &audience)).await;
    let addr = server.local_addr();
    let token = issuer
        .token(
            &audience,
            json!({"scope": "ops.read ops.admin", "tenant": "acme"}),
        )
        .await;
    let bearer = format!("Bearer {token}");
    let call = json!({"jsonrpc": "2.0", "id": 5, "method": "tools/call",
        "params": {"name": "whoami", "arguments": {}}});
    let expected = json!({"issuer": issuer.url, "subject": "alice",
        "scopes": ["ops.read", "ops.admin"], "tenant": "acme"});

    // Legacy: in a session (the direct path answers it once the client is initialized).
    let opened = initialize(addr, Some(&token)).await;
    let session = opened.header("mcp-session-id").unwrap().to_owned();
    let legacy = [
        JSON,
        ACCEPT,
        ("Authorization", bearer.as_str()),
        ("Mcp-Session-Id", session.as_str()),
        ("MCP-Protocol-Version", "2025-11-25"),
    ];
    let initialized = json!({"jsonrpc": "2.0", "method": "notifications/initialized"});
    http(addr, "POST", &legacy, &initialized.to_string()).await;
    // Plain, the direct path answers it; with a progress token, rmcp's own loop does.
    let mut with_progress = call.clone();
    with_progress["params"]["_meta"] = json!({"progressToken": 1});
    for body in [&call, &with_progress] {
        let answer = http(addr, "POST", &legacy, &body.to_string()).await;
        assert_eq!(
            answer.message()["result"]["structuredContent"],
            expected,
            "{body}: {answer:?}"
        );
    }

    // 2026-07-28: stateless, the token on the request itself.
    let mut modern = call.clone();
    modern["params"]["_meta"] = json!({
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientInfo": {"name": "auth", "version": "0"},
        "io.modelcontextprotocol/clientCapabilities": {},
    });
    let routing = [("Mcp-Method", "tools/call"), ("Mcp-Name", "whoami")];
    let answer = post_modern(addr, &bearer, &routing, &modern).await;
    assert_eq!(
        answer.message()["result"]["structuredContent"],
        expected,
        "{answer:?}"
    );
}

/// A verifier of fixed tokens that counts its calls and can revoke a token.
#[derive(Default)]
struct Counted {
    calls: AtomicUsize,
    revoked: std::sync::Mutex<Vec<String>>,
}

/// The verifier the server holds, sharing its counts with the test.
struct Counting(Arc<Counted>);

impl surface::auth::TokenVerifier for Counting {
    async fn verify(&self, token: &str) -> Result<surface::Principal, surface::auth::Refusal> {
        self.0.calls.fetch_add(1, Ordering::SeqCst);
        if self.0.revoked.lock().unwrap().iter().any(|t| t == token) {
            return Err(surface::auth::Refusal::new("the token was revoked"));
        }
        let subject = token
            .strip_suffix("-token")
            .ok_or_else(|| surface::auth::Refusal::new("unknown token"))?;
        Ok(surface::Principal::new("http://auth.test", subject).with_scopes(["ops.read", "ops.admin"]))
    }
}

/// One kept-alive HTTP/1.1 connection's request side.
type Connection = hyper::client::conn::http1::SendRequest<http_body_util::Full<hyper::body::Bytes>>;

/// One kept-alive HTTP/1.1 connection to `addr`, for requests sent one after another on it.
async fn kept_alive(addr: SocketAddr) -> Connection {
    let stream = tokio::net::TcpStream::connect(addr).await.unwrap();
    let (sender, connection) = hyper::client::conn::http1::handshake(hyper_util::rt::TokioIo::new(stream))
        .await
        .unwrap();
    tokio::spawn(connection);
    sender
}

/// Calls `whoami` (2026-07-28) on `connection` with `authorization`: the status, and the
/// subject the tool saw.
async fn whoami_on(connection: &mut Connection, authorization: Option<&str>) -> (u16, Option<String>) {
    use http_body_util::BodyExt;
    let body = json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {
        "name": "whoami", "arguments": {}, "_meta": {
            "io.modelcontextprotocol/protocolVersion": "2026-07-28",
            "io.modelcontextprotocol/clientInfo": {"name": "auth", "version": "0"},
            "io.modelcontextprotocol/clientCapabilities": {}}}});
    let mut request = hyper::Request::post("/mcp")
        .header("Host", "127.0.0.1")
        .header("Content-Type", "application/json")
        .header("Accept", "application/json, text/event-stream")
        .header("MCP-Protocol-Version", "2026-07-28")
        .header("Mcp-Method", "tools/call")
        .header("Mcp-Name", "whoami");
    if let Some(value) = authorization {
        request = request.header("Authorization", value);
    }
    let request = request
        .body(http_body_util::Full::new(hyper::body::Bytes::from(
            body.to_string(),
        )))
        .unwrap();
    connection.ready().await.expect("the connection stays open");
    let response = connection.send_request(request).await.unwrap();
    let status = response.status().as_u16();
    let text = String::from_utf8(response.into_body().collect().await.unwrap().to_bytes().to_vec()).unwrap();
    let message: Value = text
        .lines()
        .find_map(|l| l.strip_prefix("data:"))
        .map_or_else(|| serde_json::from_str(&text), serde_json::from_str)
        .unwrap_or(Value::Null);
    let subject = message["result"]["structuredContent"]["subject"]
        .as_str()
        .map(str::to_owned);
    (status, subject)
}

/// A connection remembers the bearer header its last request carried (one comparison per
/// request instead of a parse, a hash and a cache lookup): every request on it is still
/// judged by its own header, and never trusted longer than the cache trusts the token.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn each_request_on_a_kept_alive_connection_is_judged_by_its_own_token() {
    let port = free_port();
    let verifier = Arc::new(Counted::default());
    let auth = Auth::custom(Counting(verifier.clone()))
        .with_resource(format!("http://127.0.0.1:{port}/mcp"))
        .authorization_server("http://auth.test")
        .cache_for(Duration::from_millis(400));
    let server = serve_whoami(port, auth).await;
    let mut connection = kept_alive(server.local_addr()).await;
    let calls = || verifier.calls.load(Ordering::SeqCst);

    let alice = (200, Some("alice".to_owned()));
    assert_eq!(
        whoami_on(&mut connection, Some("Bearer alice-token")).await,
        alice
    );
    assert_eq!(
        whoami_on(&mut connection, Some("Bearer alice-token")).await,
        alice
    );
    assert_eq!(calls(), 1, "the second request is admitted without the verifier");
    // Another caller's token on the same connection is that caller's.
    assert_eq!(
        whoami_on(&mut connection, Some("Bearer bob-token")).await,
        (200, Some("bob".to_owned()))
    );
    // A bad token, a malformed header or none at all is refused whatever came before.
    assert_eq!(whoami_on(&mut connection, Some("Bearer mallory")).await.0, 401);
    assert_eq!(
        whoami_on(&mut connection, Some("Bearer bob-token x")).await.0,
        400
    );
    assert_eq!(whoami_on(&mut connection, None).await.0, 401);
    assert_eq!(
        whoami_on(&mut connection, Some("Bearer bob-token")).await,
        (200, Some("bob".to_owned()))
    );
    // Past the cache time the token is verified again: revoked meanwhile, it is refused.
    verifier.revoked.lock().unwrap().push("bob-token".to_owned());
    assert_eq!(
        whoami_on(&mut connection, Some("Bearer bob-token")).await,
        (200, Some("bob".to_owned())),
        "within the cache time the token is still trusted"
    );
    let before = calls();
    tokio::time::sleep(Duration::from_millis(500)).await;
    assert_eq!(whoami_on(&mut connection, Some("Bearer bob-token")).await.0, 401);
    assert_eq!(calls(), before + 1, "verified again past the cache time");
}

// ---------------------------------------------------------------------------------------------
// Hostile input.

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn oversized_tokens_are_refused_unread() {
    let (server, _) = ops_with_jwt("http://auth.invalid").await;
    let addr = server.local_addr();
    // 1 MiB of header: hyper refuses the head before any of it is ours (431).
    assert_eq!(oversized_head(addr, &"a".repeat(1024 * 1024)).await, 431);
    // A JWT with 100,000 claims is well over a megabyte: the same.
    let claims: serde_json::Map<String, Value> = (0..100_000).map(|n| (format!("c{n}"), json!(n))).collect();
    let many = jwt(&json!({"alg": "RS256", "kid": "k"}), &Value::Object(claims));
    assert!(many.len() > 1024 * 1024);
    assert_eq!(oversized_head(addr, &many).await, 431);
    // Nothing gave way: the next caller is answered as ever.
    assert_eq!(initialize(addr, None).await.status, 401);
    // Past MAX_TOKEN (16 KiB) but within hyper's head limit: refused by length, not decoded.
    let claims: serde_json::Map<String, Value> = (0..3_000).map(|n| (format!("c{n}"), json!(n))).collect();
    let long = jwt(&json!({"alg": "RS256", "kid": "k"}), &Value::Object(claims));
    assert!(long.len() > surface::auth::MAX_TOKEN);
    let answer = initialize(addr, Some(&long)).await;
    assert_refused(&answer, &long, "a token over MAX_TOKEN");
    assert!(
        answer
            .header("www-authenticate")
            .unwrap()
            .contains("longer than 16384 bytes"),
        "{answer:?}"
    );
}

/// Sends a `POST /mcp` whose `Authorization` header carries `token` (the server may stop
/// reading part-way) and answers the status it gets.
async fn oversized_head(addr: SocketAddr, token: &str) -> u16 {
    let mut stream = tokio::net::TcpStream::connect(addr).await.unwrap();
    let head = format!(
        "POST /mcp HTTP/1.1\r\nHost: {addr}\r\nContent-Type: application/json\r\nContent-Length: 2\r\nAuthorization: Bearer {token}\r\n\r\n{{}}"
    );
    let (mut read, mut write) = stream.split();
    let (_, answer) = tokio::join!(write.write_all(head.as_bytes()), async {
        let mut raw = Vec::new();
        let _ = tokio::time::timeout(Duration::from_secs(10), read.read_to_end(&mut raw)).await;
        raw
    });
    let answer = String::from_utf8_lossy(&answer);
    answer
        .split(' ')
        .nth(1)
        .and_then(|s| s.parse().ok())
        .unwrap_or_else(|| panic!("no status line: {answer:.200}"))
}

/// A misbehaving issuer: metadata pointing at a key set (and an introspection endpoint, the
/// same URL) that is `jwks` (a status line and headers, then whatever the function writes),
/// counting the fetches, and the most at once.
struct Hostile {
    url: String,
    fetches: Arc<AtomicUsize>,
    peak: Arc<AtomicUsize>,
}

#[derive(Clone, Copy)]
enum Jwks {
    /// A valid, empty key set.
    Empty,
    /// 50 MiB of key set.
    Huge,
    /// Headers, then a body that never ends.
    Endless,
    /// `{"active":false}` after 10 ms (an introspection endpoint under load).
    Slow,
}

async fn hostile(jwks: Jwks) -> Hostile {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}", listener.local_addr().unwrap());
    let fetches = Arc::new(AtomicUsize::new(0));
    let peak = Arc::new(AtomicUsize::new(0));
    let in_flight = Arc::new(AtomicUsize::new(0));
    let (issuer, count, most) = (url.clone(), fetches.clone(), peak.clone());
    tokio::spawn(async move {
        loop {
            let Ok((mut stream, _)) = listener.accept().await else {
                return;
            };
            let (issuer, count, most, in_flight) =
                (issuer.clone(), count.clone(), most.clone(), in_flight.clone());
            tokio::spawn(async move {
                let mut head = vec![0u8; 4096];
                let n = stream.read(&mut head).await.unwrap_or(0);
                let head = String::from_utf8_lossy(&head[..n]);
                let path = head.split(' ').nth(1).unwrap_or_default();
                if path.starts_with("/.well-known/") {
                    let body = json!({"issuer": issuer, "jwks_uri": format!("{issuer}/jwks"),
                        "introspection_endpoint": format!("{issuer}/jwks")});
                    let _ = stream.write_all(json_answer(&body.to_string()).as_bytes()).await;
                    return;
                }
                count.fetch_add(1, Ordering::SeqCst);
                let now = in_flight.fetch_add(1, Ordering::SeqCst) + 1;
                most.fetch_max(now, Ordering::SeqCst);
                // Counted until its answer starts: the client may ask again as soon as it has one.
                let answering = || {
                    in_flight.fetch_sub(1, Ordering::SeqCst);
                };
                serve_hostile(jwks, &mut stream, answering).await;
            });
        }
    });
    Hostile { url, fetches, peak }
}

async fn serve_hostile(jwks: Jwks, stream: &mut tokio::net::TcpStream, answering: impl FnOnce()) {
    if let Jwks::Slow = jwks {
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    answering();
    match jwks {
        Jwks::Empty => {
            let _ = stream.write_all(json_answer(r#"{"keys":[]}"#).as_bytes()).await;
        }
        Jwks::Slow => {
            let _ = stream
                .write_all(json_answer(r#"{"active":false}"#).as_bytes())
                .await;
        }
        Jwks::Huge => {
            let size = 50 * 1024 * 1024;
            let head = format!(
                "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: {size}\r\n\r\n{{\"keys\":["
            );
            if stream.write_all(head.as_bytes()).await.is_err() {
                return;
            }
            let chunk = vec![b' '; 64 * 1024];
            for _ in 0..(size / chunk.len()) {
                if stream.write_all(&chunk).await.is_err() {
                    return;
                }
            }
        }
        Jwks::Endless => {
            let head =
                "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n";
            if stream.write_all(head.as_bytes()).await.is_err() {
                return;
            }
            loop {
                if stream.write_all(b"1\r\n \r\n").await.is_err() {
                    return;
                }
                tokio::time::sleep(Duration::from_millis(100)).await;
            }
        }
    }
}

/// A whole `200` answer carrying the JSON `body`.
fn json_answer(body: &str) -> String {
    format!(
        "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
        body.len()
    )
}

/// An unsigned JWT of `header` and `claims` (base64url, no padding).
fn jwt(header: &Value, claims: &Value) -> String {
    format!(
        "{}.{}.c2ln",
        base64url(header.to_string().as_bytes()),
        base64url(claims.to_string().as_bytes())
    )
}

fn base64url(bytes: &[u8]) -> String {
    const ALPHABET: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
    let mut out = String::with_capacity(bytes.len() * 4 / 3 + 3);
    for chunk in bytes.chunks(3) {
        let n = chunk
            .iter()
            .enumerate()
            .fold(0u32, |n, (i, b)| n | (*b as u32) << (16 - 8 * i));
        for i in 0..=chunk.len() {
            out.push(ALPHABET[(n >> (18 - 6 * i) & 63) as usize] as char);
        }
    }
    out
}

/// Asserts this process's resident memory grew by less than 16 MiB (slack for the allocator)
/// since `before`.
fn assert_rss_flat(before: Option<u64>, what: &str) {
    if let (Some(before), Some(after)) = (before, rss_kib()) {
        assert!(
            after < before + 16 * 1024,
            "{what}: RSS grew from {before} KiB to {after} KiB"
        );
    }
}

/// This process's resident memory, in KiB (Linux).
fn rss_kib() -> Option<u64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    status
        .lines()
        .find_map(|l| l.strip_prefix("VmRSS:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn ten_thousand_distinct_invalid_tokens_cost_at_most_one_key_fetch_a_second() {
    let issuer = hostile(Jwks::Empty).await;
    let auth = Auth::jwt(&issuer.url, "http://ops.invalid/mcp");
    let before = rss_kib();
    let started = Instant::now();
    for n in 0..10_000 {
        let token = if n % 2 == 0 {
            jwt(
                &json!({"alg": "RS256", "kid": format!("kid-{n}")}),
                &json!({"sub": n}),
            )
        } else {
            format!("garbage-{n}")
        };
        let refused = auth
            .verify(&token)
            .await
            .expect_err("an invalid token is refused");
        assert!(!refused.description().contains(&token));
    }
    let elapsed = started.elapsed();
    let fetches = issuer.fetches.load(Ordering::SeqCst);
    let bound = elapsed.as_secs() as usize + 2;
    assert!(
        fetches <= bound,
        "{fetches} key-set fetches in {elapsed:?} (at most {bound})"
    );
    assert!(
        elapsed < Duration::from_secs(60),
        "10,000 refusals took {elapsed:?}"
    );
    // Refusals are not remembered.
    assert_rss_flat(before, "10,000 refusals");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_huge_or_endless_key_set_is_refused_within_the_bounds() {
    for (jwks, what) in [
        (Jwks::Huge, "a 50 MiB key set"),
        (Jwks::Endless, "a key set that never ends"),
    ] {
        let issuer = hostile(jwks).await;
        let auth = Auth::jwt(&issuer.url, "http://ops.invalid/mcp");
        let token = jwt(&json!({"alg": "RS256", "kid": "k"}), &json!({"sub": "a"}));
        let refused = refused_within_bounds(&issuer, &auth, &token, what).await;
        assert!(refused.contains("key"), "{what}: {refused}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_huge_or_endless_introspection_answer_is_refused_within_the_bounds() {
    for (jwks, what) in [
        (Jwks::Huge, "a 50 MiB introspection answer"),
        (Jwks::Endless, "an introspection answer that never ends"),
    ] {
        let issuer = hostile(jwks).await;
        let auth = Auth::introspection(&issuer.url, "http://ops.invalid/mcp", "surface", "secret");
        let refused = refused_within_bounds(&issuer, &auth, "opaque", what).await;
        assert_eq!(
            refused, "the token could not be checked with its issuer",
            "{what}"
        );
    }
}

/// `auth`'s refusal of `token` against the hostile `issuer`: within `FETCH_TIMEOUT` (and a
/// little), after one fetch, reading at most `MAX_DOCUMENT` (1 MiB) of it.
async fn refused_within_bounds(issuer: &Hostile, auth: &Auth, token: &str, what: &str) -> String {
    let before = rss_kib();
    let started = Instant::now();
    let refused = auth.verify(token).await.expect_err(what);
    let elapsed = started.elapsed();
    assert!(
        elapsed < surface::auth::FETCH_TIMEOUT + Duration::from_secs(2),
        "{what}: refused after {elapsed:?}"
    );
    assert_eq!(issuer.fetches.load(Ordering::SeqCst), 1, "{what}");
    assert_rss_flat(before, what);
    refused.description().to_owned()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn ten_thousand_distinct_opaque_tokens_at_once_reach_the_issuer_a_bounded_number_at_a_time() {
    let issuer = hostile(Jwks::Slow).await;
    let auth = Auth::introspection(&issuer.url, "http://ops.invalid/mcp", "surface", "secret");
    let before = rss_kib();
    let tokens: Vec<String> = (0..10_000).map(|n| format!("opaque-{n}")).collect();
    // A thousand at a time: far more than the bound, and little memory of the test's own.
    let refusals: Vec<_> = futures::stream::iter(tokens.iter().map(|t| auth.verify(t)))
        .buffer_unordered(1000)
        .collect()
        .await;
    assert_eq!(refusals.len(), 10_000);
    assert!(refusals.iter().all(Result::is_err), "every one is refused");
    let peak = issuer.peak.load(Ordering::SeqCst);
    assert!(
        peak <= surface::auth::MAX_INTROSPECTIONS,
        "{peak} introspections at once (at most {})",
        surface::auth::MAX_INTROSPECTIONS
    );
    assert_rss_flat(before, "10,000 opaque tokens at once");
}

// ---------------------------------------------------------------------------------------------
// The ops example's flags.

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn ops_takes_the_issuer_and_the_audience_together() {
    let ops = common::ops_binary();
    for flags in [
        &["--auth-issuer", "http://localhost:1"][..],
        &["--auth-audience", "http://127.0.0.1:1/mcp"][..],
    ] {
        let out = std::process::Command::new(&ops)
            .args(["--http", "127.0.0.1:0"])
            .args(flags)
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(2), "{flags:?}");
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(
            stderr.contains("--auth-issuer and --auth-audience go together"),
            "{stderr}"
        );
    }
    let port = free_port();
    let audience = format!("http://127.0.0.1:{port}/mcp");
    let (_child, addr) = common::raw_http::spawn_serving(
        &ops,
        &[
            "--http",
            &format!("127.0.0.1:{port}"),
            "--auth-audience",
            &audience,
            "--auth-issuer",
            "http://localhost:1",
        ],
    )
    .await;
    let challenged = initialize(addr, None).await;
    assert_first_challenge(&challenged, port);
    let metadata = http_at(addr, "GET", "/.well-known/oauth-protected-resource", &[], "").await;
    let document: Value = serde_json::from_str(&metadata.body).unwrap();
    assert_eq!(document["authorization_servers"], json!(["http://localhost:1"]));
    assert_eq!(document["resource"], json!(audience));
}

// ---------------------------------------------------------------------------------------------
// Scopes: what a caller sees and may call.

/// The tool names `token` lists, in a legacy session.
async fn tool_names(addr: SocketAddr, token: &str) -> Vec<String> {
    let listed = use_token(addr, token).await;
    assert_eq!(listed.status, 200, "{listed:?}");
    listed.message()["result"]["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["name"].as_str().unwrap().to_owned())
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn each_caller_sees_what_its_scopes_reach_and_steps_up_for_the_rest() {
    let Some((mut issuer, _server, audience, addr)) = issuer_and_ops().await else {
        return;
    };
    let reader = issuer.token(&audience, json!({"scope": "ops.read"})).await;
    let admin = issuer.token(&audience, json!({"scope": "ops.admin"})).await;
    let nobody = issuer.token(&audience, json!({"scope": "other"})).await;

    let read_tools = tool_names(addr, &reader).await;
    assert!(read_tools.contains(&"load_sample".to_owned()), "{read_tools:?}");
    assert!(!read_tools.contains(&"proc_kill".to_owned()), "{read_tools:?}");
    assert!(!read_tools.contains(&"proc_spawn".to_owned()), "{read_tools:?}");
    // `ops.admin` implies `ops.read`: everything.
    let admin_tools = tool_names(addr, &admin).await;
    for name in ["load_sample", "proc_kill", "proc_spawn", "count"] {
        assert!(admin_tools.contains(&name.to_owned()), "{name}: {admin_tools:?}");
    }
    // Neither: only what needs no scope.
    let other_tools = tool_names(addr, &nobody).await;
    assert!(
        !other_tools.contains(&"load_sample".to_owned()),
        "{other_tools:?}"
    );
    // Every ops tool names a scope (count, processes_view, proc_wait: ops.read).
    assert!(!other_tools.contains(&"count".to_owned()), "{other_tools:?}");
    assert!(read_tools.contains(&"count".to_owned()), "{read_tools:?}");

    // The step-up round, in both eras: ops.read gets 403 insufficient_scope on proc_kill, and
    // ops.admin succeeds.
    let kill = json!({"jsonrpc": "2.0", "id": 7, "method": "tools/call",
        "params": {"name": "proc_kill", "arguments": {"pid": 424242}}});
    let mut modern_kill = kill.clone();
    modern_kill["params"]["_meta"] = json!({
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientInfo": {"name": "auth", "version": "0"},
        "io.modelcontextprotocol/clientCapabilities": {},
    });
    let routing = [("Mcp-Method", "tools/call"), ("Mcp-Name", "proc_kill")];
    for (token, status) in [(&reader, 403), (&admin, 200)] {
        let bearer = format!("Bearer {token}");
        let modern = post_modern(addr, &bearer, &routing, &modern_kill).await;
        let opened = initialize(addr, Some(token)).await;
        let session = opened.header("mcp-session-id").unwrap().to_owned();
        let legacy = http(
            addr,
            "POST",
            &[
                JSON,
                ACCEPT,
                ("Authorization", &bearer),
                ("Mcp-Session-Id", &session),
                ("MCP-Protocol-Version", "2025-11-25"),
            ],
            &kill.to_string(),
        )
        .await;
        for answer in [&modern, &legacy] {
            assert_eq!(answer.status, status, "{answer:?}");
            if status == 403 {
                let challenge = answer.header("www-authenticate").unwrap();
                assert!(
                    challenge.starts_with(
                        "Bearer error=\"insufficient_scope\", scope=\"ops.admin\", resource_metadata=\""
                    ),
                    "{challenge}"
                );
            } else {
                // The tool ran (and refused: no such pid), which is a result, not a rejection.
                assert_eq!(answer.message()["result"]["isError"], true, "{answer:?}");
            }
        }
    }
}

/// One 2026-07-28 request of `method` with `params` by `token`, routed by its headers.
async fn modern(addr: SocketAddr, token: &str, method: &str, name: Option<&str>, params: Value) -> Answer {
    let mut params = params;
    params["_meta"] = json!({
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientInfo": {"name": "auth", "version": "0"},
        "io.modelcontextprotocol/clientCapabilities": {},
    });
    let body = json!({"jsonrpc": "2.0", "id": 9, "method": method, "params": params});
    let mut routing = vec![("Mcp-Method", method)];
    if let Some(name) = name {
        routing.push(("Mcp-Name", name));
    }
    post_modern(addr, &format!("Bearer {token}"), &routing, &body).await
}

/// One legacy request of `method` with `params` by `token`, on a session it opens.
async fn legacy(addr: SocketAddr, token: &str, method: &str, params: Value) -> Answer {
    let opened = initialize(addr, Some(token)).await;
    let session = opened.header("mcp-session-id").unwrap().to_owned();
    let bearer = format!("Bearer {token}");
    let body = json!({"jsonrpc": "2.0", "id": 9, "method": method, "params": params});
    let headers = [
        JSON,
        ACCEPT,
        ("Authorization", bearer.as_str()),
        ("Mcp-Session-Id", session.as_str()),
        ("MCP-Protocol-Version", "2025-11-25"),
    ];
    http(addr, "POST", &headers, &body.to_string()).await
}

/// The `key` of every item a list answered, in both eras.
async fn listed(addr: SocketAddr, token: &str, method: &str, items: &str, key: &str) -> Vec<String> {
    let mut both = Vec::new();
    for answer in [
        modern(addr, token, method, None, json!({})).await,
        legacy(addr, token, method, json!({})).await,
    ] {
        assert_eq!(answer.status, 200, "{method}: {answer:?}");
        let names: Vec<String> = answer.message()["result"][items]
            .as_array()
            .unwrap_or_else(|| panic!("{method}: {answer:?}"))
            .iter()
            .map(|t| t[key].as_str().unwrap().to_owned())
            .collect();
        both.push(names);
    }
    assert_eq!(both[0], both[1], "{method}: the two eras list the same");
    both.remove(0)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn resources_templates_reads_and_completions_follow_the_scopes() {
    let Some((mut issuer, _server, audience, addr)) = issuer_and_ops().await else {
        return;
    };
    let reader = issuer.token(&audience, json!({"scope": "ops.read"})).await;
    let nobody = issuer.token(&audience, json!({"scope": "other"})).await;

    let read = listed(addr, &reader, "resources/list", "resources", "uri").await;
    for uri in [
        "surface://cells/load",
        "surface://collections/processes",
        "surface://streams/log",
    ] {
        assert!(read.contains(&uri.to_owned()), "{uri}: {read:?}");
    }
    let templates = listed(
        addr,
        &reader,
        "resources/templates/list",
        "resourceTemplates",
        "uriTemplate",
    )
    .await;
    assert_eq!(templates, ["surface://collections/processes/{id}"]);
    // A caller holding neither ops scope sees none of them.
    assert_eq!(
        listed(addr, &nobody, "resources/list", "resources", "uri").await,
        Vec::<String>::new()
    );
    assert_eq!(
        listed(
            addr,
            &nobody,
            "resources/templates/list",
            "resourceTemplates",
            "uriTemplate"
        )
        .await,
        Vec::<String>::new()
    );

    // A read or a completion outside the caller's scopes: the step-up challenge, in both eras.
    let load = "surface://cells/load";
    let complete = json!({"ref": {"type": "ref/resource", "uri": "surface://collections/processes/{id}"},
        "argument": {"name": "id", "value": ""}});
    for answer in [
        modern(addr, &nobody, "resources/read", Some(load), json!({"uri": load})).await,
        legacy(addr, &nobody, "resources/read", json!({"uri": load})).await,
        legacy(addr, &nobody, "completion/complete", complete.clone()).await,
    ] {
        assert_eq!(answer.status, 403, "{answer:?}");
        let challenge = answer.header("www-authenticate").unwrap();
        assert!(
            challenge
                .starts_with("Bearer error=\"insufficient_scope\", scope=\"ops.read\", resource_metadata=\""),
            "{challenge}"
        );
    }
    // Within them: answered.
    let answer = modern(addr, &reader, "resources/read", Some(load), json!({"uri": load})).await;
    assert_eq!(answer.status, 200, "{answer:?}");
    assert!(answer.message()["result"]["contents"].is_array(), "{answer:?}");
    let answer = legacy(addr, &reader, "completion/complete", complete).await;
    assert_eq!(answer.status, 200, "{answer:?}");
    assert!(
        answer.message()["result"]["completion"]["values"].is_array(),
        "{answer:?}"
    );
}

/// Accepts the one token `good`, as alice.
struct OneToken;

impl surface::auth::TokenVerifier for OneToken {
    async fn verify(&self, token: &str) -> Result<surface::Principal, surface::auth::Refusal> {
        match token {
            "good" => Ok(surface::Principal::new("https://issuer.test", "alice")),
            _ => Err(surface::auth::Refusal::new("the token is not known here")),
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_mounted_endpoint_publishes_its_metadata_for_its_mount_point() {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    // The endpoint's public URL: the app's address and the mount point.
    let resource = format!("http://{addr}/api/mcp");
    let served = ops::mcp_server(Arc::new(ops::Ops::new())).start().unwrap();
    let auth = Auth::custom(OneToken)
        .with_resource(&resource)
        .authorization_server("https://issuer.test");
    let mcp = served
        .http_service_with(&HttpOptions::loopback(0).auth(auth))
        .unwrap();
    let metadata = mcp
        .metadata_path()
        .expect("an authenticated endpoint has metadata");
    assert_eq!(metadata, "/.well-known/oauth-protected-resource/api/mcp");
    let app = axum::Router::new()
        .route("/health", axum::routing::get(|| async { "ok" }))
        .nest_service("/api/mcp", mcp.clone())
        .route_service(&metadata, mcp.clone());
    tokio::spawn(async move { axum::serve(listener, app).await });

    // The document, at the mount point's well-known path, names the mounted resource.
    let document = http_at(addr, "GET", &metadata, &[], "").await;
    assert_eq!(document.status, 200, "{document:?}");
    let document: Value = serde_json::from_str(&document.body).unwrap();
    assert_eq!(document["resource"], resource.as_str(), "{document}");
    assert_eq!(document["authorization_servers"], json!(["https://issuer.test"]));

    // A request without a token is challenged with that document's URL.
    let init = json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-11-25", "capabilities": {},
        "clientInfo": {"name": "mounted", "version": "0"}}})
    .to_string();
    let refused = http_at(addr, "POST", "/api/mcp", &[JSON, ACCEPT], &init).await;
    assert_eq!(refused.status, 401, "{refused:?}");
    let challenge = refused.header("www-authenticate").unwrap_or_default();
    assert!(
        challenge.contains(&format!("resource_metadata=\"http://{addr}{metadata}\"")),
        "{challenge}"
    );
    // With the token the mounted endpoint answers; the app's own route is untouched.
    let opened = http_at(
        addr,
        "POST",
        "/api/mcp",
        &[JSON, ACCEPT, ("Authorization", "Bearer good")],
        &init,
    )
    .await;
    assert_eq!(opened.status, 200, "{opened:?}");
    assert_eq!(opened.message()["result"]["serverInfo"]["name"], "ops");
    assert_eq!(http_at(addr, "GET", "/health", &[], "").await.body, "ok");
}
