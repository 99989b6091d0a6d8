//! Schema profiles over MCP: the advertised schemas a profile rewrites, the arguments a strict
//! host sends back, and the refusals that name the tool and the field.

#[allow(dead_code)]
#[path = "../examples/ops.rs"]
mod ops;

use serde_json::json;
use std::collections::HashMap;
use std::sync::Arc;
use surface::mcp::{BundleClient, McpServer, Member};
use surface::schema::profile::SchemaProfile;
use surface::testing::{Era, TestClient};
use surface::{Expose, Failure, expose, surface};

fn ops_with(profile: SchemaProfile) -> McpServer {
    ops::mcp_server(Arc::new(ops::Ops::new())).schema_profile(profile)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn openai_strict_advertises_closed_objects_and_reads_null_as_absent() {
    let served = ops_with(SchemaProfile::OpenAiStrict).start().unwrap();
    for era in Era::ALL {
        let agent = TestClient::connect(&served, era).await;
        let tools = agent.list_tools().await;
        let count = tools.iter().find(|t| t.name == "count").unwrap();
        assert_eq!(
            count.input_schema,
            json!({
                "description": "Input of `count`.",
                "type": "object",
                "properties": {
                    "state": {
                        "description": "Only processes in this state (all when absent).",
                        "type": ["string", "null"]
                    },
                    "running": {
                        "description": "Only running processes (true), only the others (false), or all (absent).",
                        "type": ["boolean", "null"]
                    }
                },
                "required": ["running", "state"],
                "additionalProperties": false
            })
        );
        for tool in &tools {
            assert_eq!(tool.input_schema["additionalProperties"], false, "{}", tool.name);
        }
        // What a strict host sends for a field it leaves out.
        let all = agent.call("count", json!({"state": null})).await.value();
        assert_eq!(all, json!({"value": 2}), "{era:?}");
        let none = agent.call("count", json!({"state": "zombie"})).await.value();
        assert_eq!(none, json!({"value": 0}));
        assert_eq!(agent.check_profile(SchemaProfile::OpenAiStrict).await, Ok(()));
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_portable_profile_is_the_default_and_changes_nothing() {
    let default = TestClient::connect(&ops_with(SchemaProfile::Portable).start().unwrap(), Era::Modern).await;
    let plain = TestClient::connect(
        &ops::mcp_server(Arc::new(ops::Ops::new())).start().unwrap(),
        Era::Modern,
    )
    .await;
    assert_eq!(default.list_tools().await, plain.list_tools().await);
    let count = plain
        .list_tools()
        .await
        .into_iter()
        .find(|t| t.name == "count")
        .unwrap();
    assert_eq!(count.input_schema["properties"]["state"]["type"], "string");
    assert!(count.input_schema.get("additionalProperties").is_none());
    // The ops example can be served to OpenAI and Gemini hosts as it is.
    for profile in SchemaProfile::ALL {
        assert_eq!(plain.check_profile(profile).await, Ok(()), "{profile}");
    }
}

/// Labels on things.
#[surface]
pub struct Tags {
    /// Every tag.
    #[cell]
    pub all: Vec<String>,
}

/// Input of `tags.set`.
#[derive(serde::Serialize, serde::Deserialize, schemars::JsonSchema)]
pub struct SetTags {
    /// The thing.
    pub id: u32,
    /// Free-form labels.
    pub labels: HashMap<String, String>,
    /// Anything else.
    pub extra: Option<serde_json::Value>,
}

#[surface]
impl Tags {
    /// Replaces one thing's labels.
    #[procedure("tags.set")]
    async fn set(&self, input: SetTags) -> Result<u32, Failure> {
        Ok(input.id + input.labels.len() as u32)
    }
}

const TAGS: Expose<Tags> = expose!(Tags { all: resource, "tags.set": tool(mutates) });

fn tags_server() -> McpServer {
    let tags = Arc::new(Tags {
        all: surface::Cell::new(Vec::new()),
    });
    McpServer::new("tags", "0")
        .core(Member::new(TAGS))
        .client(move || BundleClient::with_core(TagsClient::direct(tags.clone())))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_inexpressible_input_is_refused_naming_the_tool_and_the_field() {
    let refused = tags_server()
        .schema_profile(SchemaProfile::OpenAiStrict)
        .start()
        .err()
        .expect("strict refuses a map input");
    assert_eq!(
        refused.problems,
        [
            "tool \"tags_set\" cannot be advertised under the openai-strict schema profile: \
          field `extra` is any JSON value, which strict mode cannot express (every schema needs a type); \
          field `labels` has free keys (a map), which strict mode cannot express (every object needs `additionalProperties: false`) \
          — change the input type or serve another profile"
        ]
    );
    // A portable server serves it, and the test helper says what a stricter host would refuse.
    let served = tags_server().start().unwrap();
    let agent = TestClient::connect(&served, Era::Legacy).await;
    let gemini = agent.check_profile(SchemaProfile::Gemini).await.unwrap_err();
    assert_eq!(gemini.len(), 1);
    assert_eq!(gemini[0].tool, "tags_set");
    let fields: Vec<&str> = gemini[0].fields.iter().map(|f| f.field.as_str()).collect();
    assert_eq!(fields, ["extra", "labels"]);
    assert_eq!(
        agent
            .call("tags_set", json!({"id": 1, "labels": {"a": "b"}}))
            .await
            .value(),
        json!({"value": 2})
    );
}
