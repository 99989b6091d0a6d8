//! The server the official MCP conformance suite (`@modelcontextprotocol/conformance`, server
//! mode) runs against: every scenario the surface model can express, built with the DSL.
//!
//! `cargo run --example conformance -- --http 127.0.0.1:PORT` serves it over Streamable HTTP at
//! `http://127.0.0.1:PORT/mcp` (no flag: stdio). `interop/run` drives the suite against it and
//! compares the outcome with `interop/conformance-expected-failures.txt`, which names every
//! scenario this server does not pass and why.
//!
//! What the suite asks for and where it lands here:
//! - `test_simple_text`, `test_image_content`, `test_error_handling`: bespoke tools answering a
//!   value, a picture (`render = image`) and a failure (`isError: true`).
//! - `test_tool_with_progress`, `test_tool_with_logging`: the tools exist and take the time the
//!   suite expects, but a tool cannot send progress or log notifications yet (a runtime gap).
//! - `test_trigger_tool_change`: a root tool that rerosters (adds or drops a sibling), so every
//!   session hears `tools/list_changed`.
//! - resources, a template, subscribe/unsubscribe: a cell, a collection (whose items are the
//!   template) and a watched cell, at the runtime's own `surface://` URIs; the suite's fixed
//!   `test://…` URIs cannot be named by a surface.
//! - audio, embedded resources, mixed content, prompts, completions, sampling, elicitation and
//!   `input_required` results have no form in a surface: see the expected-failures file.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use std::convert::Infallible;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, OnceLock};
use std::time::Duration;
use surface::mcp::{BundleClient, CompositionError, McpServer, Member, ServedMcp, Siblings};
use surface::{CancellationToken, Expose, Failure, FailureKind, OkImage, expose, ok_image, surface, tool};

/// What a template item holds.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct TemplateData {
    /// The id the item is addressed by.
    pub id: String,
    /// Always true.
    #[serde(rename = "templateTest")]
    pub template_test: bool,
    /// `Data for ID: <id>`.
    pub data: String,
}

/// The conformance fixture.
#[surface]
pub struct Conformance {
    /// The content of the static text resource.
    #[cell]
    pub static_text: String,
    /// Template data, by id: `surface://collections/template/{id}`.
    #[collection(key = String)]
    pub template: TemplateData,
    /// A resource that changes on demand (`watched_bump`), for subscriptions.
    #[cell]
    pub watched: u32,
}

impl Conformance {
    /// The fixture in its starting state: one template item, `123`.
    pub fn new() -> Self {
        let item = TemplateData {
            id: "123".into(),
            template_test: true,
            data: "Data for ID: 123".into(),
        };
        Conformance {
            static_text: surface::Cell::new("This is the content of the static text resource.".into()),
            template: [("123".to_owned(), item)].into_iter().collect(),
            watched: surface::Cell::new(0),
        }
    }
}

impl Default for Conformance {
    fn default() -> Self {
        Conformance::new()
    }
}

#[surface]
impl Conformance {
    /// Changes the watched resource; subscribers hear `updated`.
    #[procedure("watched.bump")]
    pub async fn bump(&self) -> Result<u32, Infallible> {
        Ok(self.watched.update(|w| {
            *w += 1;
            *w
        }))
    }
}

/// A 1×1 red PNG.
const RED_PIXEL: [u8; 69] = [
    137, 80, 78, 71, 13, 10, 26, 10, 0, 0, 0, 13, 73, 72, 68, 82, 0, 0, 0, 1, 0, 0, 0, 1, 8, 2, 0, 0, 0, 144,
    119, 83, 222, 0, 0, 0, 12, 73, 68, 65, 84, 120, 156, 99, 248, 207, 192, 0, 0, 3, 1, 1, 0, 201, 254, 146,
    239, 0, 0, 0, 0, 73, 69, 78, 68, 174, 66, 96, 130,
];

/// Answers a simple text.
#[tool(read_only)]
pub async fn test_simple_text(_client: &ConformanceClient) -> Result<String, Failure> {
    Ok("This is a simple text response for testing.".to_owned())
}

/// Answers a 1×1 red PNG.
#[tool(read_only, render = image)]
pub async fn test_image_content(_client: &ConformanceClient) -> Result<OkImage, Failure> {
    Ok(ok_image(
        RED_PIXEL.to_vec(),
        "image/png",
        serde_json::json!({"width": 1, "height": 1}),
    ))
}

/// Always fails.
#[tool(read_only)]
pub async fn test_error_handling(_client: &ConformanceClient) -> Result<String, Failure> {
    Err(Failure::new(
        FailureKind::Error,
        "This tool intentionally returns an error for testing",
    ))
}

// It should report 0/50/100 of 100 as progress, but a tool has no way to send progress
// notifications yet.
/// Works for ~100 ms in three steps.
#[tool(read_only)]
pub async fn test_tool_with_progress(
    _client: &ConformanceClient,
    cancel: CancellationToken,
) -> Result<String, Failure> {
    for _ in 0..2 {
        tokio::select! {
            _ = cancel.cancelled() => return Err(Failure::new(FailureKind::Error, "cancelled")),
            _ = tokio::time::sleep(Duration::from_millis(50)) => {}
        }
    }
    Ok("Progress test completed".to_owned())
}

// It should log each step at `info`, but a tool has no way to send log notifications yet.
/// Works for ~100 ms in three steps.
#[tool(read_only)]
pub async fn test_tool_with_logging(_client: &ConformanceClient) -> Result<String, Failure> {
    tokio::time::sleep(Duration::from_millis(100)).await;
    Ok("Logging test completed".to_owned())
}

