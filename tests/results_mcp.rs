//! Results, failures and schemas over MCP on a small surface made for the edge cases:
//! images, wrapped scalar and union inputs, errors with empty messages, unserializable details.

mod common;

use common::{ERAS, connect, empty, text};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize, Serializer};
use serde_json::{Value, json};
use std::sync::Arc;
use surface::mcp::{BundleClient, McpServer, Member};
use surface::{Expose, OkImage, ToolFailure, expose, ok_image, surface, tool};

/// A surface of oddities.
#[surface]
pub struct Odd {
    /// A number.
    #[cell]
    pub n: u32,
}

/// A union input: one of two shapes.
#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]
#[serde(untagged)]
pub enum Shape {
    /// A circle.
    Circle {
        /// Its radius.
        r: f64,
    },
    /// A square.
    Square {
        /// Its side.
        side: f64,
    },
}

/// An input with defaults and an optional field.
#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]
pub struct Tune {
    /// How loud.
    #[serde(default = "eleven")]
    pub volume: u8,
    /// A label, if any.
    pub label: Option<String>,
}

fn eleven() -> u8 {
    11
}

/// An error whose message is empty.
#[derive(Debug)]
pub struct Mute;
impl std::fmt::Display for Mute {
    fn fmt(&self, _: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        Ok(())
    }
}
impl std::error::Error for Mute {}

/// A detail that refuses to serialize.
pub struct Stubborn;
impl Serialize for Stubborn {
    fn serialize<S: Serializer>(&self, _: S) -> Result<S::Ok, S::Error> {
        Err(serde::ser::Error::custom("stubborn"))
    }
}

#[surface]
impl Odd {
    /// Doubles a bare number.
    #[procedure("num.double")]
    pub async fn double(&self, input: u32) -> Result<u32, std::convert::Infallible> {
        Ok(input * 2)
    }

    /// The area of a shape.
    #[procedure("shape.area")]
    pub async fn area(&self, input: Shape) -> Result<f64, std::convert::Infallible> {
        Ok(match input {
            Shape::Circle { r } => 3.0 * r * r,
            Shape::Square { side } => side * side,
        })
    }

    /// Echoes a tune.
    #[procedure("tune.set")]
    pub async fn tune(&self, input: Tune) -> Result<Tune, std::convert::Infallible> {
        Ok(input)
    }

    /// Fails with an empty message.
    #[procedure("fail.mute")]
    pub async fn mute(&self) -> Result<u8, Mute> {
        Err(Mute)
    }

    /// Fails with a detail that cannot be serialized.
    #[procedure("fail.stubborn")]
    pub async fn stubborn(&self) -> Result<u8, ToolFailure<Stubborn>> {
        Err(ToolFailure::new("no", Stubborn))
    }

    /// Panics (a bug in a tool).
    #[procedure("fail.panic")]
    pub async fn panic(&self, input: u32) -> Result<u8, std::convert::Infallible> {
        let table = [1u8, 2];
        Ok(table[input as usize])
    }
}

/// A one-pixel picture.
#[tool(read_only, render = image)]
pub async fn pixel(client: &OddClient) -> Result<OkImage, surface::Failure> {
    let n = client.n().get().await?;
    Ok(ok_image(
        vec![0x89, b'P', b'N', b'G'],
        "image/png",
        json!({"width": 1, "height": 1, "n": n}),
    ))
}

const EXPOSE: Expose<Odd> = expose!(Odd {
    n: resource,
    "num.double": tool(read_only),
    "shape.area": tool(read_only),
    "tune.set": tool,
    "fail.mute": tool,
    "fail.stubborn": tool,
    "fail.panic": tool,
});

