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
        assert_eq!(audio["content"][0]["type"], "audio");
        assert_eq!(audio["content"][0]["mimeType"], "audio/wav");
        assert!(
            audio["content"][0]["data"].as_str().unwrap().starts_with("UklGR"),
            "RIFF"
        );
        assert_eq!(audio["structuredContent"], json!({"milliseconds": 10}));

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
}