/// Input of `json_schema_2020_12_tool`, with a hand-written draft 2020-12 schema.
#[derive(Clone, Debug, Deserialize)]
pub struct Contact {
    /// A name.
    pub name: Option<String>,
    /// `phone` or `email`.
    #[serde(rename = "contactMethod")]
    pub contact_method: Option<String>,
}

impl JsonSchema for Contact {
    fn schema_name() -> std::borrow::Cow<'static, str> {
        "Contact".into()
    }

    fn json_schema(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
        schemars::json_schema!({
            "$schema": "https://json-schema.org/draft/2020-12/schema",
            "type": "object",
            "$defs": {
                "address": {
                    "$anchor": "addressDef",
                    "type": "object",
                    "properties": { "street": { "type": "string" }, "city": { "type": "string" } }
                }
            },
            "properties": {
                "name": { "type": "string" },
                "address": { "$ref": "#/$defs/address" },
                "contactMethod": { "type": "string", "enum": ["phone", "email"] },
                "phone": { "type": "string" },
                "email": { "type": "string" }
            },
            "allOf": [{ "anyOf": [{ "required": ["phone"] }, { "required": ["email"] }] }],
            "if": { "properties": { "contactMethod": { "const": "phone" } }, "required": ["contactMethod"] },
            "then": { "required": ["phone"] },
            "else": { "required": ["email"] },
            "additionalProperties": false
        })
    }
}

// The schema bridge normalises what hosts are sent: it inlines `$defs` (and the `$anchor` in
// them), drops `$schema` and re-opens closed objects, so the listing keeps the composition and
// conditional keywords but not those.
/// Tool with JSON Schema 2020-12 features.
#[tool(read_only)]
pub async fn json_schema_2020_12_tool(args: Contact, _client: &ConformanceClient) -> Result<String, Failure> {
    Ok(format!(
        "contact {} by {}",
        args.name.as_deref().unwrap_or("?"),
        args.contact_method.as_deref().unwrap_or("?")
    ))
}

/// Everything the fixture exposes.
pub const EXPOSE: Expose<Conformance> = expose!(Conformance {
    static_text: resource,
    template: resource,
    watched: resource,
    "watched.bump": tool(mutates),
});

/// What the `extra` sibling exposes while it stands.
pub const EXTRA: Expose<Conformance> = expose!(Conformance { "watched.bump": tool(mutates) });

/// The host: whether the `extra` sibling stands, and the served bundle it rerosters.
pub struct Host {
    fixture: Arc<Conformance>,
    extra: AtomicBool,
    served: OnceLock<ServedMcp>,
}

impl Host {
    fn siblings(&self) -> Siblings {
        let mut siblings = Siblings::new();
        if self.extra.load(Ordering::SeqCst) {
            siblings.insert("extra".to_owned(), Member::new(EXTRA));
        }
        siblings
    }

    fn clients(self: &Arc<Self>) -> BundleClient {
        let mut bundle =
            BundleClient::with_core(ConformanceClient::direct(self.fixture.clone())).with_host(self.clone());
        if self.extra.load(Ordering::SeqCst) {
            bundle = bundle.sibling("extra", ConformanceClient::direct(self.fixture.clone()));
        }
        bundle
    }
}

/// Changes the tool list (adds or drops the `extra` sibling's tool); answers the sibling keys.
#[tool(mutates)]
pub async fn test_trigger_tool_change(client: &BundleClient) -> Result<Vec<String>, Failure> {
    let host = client
        .host::<Host>()
        .ok_or_else(|| Failure::new(FailureKind::Error, "this bundle has no host"))?;
    let served = host
        .served
        .get()
        .ok_or_else(|| Failure::new(FailureKind::Error, "not served yet"))?;
    host.extra.fetch_xor(true, Ordering::SeqCst);
    served
        .reroster(host.siblings())
        .await
        .map_err(|e| Failure::new(FailureKind::Error, e.to_string()))
}

/// The conformance MCP server over a live fixture, started.
pub fn start(fixture: Arc<Conformance>) -> Result<ServedMcp, CompositionError> {
    let host = Arc::new(Host {
        fixture: fixture.clone(),
        extra: AtomicBool::new(false),
        served: OnceLock::new(),
    });
    let factory_host = host.clone();
    let served = McpServer::new("surface-conformance", env!("CARGO_PKG_VERSION"))
        .instructions("The MCP conformance fixture of the surface runtime.")
        .root_tool(TestTriggerToolChangeTool)
        .core(
            Member::new(EXPOSE)
                .tool(TestSimpleTextTool)
                .tool(TestImageContentTool)
                .tool(TestErrorHandlingTool)
                .tool(TestToolWithProgressTool)
                .tool(TestToolWithLoggingTool)
                .tool(JsonSchema202012ToolTool),
        )
        .client(move || factory_host.clients())
        .start()?;
    let _ = host.served.set(served.clone());
    Ok(served)
}

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let served = start(Arc::new(Conformance::new()))?;
    match std::env::args().skip(1).collect::<Vec<_>>().as_slice() {
        [] => served.serve_stdio().await?,
        [flag, addr] if flag == "--http" => {
            let options = surface::mcp::HttpOptions::new(addr.parse::<std::net::SocketAddr>()?);
            let http = served.serve_http(options).await?;
            eprintln!("surface-mcp: serving MCP over Streamable HTTP at {}", http.url());
            http.waiting().await?;
        }
        _ => {
            eprintln!("usage: conformance [--http ADDR]   (no flag: MCP on stdio)");
            std::process::exit(2);
        }
    }
    Ok(())
}
