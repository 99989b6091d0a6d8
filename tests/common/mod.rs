//! Test harness: a raw rmcp client over an in-process duplex, in either protocol era, for the
//! checks that need rmcp's own types (server info, raw results); the rest use
//! `surface::testing::TestClient`.

#![allow(dead_code)]

pub mod daemon;
pub mod raw_http;
pub mod redis;
pub mod stdio;

use rmcp::model::*;
use rmcp::service::RunningService;
use rmcp::{ClientHandler, ClientLifecycleMode, ClientServiceExt, RoleClient, ServiceExt};
use serde_json::{Value, json};
use surface::mcp::ServedMcp;

/// The two protocol eras one server definition serves.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Era {
    /// `initialize` (2025-11-25 and earlier).
    Legacy,
    /// `server/discover` (2026-07-28).
    Modern,
}

pub const ERAS: [Era; 2] = [Era::Legacy, Era::Modern];

/// The harness's client handler: it only states the client's identity (notifications are
/// heard through `surface::testing::TestClient`).
#[derive(Clone)]
pub struct Recorder;

impl ClientHandler for Recorder {
    fn get_info(&self) -> ClientConfig {
        ClientConfig::new(
            ClientCapabilities::default(),
            Implementation::new("surface-tests", "0.0.0"),
        )
        .with_protocol_version(ProtocolVersion::LATEST_WITH_INITIALIZE)
    }
}

pub struct Client {
    pub era: Era,
    pub service: RunningService<RoleClient, Recorder>,
}

/// Connects a client in `era` to `served` over an in-process duplex.
pub async fn connect(served: &ServedMcp, era: Era) -> Client {
    let service = connect_with(served, era, Recorder).await;
    Client { era, service }
}

/// The client's end of an in-process pipe (`capacity` bytes each way) that `served` serves
/// as it serves stdio.
pub fn pipe(served: &ServedMcp, capacity: usize) -> tokio::io::DuplexStream {
    let (server_io, client_io) = tokio::io::duplex(capacity);
    let served = served.clone();
    tokio::spawn(async move {
        let (r, w) = tokio::io::split(server_io);
        if let Ok(connection) = served.serve(r, w).await {
            let _ = connection.waiting().await;
        }
    });
    client_io
}

/// Connects `handler` as a client in `era` to `served` over an in-process duplex.
pub async fn connect_with<H: ClientHandler>(
    served: &ServedMcp,
    era: Era,
    handler: H,
) -> RunningService<RoleClient, H> {
    let client_io = pipe(served, 1 << 20);
    match era {
        Era::Legacy => handler.serve(client_io).await.expect("legacy client connects"),
        Era::Modern => handler
            .serve_with_lifecycle(
                client_io,
                ClientLifecycleMode::Discover {
                    preferred_versions: vec![ProtocolVersion::V_2026_07_28],
                },
            )
            .await
            .expect("2026-07-28 client connects"),
    }
}

impl Client {
    pub async fn call(&self, name: &str, args: Value) -> Result<CallToolResult, rmcp::ServiceError> {
        let mut params = CallToolRequestParams::new(name.to_owned());
        if let Value::Object(o) = args {
            params = params.with_arguments(o);
        }
        self.service.call_tool(params).await
    }

    pub async fn call_ok(&self, name: &str, args: Value) -> Value {
        let r = self.call(name, args).await.expect("answered");
        assert_eq!(r.is_error, Some(false), "{name} failed: {r:?}");
        r.structured_content.expect("structured content")
    }

    pub async fn read(&self, uri: &str) -> Result<Value, rmcp::ServiceError> {
        let r = self
            .service
            .read_resource(ReadResourceRequestParams::new(uri.to_owned()))
            .await?;
        let text = match &r.contents[0] {
            ResourceContents::TextResourceContents { text, mime_type, .. } => {
                assert_eq!(mime_type.as_deref(), Some("application/json"));
                text.clone()
            }
            other => panic!("not text: {other:?}"),
        };
        Ok(serde_json::from_str(&text).expect("JSON text"))
    }
}

/// The message of a JSON-RPC error answer.
pub fn rpc_error(e: rmcp::ServiceError) -> ErrorData {
    match e {
        rmcp::ServiceError::McpError(e) => e,
        other => panic!("expected a JSON-RPC error, got {other:?}"),
    }
}

/// The text of a tool result's first content block.
pub fn text(r: &CallToolResult) -> String {
    r.content[0].as_text().expect("text").text.clone()
}

pub fn empty() -> Value {
    json!({})
}

/// The built `ops` example (built first: `cargo test --test X` alone does not build examples).
/// `SURFACE_TEST_OPS=/path/to/ops` uses that binary instead (e.g. one built from an older
/// commit, to show a test failing there).
pub fn ops_binary() -> std::path::PathBuf {
    if let Some(path) = std::env::var_os("SURFACE_TEST_OPS") {
        return path.into();
    }
    example_binary("ops")
}

/// The built example `name` (built first).
pub fn example_binary(name: &str) -> std::path::PathBuf {
    example_binary_with(name, &[])
}

/// The built example `name`, built first with the crate's `features` (`["redis"]`).
pub fn example_binary_with(name: &str, features: &[&str]) -> std::path::PathBuf {
    let features = features.join(",");
    let status = std::process::Command::new(env!("CARGO"))
        .args(["build", "--quiet", "--example", name])
        .args(
            (!features.is_empty())
                .then_some(["--features", &features])
                .into_iter()
                .flatten(),
        )
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .status()
        .expect("cargo runs");
    assert!(status.success(), "the {name} example builds");
    let deps = std::env::current_exe().unwrap();
    deps.parent()
        .unwrap()
        .parent()
        .unwrap()
        .join("examples")
        .join(name)
}

/// Compares `actual` with `tests/golden/<name>`; `SURFACE_BLESS=1` rewrites the file instead.
pub fn golden(name: &str, actual: &str) {
    let path = format!("{}/tests/golden/{name}", env!("CARGO_MANIFEST_DIR"));
    if std::env::var_os("SURFACE_BLESS").is_some() {
        std::fs::write(&path, actual).unwrap();
    }
    let expected =
        std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path}: {e} (bless with SURFACE_BLESS=1)"));
    assert_eq!(actual, expected, "{name} differs from its golden file");
}

/// `VmRSS` of process `pid` in kB; `None` once it is gone.
pub fn rss_kb(pid: u32) -> Option<u64> {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    status
        .lines()
        .find_map(|l| l.strip_prefix("VmRSS:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
}

/// The median of memory samples (the upper one of an even count).
pub fn median(samples: &[u64]) -> u64 {
    let mut sorted = samples.to_vec();
    sorted.sort_unstable();
    sorted[sorted.len() / 2]
}

/// A free loopback port and `verifier` as the authentication of an HTTP server bound there
/// (issuer `https://issuer.test`, resource `http://127.0.0.1:<port>/mcp`).
pub fn custom_auth(verifier: impl surface::auth::TokenVerifier) -> (u16, surface::auth::Auth) {
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let auth = surface::auth::Auth::custom(verifier)
        .authorization_server("https://issuer.test")
        .with_resource(format!("http://127.0.0.1:{port}/mcp"));
    (port, auth)
}
