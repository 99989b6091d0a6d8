//! The conformance example over MCP, in both eras: members at declared URIs (text, blob,
//! template items), answers of audio and of several blocks; and the composition refusals that
//! declared URIs add.

mod common;

#[allow(dead_code)]
#[path = "../examples/conformance.rs"]
mod conformance;

use common::{ERAS, connect, rpc_error};
use conformance::{Conformance, EXPOSE};
use rmcp::model::{ReadResourceRequestParams, ResourceContents};
use serde_json::{Value, json};
use std::sync::Arc;
use surface::mcp::{BundleClient, McpServer, Member};
use surface::resource::ResourceForm;

async fn read_raw(client: &common::Client, uri: &str) -> Value {
    let result = client
        .service
        .read_resource(ReadResourceRequestParams::new(uri.to_owned()))
        .await
        .unwrap_or_else(|e| panic!("{uri}: {e}"));
    let [contents] = result.contents.as_slice() else {
        panic!("{uri}: not one contents entry")
    };
    assert!(matches!(
        contents,
        ResourceContents::TextResourceContents { .. } | ResourceContents::BlobResourceContents { .. }
    ));
    serde_json::to_value(contents).unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn members_are_served_at_their_declared_uris_in_their_form() {
    let served = conformance::start(Arc::new(Conformance::new())).expect("composes");
    for era in ERAS {
        let client = connect(&served, era).await;
        assert_eq!(
            read_raw(&client, "test://static-text").await,
            json!({"uri": "test://static-text", "mimeType": "text/plain",
                   "text": "This is the content of the static text resource."}),
            "{era:?}"
        );
        let binary = read_raw(&client, "test://static-binary").await;
        assert_eq!(binary["mimeType"], "image/png", "{era:?}");
        assert!(
            binary["blob"].as_str().unwrap().starts_with("iVBORw0KGgo"),
            "{era:?}: a PNG, base64"
        );
        let item = read_raw(&client, "test://template/123/data").await;
        assert_eq!(item["mimeType"], "application/json");
        let data: Value = serde_json::from_str(item["text"].as_str().unwrap()).unwrap();
        assert_eq!(data["data"], "Data for ID: 123");
        let missing = client
            .service
            .read_resource(ReadResourceRequestParams::new(
                "test://template/999/data".to_owned(),
            ))
            .await
            .unwrap_err();
        assert!(rpc_error(missing).message.contains("999"), "{era:?}");
        // The runtime's own URI is no longer where the member lives.
        assert!(
            client
                .service
                .read_resource(ReadResourceRequestParams::new(
                    "surface://cells/static_text".to_owned()
                ))
                .await
                .is_err()
        );
        let templates = client.service.list_all_resource_templates().await.unwrap();
        assert_eq!(templates[0].uri_template, "test://template/{id}/data");
        let resources = client.service.list_all_resources().await.unwrap();
        let text = resources.iter().find(|r| r.uri == "test://static-text").unwrap();
        assert_eq!(text.mime_type.as_deref(), Some("text/plain"));
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn audio_and_several_blocks_answer_with_their_data() {
    let served = conformance::start(Arc::new(Conformance::new())).expect("composes");
    for era in ERAS {
        let client = connect(&served, era).await;
        let audio =
            serde_json::to_value(client.call("test_audio_content", json!({})).await.unwrap()).unwrap();
        // Structured content is also serialized JSON in a text block (the spec's SHOULD), first.
        assert_eq!(audio["content"][0]["type"], "text", "{era:?}: {audio}");
        let text: Value = serde_json::from_str(audio["content"][0]["text"].as_str().unwrap()).unwrap();
        assert_eq!(text, audio["structuredContent"]);
        assert_eq!(audio["content"][1]["type"], "audio");
        assert_eq!(audio["content"][1]["mimeType"], "audio/wav");
        assert!(
            audio["content"][1]["data"].as_str().unwrap().starts_with("UklGR"),
            "RIFF"
        );
        assert_eq!(audio["structuredContent"], json!({"milliseconds": 10}));

        let image =
            serde_json::to_value(client.call("test_image_content", json!({})).await.unwrap()).unwrap();
        let kinds: Vec<&str> = image["content"]
            .as_array()
            .unwrap()
            .iter()
            .map(|b| b["type"].as_str().unwrap())
            .collect();
        assert_eq!(kinds, ["text", "image"], "{era:?}: {image}");
        let text: Value = serde_json::from_str(image["content"][0]["text"].as_str().unwrap()).unwrap();
        assert_eq!(text, image["structuredContent"]);
        assert_eq!(image["structuredContent"], json!({"width": 1, "height": 1}));

        let embedded =
            serde_json::to_value(client.call("test_embedded_resource", json!({})).await.unwrap()).unwrap();
        assert_eq!(
            embedded["content"][0]["resource"],
            json!({"uri": "test://static-text", "mimeType": "text/plain",
                   "text": "This is the content of the static text resource."})
        );

        let mixed = serde_json::to_value(
            client
                .call("test_multiple_content_types", json!({}))
                .await
                .unwrap(),
        )
        .unwrap();
        let kinds: Vec<&str> = mixed["content"]
            .as_array()
            .unwrap()
            .iter()
            .map(|b| b["type"].as_str().unwrap())
            .collect();
        assert_eq!(kinds, ["text", "image", "resource", "resource_link"], "{era:?}");
        // A text block of its own: the answer stays exactly as the tool built it.
        assert_eq!(mixed["content"][0]["text"], "Multiple content types test:");
        assert_eq!(mixed["structuredContent"], json!({"test": "data", "value": 123}));
    }
}

fn refusal(core: Member, sibling: Option<Member>) -> String {
    let fixture = Arc::new(Conformance::new());
    let mut server = McpServer::new("t", "0").core(core);
    if let Some(s) = sibling {
        server = server.sibling("s", s);
    }
    let client = conformance::ConformanceClient::direct(fixture);
    match server
        .client(move || BundleClient::with_core(client.clone()))
        .start()
    {
        Ok(_) => panic!("composed"),
        Err(e) => e.to_string(),
    }
}

#[test]
fn declared_uris_join_the_composition_refusals() {
    const A: ResourceForm = ResourceForm::uri("test://a");
    let twice = refusal(
        Member::new(EXPOSE)
            .resource("static_text", A)
            .resource("watched", A),
        None,
    );
    assert!(
        twice.contains("resource URI \"test://a\" is claimed by both member \"static_text\" on the core and member \"watched\" on the core"),
        "{twice}"
    );
    // A member reused as a sibling keeps its declared URIs, so they clash.
    let reused = refusal(
        Member::new(EXPOSE).resource("static_text", A),
        Some(Member::new(EXPOSE).resource("static_text", A)),
    );
    assert!(reused.contains("on sibling \"s\""), "{reused}");
    let on_cell = refusal(
        Member::new(EXPOSE).resource("watched", ResourceForm::template("test://w/{id}")),
        None,
    );
    assert!(on_cell.contains("only a collection's items"), "{on_cell}");
    let plain_on_collection = refusal(Member::new(EXPOSE).resource("template", A), None);
    assert!(
        plain_on_collection.contains("is a collection"),
        "{plain_on_collection}"
    );
    let inside_template = refusal(
        Member::new(EXPOSE)
            .resource("template", ResourceForm::template("test://t/{id}"))
            .resource("watched", ResourceForm::uri("test://t/x")),
        None,
    );
    assert!(
        inside_template.contains("is also an item of"),
        "{inside_template}"
    );
    let unexposed = refusal(Member::new(EXPOSE).resource("nothing", A), None);
    assert!(unexposed.contains("does not expose as a resource"), "{unexposed}");
    let twice = refusal(
        Member::new(EXPOSE)
            .prompt(conformance::TestSimplePromptPrompt)
            .prompt(conformance::TestSimplePromptPrompt),
        None,
    );
    assert!(
        twice.contains("prompt name \"test_simple_prompt\" is produced by both prompt test_simple_prompt on the core and prompt test_simple_prompt on the core"),
        "{twice}"
    );
}

/// A legacy client that records the progress and log notifications it hears.
#[derive(Clone, Default)]
struct Listener(Arc<std::sync::Mutex<Vec<String>>>);

#[allow(deprecated)]
impl rmcp::ClientHandler for Listener {
    fn get_info(&self) -> rmcp::model::ClientConfig {
        rmcp::model::ClientConfig::new(
            rmcp::model::ClientCapabilities::default(),
            rmcp::model::Implementation::new("surface-tests", "0.0.0"),
        )
    }

    async fn on_progress(
        &self,
        p: rmcp::model::ProgressNotificationParam,
        _: rmcp::service::NotificationContext<rmcp::RoleClient>,
    ) {
        let token = serde_json::to_value(&p.progress_token).unwrap();
        self.0
            .lock()
            .unwrap()
            .push(format!("progress {token} {}/{:?}", p.progress, p.total));
    }

    async fn on_logging_message(
        &self,
        m: rmcp::model::LoggingMessageNotificationParam,
        _: rmcp::service::NotificationContext<rmcp::RoleClient>,
    ) {
        self.0.lock().unwrap().push(format!("{:?} {}", m.level, m.data));
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[allow(deprecated)]
async fn a_tool_context_reports_progress_and_logs_to_its_session_only() {
    use rmcp::ServiceExt;
    use rmcp::model::{
        CallToolRequestParams, LoggingLevel, NumberOrString, ProgressToken, RequestMetaObject,
    };
    let token_of = |call: usize| format!("progress {call} ");
    let served = conformance::start(Arc::new(Conformance::new())).expect("composes");
    let open = |listener: Listener| {
        let served = served.clone();
        async move {
            let (server_io, client_io) = tokio::io::duplex(1 << 20);
            tokio::spawn(async move {
                let (r, w) = tokio::io::split(server_io);
                if let Ok(connection) = served.serve(r, w).await {
                    let _ = connection.waiting().await;
                }
            });
            listener.serve(client_io).await.expect("connects")
        }
    };
    let (heard, other) = (Listener::default(), Listener::default());
    let client = open(heard.clone()).await;
    let bystander = open(other.clone()).await;

    // rmcp's client gives every request a progress token of its own (0, 1, …), replacing ours.
    let mut meta = RequestMetaObject::default();
    meta.set_progress_token(ProgressToken(NumberOrString::String("p-1".into())));
    let mut params = CallToolRequestParams::new("test_tool_with_progress");
    params.meta = Some(meta);
    client.call_tool(params).await.unwrap();

    // `info` is heard by default; after setLevel(warning) it is filtered out.
    client
        .call_tool(CallToolRequestParams::new("test_tool_with_logging"))
        .await
        .unwrap();
    client
        .set_level(rmcp::model::SetLevelRequestParams::new(LoggingLevel::Warning))
        .await
        .unwrap();
    client
        .call_tool(CallToolRequestParams::new("test_tool_with_logging"))
        .await
        .unwrap();
    tokio::time::sleep(std::time::Duration::from_millis(200)).await;
    let heard = heard.0.lock().unwrap().clone();
    let progress: Vec<&String> = heard.iter().filter(|h| h.starts_with(&token_of(0))).collect();
    assert_eq!(
        progress,
        [
            "progress 0 0/Some(100.0)",
            "progress 0 50/Some(100.0)",
            "progress 0 100/Some(100.0)"
        ]
    );
    // The client hands notifications to its handler as they come, not in the order of the
    // calls that caused them: read the log lines apart from the progress ones.
    let logs: Vec<&String> = heard.iter().filter(|h| !h.starts_with("progress")).collect();
    assert_eq!(
        logs,
        [
            "Info \"Tool execution started\"",
            "Info \"Tool processing data\"",
            "Info \"Tool execution completed\"",
        ]
    );
    assert!(
        other.0.lock().unwrap().is_empty(),
        "another session hears nothing"
    );
    drop(bystander);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn prompts_list_render_and_complete_in_both_eras() {
    use rmcp::model::{ArgumentInfo, CompleteRequestParams, GetPromptRequestParams, Reference};
    let fixture = Arc::new(Conformance::new());
    let served = conformance::start(fixture.clone()).expect("composes");
    for era in ERAS {
        let client = connect(&served, era).await;
        let prompts = client.service.list_all_prompts().await.unwrap();
        let with_args = prompts
            .iter()
            .find(|p| p.name == "test_prompt_with_arguments")
            .unwrap();
        let args = serde_json::to_value(&with_args.arguments).unwrap();
        assert_eq!(
            args,
            json!([{"name": "arg1", "description": "First test argument.", "required": true},
                   {"name": "arg2", "description": "Second test argument.", "required": true}])
        );
        let mut get = GetPromptRequestParams::new("test_prompt_with_arguments");
        get.arguments = Some(serde_json::from_value(json!({"arg1": "a", "arg2": "b"})).unwrap());
        let rendered = serde_json::to_value(client.service.get_prompt(get).await.unwrap()).unwrap();
        assert_eq!(
            rendered["messages"],
            json!([{"role": "user", "content": {"type": "text", "text": "Prompt with arguments: arg1='a', arg2='b'"}}]),
            "{era:?}"
        );
        let missing = client
            .service
            .get_prompt(GetPromptRequestParams::new("test_prompt_with_arguments"))
            .await
            .unwrap_err();
        assert!(
            rpc_error(missing).message.contains("arg1"),
            "{era:?}: a missing argument is named"
        );
        let image = serde_json::to_value(
            client
                .service
                .get_prompt(GetPromptRequestParams::new("test_prompt_with_image"))
                .await
                .unwrap(),
        )
        .unwrap();
        assert_eq!(image["messages"][0]["content"]["type"], "image");

        // `{id}` completes from the collection's live keys, prefix-filtered.
        for id in ["124", "200"] {
            let item = conformance::TemplateData {
                id: id.into(),
                template_test: true,
                data: format!("Data for ID: {id}"),
            };
            fixture.template.upsert(id.to_owned(), item);
        }
        let complete = CompleteRequestParams::new(
            Reference::for_resource("test://template/{id}/data"),
            ArgumentInfo::new("id", "12"),
        );
        let info = client.service.complete(complete).await.unwrap().completion;
        assert_eq!(info.values, ["123", "124"], "{era:?}");
        assert_eq!((info.total, info.has_more), (Some(2), Some(false)));
    }
}

/// Names the bundle's siblings (a prompt over the whole bundle, at its root).
#[surface::prompt]
pub async fn roster_summary(
    bundle: &BundleClient,
) -> Result<surface::prompt::PromptAnswer, surface::Failure> {
    let keys: Vec<&str> = bundle.sibling_keys().collect();
    Ok(surface::prompt::PromptAnswer::new().user_text(format!("siblings: {}", keys.join(", "))))
}

/// A root prompt named like the core's `test_simple_prompt`.
mod clash {
    use surface::mcp::BundleClient;
    /// Clashes.
    #[surface::prompt]
    pub async fn test_simple_prompt(
        _bundle: &BundleClient,
    ) -> Result<surface::prompt::PromptAnswer, surface::Failure> {
        Ok(surface::prompt::PromptAnswer::new())
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn root_prompts_are_bare_named_beside_prefixed_sibling_prompts() {
    use rmcp::model::GetPromptRequestParams;
    let fixture = Arc::new(Conformance::new());
    let client = conformance::ConformanceClient::direct(fixture);
    let member = || Member::new(EXPOSE).prompt(conformance::TestSimplePromptPrompt);
    let served = McpServer::new("t", "0")
        .core(member())
        .sibling("s", member())
        .root_prompt(RosterSummaryPrompt)
        .client(move || BundleClient::with_core(client.clone()).sibling("s", client.clone()))
        .start()
        .expect("composes");
    for era in ERAS {
        let c = connect(&served, era).await;
        let mut names: Vec<String> = c
            .service
            .list_all_prompts()
            .await
            .unwrap()
            .into_iter()
            .map(|p| p.name)
            .collect();
        names.sort();
        assert_eq!(
            names,
            ["roster_summary", "s_test_simple_prompt", "test_simple_prompt"],
            "{era:?}"
        );
        let got = c
            .service
            .get_prompt(GetPromptRequestParams::new("roster_summary"))
            .await
            .unwrap();
        let said = serde_json::to_value(&got.messages[0].content).unwrap();
        assert_eq!(said["text"], "siblings: s", "{era:?}");
    }

    // One collision check: a root prompt named like the core's is refused at composition.
    let fixture = Arc::new(Conformance::new());
    let client = conformance::ConformanceClient::direct(fixture);
    let refused = match McpServer::new("t", "0")
        .core(member())
        .root_prompt(clash::TestSimplePromptPrompt)
        .client(move || BundleClient::with_core(client.clone()))
        .start()
    {
        Ok(_) => panic!("a clashing root prompt composed"),
        Err(e) => e.to_string(),
    };
    assert!(
        refused.contains(
            "prompt name \"test_simple_prompt\" is produced by both prompt test_simple_prompt on the core and prompt test_simple_prompt at the bundle root"
        ),
        "{refused}"
    );
}

/// Arguments of `counted`: one that no host can give (MCP prompt arguments are strings).
#[derive(Clone, Debug, serde::Deserialize, schemars::JsonSchema)]
pub struct CountArgs {
    /// How many.
    pub count: u32,
    /// A name (fine: a string).
    pub name: Option<String>,
}

/// A prompt taking a number.
#[surface::prompt]
pub async fn counted(
    args: CountArgs,
    _client: &conformance::ConformanceClient,
) -> Result<surface::prompt::PromptAnswer, surface::Failure> {
    Ok(surface::prompt::PromptAnswer::new().user_text(format!("{} {:?}", args.count, args.name)))
}

#[test]
fn a_prompt_argument_that_is_not_a_string_is_a_composition_refusal() {
    let refused = refusal(Member::new(EXPOSE).prompt(CountedPrompt), None);
    assert!(
        refused.contains("prompt counted on the core takes argument `count`, which is not a string"),
        "{refused}"
    );
    assert!(!refused.contains("`name`"), "{refused}");
}
