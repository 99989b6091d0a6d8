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
//! - `test_tool_with_progress`, `test_tool_with_logging`: tools taking the call context
//!   (`ToolContext`) to report progress and log to the session that called them.
//! - `test_trigger_tool_change`: a root tool that rerosters (adds or drops a sibling), so every
//!   session hears `tools/list_changed`.
//! - resources, a template, subscribe/unsubscribe: a text cell, a bytes cell served as a PNG
//!   blob, a collection (whose items are the template) and a watched cell, each at the suite's
//!   fixed `test://…` URI declared with a `ResourceForm`.
//! - `test_audio_content` (`render = audio`), `test_embedded_resource` (a member read, embedded)
//!   and `test_multiple_content_types` (text, picture, embedded resource and a link, with data).
//! - `test_simple_prompt`, `test_prompt_with_arguments`, `test_prompt_with_embedded_resource`,
//!   `test_prompt_with_image`: `#[prompt]`s, arguments from their input types.
//! - completions, sampling, elicitation and
//!   `input_required` results have no form in a surface: see the expected-failures file.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use std::convert::Infallible;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, OnceLock};
use std::time::Duration;
use surface::context::{LogLevel, ToolContext};
use surface::mcp::{BundleClient, CompositionError, McpServer, Member, ServedMcp, Siblings};
use surface::prompt::PromptAnswer;
use surface::resource::ResourceForm;
use surface::{
    Expose, Failure, FailureKind, OkAudio, OkContent, OkImage, expose, ok_audio, ok_image, prompt, surface,
    tool,
};

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
    /// A picture, served as a blob.
    #[cell]
    pub static_binary: Vec<u8>,
    /// Template data, by id: `test://template/{id}/data`.
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
            static_binary: surface::Cell::new(RED_PIXEL.to_vec()),
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

/// A WAV file of `samples` silent 8-bit mono samples at 8 kHz.
fn silent_wav(samples: u32) -> Vec<u8> {
    let mut wav = Vec::with_capacity(44 + samples as usize);
    wav.extend_from_slice(b"RIFF");
    wav.extend_from_slice(&(36 + samples).to_le_bytes());
    wav.extend_from_slice(b"WAVEfmt ");
    // PCM, one channel, 8000 Hz, 8000 bytes/s, block align 1, 8 bits per sample.
    for field in [
        16u32.to_le_bytes(),
        [1, 0, 1, 0],
        8000u32.to_le_bytes(),
        8000u32.to_le_bytes(),
        [1, 0, 8, 0],
    ] {
        wav.extend_from_slice(&field);
    }
    wav.extend_from_slice(b"data");
    wav.extend_from_slice(&samples.to_le_bytes());
    wav.resize(44 + samples as usize, 128);
    wav
}

/// Answers 10 ms of silence as a WAV sound.
#[tool(read_only, render = audio)]
pub async fn test_audio_content(_client: &ConformanceClient) -> Result<OkAudio, Failure> {
    Ok(ok_audio(
        silent_wav(80),
        "audio/wav",
        serde_json::json!({"milliseconds": 10}),
    ))
}

/// Answers the static text resource, embedded (a member read at its URI).
#[tool(read_only)]
pub async fn test_embedded_resource(client: &ConformanceClient) -> Result<OkContent, Failure> {
    let text = client.static_text().get().await?;
    Ok(OkContent::new().embedded_text(STATIC_TEXT_URI, "text/plain", text))
}

/// Answers text, a picture and an embedded JSON resource, with the resource's value as data.
#[tool(read_only)]
pub async fn test_multiple_content_types(_client: &ConformanceClient) -> Result<OkContent, Failure> {
    let data = serde_json::json!({"test": "data", "value": 123});
    Ok(OkContent::new()
        .text("Multiple content types test:")
        .image(RED_PIXEL.to_vec(), "image/png")
        .embedded_text(
            "test://mixed-content-resource",
            "application/json",
            data.to_string(),
        )
        .link(STATIC_TEXT_URI, "static_text")
        .value(data))
}

/// A prompt without arguments.
#[prompt]
pub async fn test_simple_prompt(_client: &ConformanceClient) -> Result<PromptAnswer, Failure> {
    Ok(PromptAnswer::new().user_text("This is a simple prompt for testing."))
}

/// Arguments of `test_prompt_with_arguments`.
#[derive(Clone, Debug, Deserialize, JsonSchema)]
pub struct TwoArgs {
    /// First test argument.
    pub arg1: String,
    /// Second test argument.
    pub arg2: String,
}