fn serve() -> surface::mcp::ServedMcp {
    let odd = Arc::new(Odd {
        n: surface::Cell::new(7),
    });
    McpServer::new("odd", "0")
        .core(Member::new(EXPOSE).tool(PixelTool))
        .client(move || BundleClient::with_core(OddClient::direct(odd.clone())))
        .start()
        .unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn scalar_and_union_inputs_are_wrapped_under_value_and_unwrapped() {
    let served = serve();
    for era in ERAS {
        let client = connect(&served, era).await;
        let tools = client.service.list_all_tools().await.unwrap();
        let schema = |n: &str| {
            serde_json::to_value(&tools.iter().find(|t| t.name == n).unwrap().input_schema).unwrap()
        };
        assert_eq!(
            schema("num_double"),
            json!({"type": "object", "properties": {"value": {"type": "integer", "minimum": 0}}, "required": ["value"]})
        );
        assert_eq!(schema("shape_area")["required"], json!(["value"]));
        assert!(
            schema("shape_area")["properties"]["value"]["anyOf"].is_array(),
            "{}",
            schema("shape_area")
        );
        assert_eq!(
            client.call_ok("num_double", json!({"value": 21})).await,
            json!({"value": 42})
        );
        assert_eq!(
            client
                .call_ok("shape_area", json!({"value": {"side": 3.0}}))
                .await,
            json!({"value": 9.0})
        );
        let missing = client.call("num_double", empty()).await.unwrap();
        assert_eq!(missing.is_error, Some(true));
        assert!(text(&missing).contains("`value`"), "{}", text(&missing));
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn defaults_are_advertised_and_options_are_not_required() {
    let served = serve();
    let client = connect(&served, common::Era::Legacy).await;
    let tools = client.service.list_all_tools().await.unwrap();
    let tune =
        serde_json::to_value(&tools.iter().find(|t| t.name == "tune_set").unwrap().input_schema).unwrap();
    assert_eq!(tune["properties"]["volume"]["default"], 11);
    assert_eq!(tune["properties"]["label"]["type"], "string");
    assert!(
        tune.get("required")
            .is_none_or(|r| r.as_array().unwrap().is_empty()),
        "{tune}"
    );
    assert!(tune.get("additionalProperties").is_none());
    assert_eq!(
        client.call_ok("tune_set", empty()).await,
        json!({"volume": 11, "label": null})
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn failures_without_a_message_or_with_a_bad_detail_still_answer() {
    let served = serve();
    let client = connect(&served, common::Era::Modern).await;
    let mute = client.call("fail_mute", empty()).await.unwrap();
    assert_eq!(mute.is_error, Some(true));
    assert_eq!(text(&mute), "surface-mcp: Mute");
    assert!(mute.structured_content.is_none());
    let stubborn = client.call("fail_stubborn", empty()).await.unwrap();
    assert_eq!(stubborn.is_error, Some(true));
    assert!(
        text(&stubborn).starts_with("surface-mcp: no (its detail could not be serialized: stubborn"),
        "{}",
        text(&stubborn)
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_image_answer_carries_the_bytes_once_and_the_facts_as_structured_content() {
    let served = serve();
    let client = connect(&served, common::Era::Legacy).await;
    let r = client.call("pixel", empty()).await.unwrap();
    assert_eq!(r.is_error, Some(false));
    // The facts also as serialized JSON in a first text block (the spec's SHOULD), then the
    // bytes once.
    assert_eq!(r.content.len(), 2);
    let facts: Value = serde_json::from_str(&r.content[0].as_text().unwrap().text).unwrap();
    assert_eq!(Some(facts), r.structured_content);
    let block = serde_json::to_value(&r.content[1]).unwrap();
    assert_eq!(block["type"], "image");
    assert_eq!(block["mimeType"], "image/png");
    assert_eq!(block["data"], "iVBORw==");
    assert_eq!(
        r.structured_content,
        Some(json!({"width": 1, "height": 1, "n": 7}))
    );
}

/// A tool that panics is answered (JSON-RPC's internal error, saying so) on every path, and the
/// connection goes on: its client does not wait forever, and on stdio its place in the
/// in-flight bound comes back (more panics than the bound still leave calls answered).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_tool_that_panics_is_answered_and_the_connection_goes_on() {
    let served = serve();
    for era in ERAS {
        let client = connect(&served, era).await;
        for _ in 0..3 {
            let answer = tokio::time::timeout(
                std::time::Duration::from_secs(10),
                client.call("fail_panic", json!({"value": 5})),
            )
            .await
            .unwrap_or_else(|_| panic!("{era:?}: a panicking tool left its call unanswered"));
            let Err(rmcp::ServiceError::McpError(error)) = answer else {
                panic!("{era:?}: a panicking tool must be answered with an error");
            };
            assert_eq!(error.code, rmcp::model::ErrorCode::INTERNAL_ERROR, "{era:?}");
            assert!(
                error.message.contains("the call panicked: index out of bounds"),
                "{era:?}: {}",
                error.message
            );
        }
        assert_eq!(
            client.call_ok("fail_panic", json!({"value": 1})).await,
            json!({"value": 2})
        );
    }
    // Over Streamable HTTP, in both modes.
    let server = served
        .serve_http(surface::mcp::HttpOptions::loopback(0))
        .await
        .unwrap();
    let addr = server.local_addr();
    let session = common::raw_http::legacy_session(addr).await;
    let call = json!({"jsonrpc": "2.0", "id": 7, "method": "tools/call",
        "params": {"name": "fail_panic", "arguments": {"value": 9}}});
    let legacy = common::raw_http::legacy_post(addr, &session, &call)
        .await
        .message();
    let modern = common::raw_http::modern(
        addr,
        "tools/call",
        json!({"name": "fail_panic", "arguments": {"value": 9}, "_meta": {
            "io.modelcontextprotocol/protocolVersion": "2026-07-28",
            "io.modelcontextprotocol/clientCapabilities": {},
            "io.modelcontextprotocol/clientInfo": {"name": "results", "version": "0"}}}),
    )
    .await;
    for answer in [legacy, modern] {
        assert_eq!(answer["error"]["code"], -32603, "{answer}");
        assert!(
            answer["error"]["message"]
                .as_str()
                .is_some_and(|m| m.contains("the call panicked")),
            "{answer}"
        );
    }
}

/// Over the wire face too: a procedure that panics answers its dialling caller with a failure
/// saying so, at once, and the connection goes on.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_procedure_that_panics_answers_its_dialling_caller() {
    let dir = common::daemon::socket_dir("results-panic");
    let path = dir.join("odd.sock");
    let odd = Arc::new(Odd {
        n: surface::Cell::new(7),
    });
    let _server = surface::wire::serve_unix_socket(&path, odd, EXPOSE).unwrap();
    let connection = surface::wire::dial_unix_socket::<Odd>(&path).await.unwrap();
    let failure = tokio::time::timeout(
        std::time::Duration::from_secs(10),
        connection.client.fail().panic(5),
    )
    .await
    .expect("answered at once, not at the call timeout")
    .unwrap_err();
    assert_eq!(failure.kind, surface::FailureKind::Error, "{failure:?}");
    assert!(
        failure.message.contains("the call panicked: index out of bounds"),
        "{failure:?}"
    );
    assert_eq!(connection.client.fail().panic(0).await.unwrap(), 1);
    let _ = std::fs::remove_dir_all(dir);
}
