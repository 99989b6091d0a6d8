//! Test harness: an rmcp client over an in-process duplex, in either protocol era, that
//! records the notifications it receives.

#![allow(dead_code)]

use rmcp::model::*;
use rmcp::service::{NotificationContext, RunningService};
use rmcp::{ClientHandler, ClientLifecycleMode, ClientServiceExt, RoleClient, ServiceExt};
use serde_json::{Value, json};
use std::time::Duration;
use surface::mcp::ServedMcp;
use tokio::sync::mpsc;

/// The two protocol eras one server definition serves.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Era {
    /// `initialize` (2025-11-25 and earlier).
    Legacy,
    /// `server/discover` (2026-07-28).
    Modern,
}

pub const ERAS: [Era; 2] = [Era::Legacy, Era::Modern];

/// What the client heard, in order.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Heard {
    Updated(String),
    ToolsChanged,
    ResourcesChanged,
    /// A 2026-07-28 listen stream ended with this error.
    Ended(String),
}

#[derive(Clone)]
pub struct Recorder {
    heard: mpsc::UnboundedSender<Heard>,
}

impl ClientHandler for Recorder {
    async fn on_resource_updated(
        &self,
        params: ResourceUpdatedNotificationParam,
        _context: NotificationContext<RoleClient>,
    ) {
        let _ = self.heard.send(Heard::Updated(params.uri));
    }
    async fn on_tool_list_changed(&self, _context: NotificationContext<RoleClient>) {
        let _ = self.heard.send(Heard::ToolsChanged);
    }
    async fn on_resource_list_changed(&self, _context: NotificationContext<RoleClient>) {
        let _ = self.heard.send(Heard::ResourcesChanged);
    }
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
    tx: mpsc::UnboundedSender<Heard>,
    pub service: RunningService<RoleClient, Recorder>,
    pub heard: mpsc::UnboundedReceiver<Heard>,
}

/// Connects a client in `era` to `served` over an in-process duplex.
pub async fn connect(served: &ServedMcp, era: Era) -> Client {
    let (server_io, client_io) = tokio::io::duplex(1 << 20);
    let served = served.clone();
    tokio::spawn(async move {
        let (r, w) = tokio::io::split(server_io);
        if let Ok(connection) = served.serve(r, w).await {
            let _ = connection.waiting().await;
        }
    });
    let (tx, heard) = mpsc::unbounded_channel();
    let recorder = Recorder { heard: tx.clone() };
    let service = match era {
        Era::Legacy => recorder.serve(client_io).await.expect("legacy client connects"),
        Era::Modern => recorder
            .serve_with_lifecycle(
                client_io,
                ClientLifecycleMode::Discover {
                    preferred_versions: vec![ProtocolVersion::V_2026_07_28],
                },
            )
            .await
            .expect("2026-07-28 client connects"),
    };
    Client {
        era,
        tx,
        service,
        heard,
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

    /// Subscribes to `uri`: `resources/subscribe` (legacy) or a `subscriptions/listen` stream
    /// that also takes both list_changed notifications (2026-07-28).
    pub async fn subscribe(&self, uri: &str) -> Result<(), rmcp::ServiceError> {
        match self.era {
            #[allow(deprecated)]
            Era::Legacy => {
                self.service
                    .subscribe(SubscribeRequestParams::new(uri.to_owned()))
                    .await
            }
            Era::Modern => {
                let filter = SubscriptionFilter::builder()
                    .tools_list_changed()
                    .resources_list_changed()
                    .resource_subscription(uri.to_owned())
                    .build();
                self.listen(filter).await
            }
        }
    }

    /// Opens a 2026-07-28 listen stream for both list_changed notifications (legacy sessions
    /// get them unasked).
    pub async fn listen_lists(&self) {
        if self.era == Era::Modern {
            let filter = SubscriptionFilter::builder()
                .tools_list_changed()
                .resources_list_changed()
                .build();
            self.listen(filter).await.expect("listen opens");
        }
    }

    async fn listen(&self, filter: SubscriptionFilter) -> Result<(), rmcp::ServiceError> {
        let mut sub = self.service.listen(filter).await?;
        let tx = self.tx.clone();
        tokio::spawn(async move {
            loop {
                let heard = match sub.next().await {
                    Ok(Some(ServerNotification::ResourceUpdatedNotification(n))) => {
                        Heard::Updated(n.params.uri)
                    }
                    Ok(Some(ServerNotification::ToolListChangedNotification(_))) => Heard::ToolsChanged,
                    Ok(Some(ServerNotification::ResourceListChangedNotification(_))) => {
                        Heard::ResourcesChanged
                    }
                    Ok(Some(_)) => continue,
                    Ok(None) => return,
                    Err(e) => {
                        let _ = tx.send(Heard::Ended(e.to_string()));
                        return;
                    }
                };
                if tx.send(heard).is_err() {
                    return;
                }
            }
        });
        Ok(())
    }

    /// Waits for the next notification, up to `secs`.
    pub async fn next_heard(&mut self, secs: u64) -> Option<Heard> {
        tokio::time::timeout(Duration::from_secs(secs), self.heard.recv())
            .await
            .ok()
            .flatten()
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
pub fn ops_binary() -> std::path::PathBuf {
    let status = std::process::Command::new(env!("CARGO"))
        .args(["build", "--quiet", "--example", "ops"])
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .status()
        .expect("cargo runs");
    assert!(status.success(), "the ops example builds");
    let deps = std::env::current_exe().unwrap();
    deps.parent()
        .unwrap()
        .parent()
        .unwrap()
        .join("examples")
        .join("ops")
}