/// A prompt with two arguments, substituted into its text.
#[prompt]
pub async fn test_prompt_with_arguments(
    args: TwoArgs,
    _client: &ConformanceClient,
) -> Result<PromptAnswer, Failure> {
    Ok(PromptAnswer::new().user_text(format!(
        "Prompt with arguments: arg1='{}', arg2='{}'",
        args.arg1, args.arg2
    )))
}

/// Arguments of `test_prompt_with_embedded_resource`.
#[derive(Clone, Debug, Deserialize, JsonSchema)]
pub struct ResourceArg {
    /// URI of the resource to embed.
    #[serde(rename = "resourceUri")]
    pub resource_uri: String,
}

/// A prompt embedding a resource, then asking about it.
#[prompt]
pub async fn test_prompt_with_embedded_resource(
    args: ResourceArg,
    _client: &ConformanceClient,
) -> Result<PromptAnswer, Failure> {
    Ok(PromptAnswer::new()
        .user_embedded(
            args.resource_uri,
            "text/plain",
            "Embedded resource content for testing.",
        )
        .user_text("Please process the embedded resource above."))
}

/// A prompt showing a picture, then asking about it.
#[prompt]
pub async fn test_prompt_with_image(_client: &ConformanceClient) -> Result<PromptAnswer, Failure> {
    Ok(PromptAnswer::new()
        .user_image(RED_PIXEL.to_vec(), "image/png")
        .user_text("Please analyze the image above."))
}

/// Always fails.
#[tool(read_only)]
pub async fn test_error_handling(_client: &ConformanceClient) -> Result<String, Failure> {
    Err(Failure::new(
        FailureKind::Error,
        "This tool intentionally returns an error for testing",
    ))
}

/// Works for ~100 ms in three steps, reporting 0, 50 and 100 of 100 as progress.
#[tool(read_only)]
pub async fn test_tool_with_progress(
    _client: &ConformanceClient,
    ctx: ToolContext,
) -> Result<String, Failure> {
    for step in 0..3 {
        if step > 0 {
            tokio::select! {
                _ = ctx.cancelled() => return Err(Failure::new(FailureKind::Error, "cancelled")),
                _ = tokio::time::sleep(Duration::from_millis(50)) => {}
            }
        }
        ctx.progress(f64::from(step * 50), Some(100.0)).await;
    }
    Ok("Progress test completed".to_owned())
}

/// Works for ~100 ms in three steps, logging each at `info`.
#[tool(read_only)]
pub async fn test_tool_with_logging(
    _client: &ConformanceClient,
    ctx: ToolContext,
) -> Result<String, Failure> {
    ctx.log(LogLevel::Info, "Tool execution started").await;
    tokio::time::sleep(Duration::from_millis(50)).await;
    ctx.log(LogLevel::Info, "Tool processing data").await;
    tokio::time::sleep(Duration::from_millis(50)).await;
    ctx.log(LogLevel::Info, "Tool execution completed").await;
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
    static_binary: resource,
    template: resource,
    watched: resource,
    "watched.bump": tool(mutates),
});

/// The suite's fixed URIs: the text as `text/plain`, the picture as a PNG blob, the template's
/// items under `test://template/{id}/data`, the watched cell at `test://watched-resource`.
const STATIC_TEXT_URI: &str = "test://static-text";
const STATIC_TEXT: ResourceForm = ResourceForm::uri(STATIC_TEXT_URI).text("text/plain");
const STATIC_BINARY: ResourceForm = ResourceForm::uri("test://static-binary").blob("image/png");
const TEMPLATE: ResourceForm = ResourceForm::template("test://template/{id}/data");
const WATCHED: ResourceForm = ResourceForm::uri("test://watched-resource");

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
                .resource("static_text", STATIC_TEXT)
                .resource("static_binary", STATIC_BINARY)
                .resource("template", TEMPLATE)
                .resource("watched", WATCHED)
                .tool(TestSimpleTextTool)
                .tool(TestImageContentTool)
                .tool(TestErrorHandlingTool)
                .prompt(TestSimplePromptPrompt)
                .prompt(TestPromptWithArgumentsPrompt)
                .prompt(TestPromptWithEmbeddedResourcePrompt)
                .prompt(TestPromptWithImagePrompt)
                .tool(TestAudioContentTool)
                .tool(TestEmbeddedResourceTool)
                .tool(TestMultipleContentTypesTool)
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
    // Warnings to stderr (stdout may carry the protocol); the library installs no subscriber.
    surface::mcp::init_tracing();
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
