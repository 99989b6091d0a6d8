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
//! - `test_sampling`, `test_elicitation`, `test_elicitation_sep1034_defaults`,
//!   `test_elicitation_sep1330_enums`: tools asking the host through their `ToolContext`
//!   (`ctx.sample(..)`, `ctx.elicit::<Form>(..)`), each form a flat struct whose fields, defaults
//!   and enums (titled by `#[schemars(title)]`) make the elicitation schema.
//! - the `test_input_required_result_*` tools and prompt: the same asks, keyed as the suite
//!   expects (`.key("user_name")`). On a legacy session they are requests to the host; on
//!   2026-07-28 they become `input_required` results with a sealed `requestState`, one round per
//!   sequence of asks (`test_input_required_result_multi_round`) and one question per branch of a
//!   `join!` (`test_input_required_result_multiple_inputs`).
//! - `test_missing_capability`, `test_streaming_elicitation`, `test_logging_tool`: the
//!   stateless scenario's diagnostic tools.
//! - the tasks suite's fixtures (`io.modelcontextprotocol/tasks`): `greet` (never a task),
//!   `slow_compute` (`#[tool(task)]`), `failing_job` (`task = required`, a tool error),
//!   `protocol_error_job` (a protocol error), `test_tool_with_task` (asks inline, with the
//!   `tools/call`, then becomes a task), `confirm_delete` and `multi_input` (questions
//!   answered through `tasks/update`).

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use std::convert::Infallible;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, OnceLock};
use std::time::Duration;
use surface::ask::{Elicitation, Root, Sample};
use surface::context::{LogLevel, ToolContext};
use surface::mcp::{BundleClient, CompositionError, McpServer, Member, ServedMcp, Siblings};
use surface::prompt::PromptAnswer;
use surface::resource::ResourceForm;
use surface::{
    Elicit, Expose, Failure, FailureKind, OkAudio, OkContent, OkImage, expose, ok_audio, ok_image, prompt,
    surface, tool,
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
    /// Changes the watched resource; subscribers hear `updated`. A procedure reaches its
    /// call's context through the face-neutral `ToolContext::current()`: the caller hears the
    /// step as progress (when it gave a progress token).
    #[procedure("watched.bump")]
    pub async fn bump(&self) -> Result<u32, Infallible> {
        let bumped = self.watched.update(|w| {
            *w += 1;
            *w
        });
        ToolContext::current()
            .progress_with(1.0, Some(1.0), format!("watched is {bumped}"))
            .await;
        Ok(bumped)
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

/// Asks the host's model to answer `prompt`; answers what it said.
#[tool(read_only)]
pub async fn test_sampling(
    args: SamplingArgs,
    _client: &ConformanceClient,
    ctx: ToolContext,
) -> Result<String, Failure> {
    let sampled = ctx.sample(Sample::user(args.prompt).max_tokens(100)).await?;
    Ok(format!("LLM response: {}", sampled.text.unwrap_or_default()))
}

/// Input of `test_sampling`.
#[derive(Clone, Debug, Deserialize, JsonSchema)]
pub struct SamplingArgs {
    /// The prompt to send to the LLM.
    pub prompt: String,
}

/// Input of `test_elicitation`.
#[derive(Clone, Debug, Deserialize, JsonSchema)]
pub struct ElicitationArgs {
    /// The message to show the user.
    pub message: String,
}

/// The form `test_elicitation` asks the user to fill in.
#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema, Elicit)]
pub struct UserInfo {
    /// User's response
    pub username: String,
    /// User's email address
    pub email: String,
}

/// What the user did with a form, as the suite's tools report it.
fn completed<T: Serialize>(what: &str, answer: Elicitation<T>) -> String {
    let action = answer.action();
    let content = answer
        .accepted()
        .map_or(serde_json::Value::Null, |v| serde_json::json!(v));
    format!("{what}: action={action}, content={content}")
}

/// Asks the user for a username and an email, showing `message`.
#[tool(read_only)]
pub async fn test_elicitation(
    args: ElicitationArgs,
    _client: &ConformanceClient,
    ctx: ToolContext,
) -> Result<String, Failure> {
    let answer = ctx.elicit::<UserInfo>(args.message).await?;
    Ok(completed("User response", answer))
}

/// An account's status.
#[derive(Clone, Debug, Default, Serialize, Deserialize, JsonSchema, Elicit)]
#[serde(rename_all = "lowercase")]
pub enum Status {
    /// In use.
    #[default]
    Active,
    /// Not in use.
    Inactive,
    /// Waiting.
    Pending,
}

/// A form whose every field has a default (SEP-1034).
#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema, Elicit)]
pub struct Defaults {
    /// A name.
    #[serde(default = "default_name")]
    pub name: String,
    /// An age.
    #[serde(default = "default_age")]
    pub age: i64,
    /// A score.
    #[serde(default = "default_score")]
    pub score: f64,
    /// A status.
    #[serde(default)]
    #[schemars(schema_with = "untitled_status")]
    pub status: Status,
    /// Whether verified.
    #[serde(default = "default_true")]
    pub verified: bool,
}

fn default_name() -> String {
    "John Doe".into()
}
fn default_age() -> i64 {
    30
}
fn default_score() -> f64 {
    95.5
}
fn default_true() -> bool {
    true
}

/// `Status` as a plain enum: its doc comments are for readers of this file, not titles.
fn untitled_status(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
    schemars::json_schema!({ "type": "string", "enum": ["active", "inactive", "pending"], "default": "active" })
}

/// Asks for a form whose fields all have defaults.
#[tool(read_only)]
pub async fn test_elicitation_sep1034_defaults(
    _client: &ConformanceClient,
    ctx: ToolContext,
) -> Result<String, Failure> {
    let answer = ctx.elicit::<Defaults>("Please review your profile").await?;
    Ok(completed("Elicitation completed", answer))
}

/// Three plain options.
#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema, Elicit)]
#[serde(rename_all = "lowercase")]
pub enum Plain {
    #[allow(missing_docs)]
    Option1,
    #[allow(missing_docs)]
    Option2,
    #[allow(missing_docs)]
    Option3,
}

/// Three options with titles.
#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema, Elicit)]
#[serde(rename_all = "lowercase")]
pub enum Titled {
    #[schemars(title = "First Option")]
    #[allow(missing_docs)]
    Value1,
    #[schemars(title = "Second Option")]
    #[allow(missing_docs)]
    Value2,
    #[schemars(title = "Third Option")]
    #[allow(missing_docs)]
    Value3,
}

/// Three choices with titles, for a multi-select.
#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema, Elicit)]
#[serde(rename_all = "lowercase")]
pub enum Choice {
    #[schemars(title = "First Choice")]
    #[allow(missing_docs)]
    Value1,
    #[schemars(title = "Second Choice")]
    #[allow(missing_docs)]
    Value2,
    #[schemars(title = "Third Choice")]
    #[allow(missing_docs)]
    Value3,
}

/// Three options with the deprecated `enumNames` titles.
#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema, Elicit)]
#[serde(rename_all = "lowercase")]
#[schemars(extend("enumNames" = ["Option One", "Option Two", "Option Three"]))]
pub enum Legacy {
    #[allow(missing_docs)]
    Opt1,
    #[allow(missing_docs)]
    Opt2,
    #[allow(missing_docs)]
    Opt3,
}

/// Every enum shape a form may hold (SEP-1330).
#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema, Elicit)]
#[serde(rename_all = "camelCase")]
pub struct Enums {
    /// Pick one.
    pub untitled_single: Plain,
    /// Pick one, by title.
    pub titled_single: Titled,
    /// Pick one (titled the old way).
    pub legacy_enum: Legacy,
    /// Pick any.
    pub untitled_multi: Vec<Plain>,
    /// Pick any, by title.
    pub titled_multi: Vec<Choice>,
}

/// Asks for a form of every enum shape.
#[tool(read_only)]
pub async fn test_elicitation_sep1330_enums(
    _client: &ConformanceClient,
    ctx: ToolContext,
) -> Result<String, Failure> {
    let answer = ctx.elicit::<Enums>("Please choose").await?;
    Ok(completed("Elicitation completed", answer))
}

/// A name.
#[derive(Clone, Debug, Deserialize, JsonSchema, Elicit)]
pub struct Name {
    #[allow(missing_docs)]
    pub name: String,
}

/// A confirmation.
#[derive(Clone, Debug, Deserialize, JsonSchema, Elicit)]
pub struct Confirm {
    #[allow(missing_docs)]
    pub ok: bool,
}

/// A colour.
#[derive(Clone, Debug, Deserialize, JsonSchema, Elicit)]
pub struct Color {
    #[allow(missing_docs)]
    pub color: String,
}

/// What the user answered, or why there is nothing.
fn accepted<T>(answer: Elicitation<T>) -> Result<T, Failure> {
    let action = answer.action();
    answer
        .accepted()
        .ok_or_else(|| Failure::new(FailureKind::Refused, format!("the user chose to {action}")))
}

/// Asks the user's name (`user_name`), then greets them.
#[tool(read_only)]
pub async fn test_input_required_result_elicitation(
    _client: &ConformanceClient,
    ctx: ToolContext,
) -> Result<String, Failure> {
    let name = ctx.elicit::<Name>("What is your name?").key("user_name").await?;
    Ok(format!("Hello, {}!", accepted(name)?.name))
}

/// Asks the model the capital of France (`capital_question`); answers what it said.
#[tool(read_only)]
pub async fn test_input_required_result_sampling(
    _client: &ConformanceClient,
    ctx: ToolContext,
) -> Result<String, Failure> {
    let ask = Sample::user("What is the capital of France?").max_tokens(100);
    let sampled = ctx.sample(ask).key("capital_question").await?;
    Ok(format!("The model said: {}", sampled.text.unwrap_or_default()))
}

fn root_list(roots: &[Root]) -> String {
    roots
        .iter()
        .map(|r| r.uri.as_str())
        .collect::<Vec<_>>()
        .join(", ")
}

/// Asks the host's roots (`client_roots`); answers their URIs.
#[tool(read_only)]
pub async fn test_input_required_result_list_roots(
    _client: &ConformanceClient,
    ctx: ToolContext,
) -> Result<String, Failure> {
    let roots = ctx.roots().key("client_roots").await?;
    Ok(format!("Roots: {}", root_list(&roots)))
}

/// Asks for a confirmation (`confirm`); the state of the round carried it back intact.
#[tool(read_only)]
pub async fn test_input_required_result_request_state(
    _client: &ConformanceClient,
    ctx: ToolContext,
) -> Result<String, Failure> {
    let confirm = ctx.elicit::<Confirm>("Please confirm").key("confirm").await?;
    Ok(format!("state-ok: confirmed={}", accepted(confirm)?.ok))
}

/// Asks for a name, a greeting from the model and the roots, all in one round.
#[tool(read_only)]
pub async fn test_input_required_result_multiple_inputs(
    _client: &ConformanceClient,
    ctx: ToolContext,
) -> Result<String, Failure> {
    let (name, greeting, roots) = futures::join!(
        ctx.elicit::<Name>("What is your name?").key("user_name"),
        ctx.sample(Sample::user("Generate a greeting").max_tokens(50))
            .key("greeting"),
        ctx.roots().key("client_roots"),
    );
    Ok(format!(
        "{} {} (roots: {})",
        greeting?.text.unwrap_or_default(),
        accepted(name?)?.name,
        root_list(&roots?)
    ))
}

/// Asks a name (`step1`), then a favourite colour (`step2`): two rounds.
#[tool(read_only)]
pub async fn test_input_required_result_multi_round(
    _client: &ConformanceClient,
    ctx: ToolContext,
) -> Result<String, Failure> {
    let name = ctx
        .elicit::<Name>("Step 1: What is your name?")
        .key("step1")
        .await?;
    let name = accepted(name)?.name;
    let color = ctx
        .elicit::<Color>("Step 2: What is your favorite color?")
        .key("step2")
        .await?;
    Ok(format!("{name} likes {}", accepted(color)?.color))
}

/// Asks for a confirmation; a tampered `requestState` never reaches it.
#[tool(read_only)]
pub async fn test_input_required_result_tampered_state(
    _client: &ConformanceClient,
    ctx: ToolContext,
) -> Result<String, Failure> {
    let confirm = ctx.elicit::<Confirm>("Please confirm").key("confirm").await?;
    Ok(format!("confirmed={}", accepted(confirm)?.ok))
}

/// Asks for a name and a model's greeting, each only when the host can answer it.
#[tool(read_only)]
pub async fn test_input_required_result_capabilities(
    _client: &ConformanceClient,
    ctx: ToolContext,
) -> Result<String, Failure> {
    let (name, greeting) = futures::join!(
        ctx.elicit::<Name>("What is your name?").key("user_name"),
        ctx.sample(Sample::user("Generate a greeting").max_tokens(50))
            .key("greeting"),
    );
    let name = name.ok().and_then(Elicitation::accepted).map(|n| n.name);
    let greeting = greeting.ok().and_then(|s| s.text);
    Ok(format!(
        "name: {}, greeting: {}",
        name.as_deref().unwrap_or("(not asked)"),
        greeting.as_deref().unwrap_or("(not asked)")
    ))
}

/// Needs the host's model: refused when the host did not declare sampling.
#[tool(read_only)]
pub async fn test_missing_capability(
    _client: &ConformanceClient,
    ctx: ToolContext,
) -> Result<String, Failure> {
    let sampled = ctx.sample(Sample::user("Say hello").max_tokens(20)).await?;
    Ok(sampled.text.unwrap_or_default())
}

/// Asks the user's name while working (an `input_required` result on 2026-07-28).
#[tool(read_only)]
pub async fn test_streaming_elicitation(
    _client: &ConformanceClient,
    ctx: ToolContext,
) -> Result<String, Failure> {
    ctx.progress(0.0, Some(1.0)).await;
    let name = ctx.elicit::<Name>("What is your name?").key("user_name").await?;
    Ok(format!("Hello, {}!", accepted(name)?.name))
}

/// Logs at `info` while working: heard only at or above the level the request named.
#[tool(read_only)]
pub async fn test_logging_tool(_client: &ConformanceClient, ctx: ToolContext) -> Result<String, Failure> {
    ctx.log(LogLevel::Info, "test_logging_tool ran").await;
    Ok("logged".to_owned())
}

/// A prompt that first asks the user for its context (`user_context`).
#[prompt]
pub async fn test_input_required_result_prompt(_client: &ConformanceClient) -> Result<PromptAnswer, Failure> {
    /// The context.
    #[derive(Deserialize, JsonSchema, Elicit)]
    struct Context {
        context: String,
    }
    let asked = ToolContext::current()
        .elicit::<Context>("What context should the prompt use?")
        .key("user_context")
        .await?;
    Ok(PromptAnswer::new().user_text(format!("Use this context: {}", accepted(asked)?.context)))
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

/// Input of `greet`.
#[derive(Clone, Debug, Deserialize, JsonSchema)]
pub struct GreetArgs {
    /// Who to greet.
    pub name: String,
}

/// Greets `name` at once (the tasks suite's sync-only tool: never a task), as plain text.
#[tool(read_only)]
pub async fn greet(args: GreetArgs, _client: &ConformanceClient) -> Result<OkContent, Failure> {
    Ok(OkContent::new().text(format!("Hello, {}!", args.name)))
}

/// Input of `slow_compute`.
#[derive(Clone, Debug, Deserialize, JsonSchema)]
pub struct SlowArgs {
    /// How long to compute, in seconds.
    #[serde(default)]
    pub seconds: f64,
    /// A label echoed in the answer.
    #[serde(default)]
    pub label: String,
}

/// Computes for `seconds`: a task for a client that supports MCP tasks, inline for others.
#[tool(read_only, task)]
pub async fn slow_compute(
    args: SlowArgs,
    _client: &ConformanceClient,
    ctx: ToolContext,
) -> Result<String, Failure> {
    ctx.progress_with(0.0, Some(args.seconds), format!("computing {}", args.label))
        .await;
    tokio::time::sleep(Duration::from_secs_f64(args.seconds.clamp(0.0, 3600.0))).await;
    Ok(format!("computed {} in {}s", args.label, args.seconds))
}

/// Fails as a tool (a completed task whose result is an error); only ever a task.
#[tool(read_only, task = required)]
pub async fn failing_job(_client: &ConformanceClient) -> Result<String, Failure> {
    Err(Failure::new(FailureKind::Error, "the job failed"))
}

/// Fails as the protocol, not as the tool: it asks the client its roots, which a client of
/// the tasks suite does not declare, so the task ends `failed` with -32021 (a task for a client
/// that supports tasks).
#[tool(read_only, task)]
pub async fn protocol_error_job(_client: &ConformanceClient, ctx: ToolContext) -> Result<String, Failure> {
    let roots = ctx.roots().await?;
    Ok(root_list(&roots))
}

/// The confirmation `confirm_delete` asks for.
#[derive(Clone, Debug, Deserialize, JsonSchema, Elicit)]
pub struct ConfirmDelete {
    /// Delete it?
    pub confirm: bool,
}

/// Input of `confirm_delete`.
#[derive(Clone, Debug, Deserialize, JsonSchema)]
pub struct DeleteArgs {
    /// The file to delete.
    pub filename: String,
}

/// Asks the user to confirm, then "deletes" the file (a task whose question waits for
/// `tasks/update`).
#[tool(mutates, task)]
pub async fn confirm_delete(
    args: DeleteArgs,
    _client: &ConformanceClient,
    ctx: ToolContext,
) -> Result<String, Failure> {
    let answer = ctx
        .elicit::<ConfirmDelete>(&format!("Delete {}?", args.filename))
        .key("confirm")
        .await?;
    match accepted(answer)?.confirm {
        true => Ok(format!("deleted {}", args.filename)),
        false => Ok(format!("kept {}", args.filename)),
    }
}

/// Asks two questions at once (`first`, `second`), then greets both names.
#[tool(read_only, task)]
pub async fn multi_input(_client: &ConformanceClient, ctx: ToolContext) -> Result<String, Failure> {
    let (first, second) = futures::join!(
        ctx.elicit::<Name>("The first name?").key("first"),
        ctx.elicit::<Name>("The second name?").key("second"),
    );
    Ok(format!(
        "Hello, {} and {}!",
        accepted(first?)?.name,
        accepted(second?)?.name
    ))
}

/// Asks the user's name with the call (an `input_required` round of the `tools/call` itself),
/// then greets them as a task (the tasks suite's MRTR-to-task composition; only ever a task).
#[tool(read_only, task = required)]
pub async fn test_tool_with_task(_client: &ConformanceClient, ctx: ToolContext) -> Result<String, Failure> {
    let name = ctx
        .elicit::<Name>("What is your name?")
        .key("user_name")
        .before_task()
        .await?;
    let name = accepted(name)?.name;
    // The long part, which runs as the task.
    tokio::time::sleep(Duration::from_millis(200)).await;
    Ok(format!("Hello, {name}! (asked before the task, greeted by it)"))
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
                .tool(JsonSchema202012ToolTool)
                .tool(TestSamplingTool)
                .tool(TestElicitationTool)
                .tool(TestElicitationSep1034DefaultsTool)
                .tool(TestElicitationSep1330EnumsTool)
                .tool(TestInputRequiredResultElicitationTool)
                .tool(TestInputRequiredResultSamplingTool)
                .tool(TestInputRequiredResultListRootsTool)
                .tool(TestInputRequiredResultRequestStateTool)
                .tool(TestInputRequiredResultMultipleInputsTool)
                .tool(TestInputRequiredResultMultiRoundTool)
                .tool(TestInputRequiredResultTamperedStateTool)
                .tool(TestInputRequiredResultCapabilitiesTool)
                .tool(TestMissingCapabilityTool)
                .tool(TestStreamingElicitationTool)
                .tool(TestLoggingToolTool)
                .tool(GreetTool)
                .tool(SlowComputeTool)
                .tool(FailingJobTool)
                .tool(ProtocolErrorJobTool)
                .tool(ConfirmDeleteTool)
                .tool(MultiInputTool)
                .tool(TestToolWithTaskTool)
                .prompt(TestInputRequiredResultPromptPrompt),
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
