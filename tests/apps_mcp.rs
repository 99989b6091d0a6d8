//! MCP Apps views over the real ops binary's stdio, in both eras: the declared convention
//! (tool `_meta.ui.resourceUri` and the flat key, the view in `resources/list` and
//! `resources/read`, the `io.modelcontextprotocol/ui` extension), the embedded convention only
//! for clients that say they render views, text first always, and `--no-ui` removing it all.
//! The composition refusals run in process.

mod common;

use common::stdio::Wire;
use serde_json::{Value, json};

const VIEW: &str = "ui://ops/processes";
const MIME: &str = "text/html;profile=mcp-app";

/// Client capabilities of a host that renders views.
fn renders() -> Value {
    json!({"extensions": {"io.modelcontextprotocol/ui": {"mimeTypes": [MIME]}}})
}

fn modern_meta(capabilities: Value) -> Value {
    json!({
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": capabilities,
        "io.modelcontextprotocol/clientInfo": {"name": "apps-test", "version": "0"}
    })
}

/// One session on ops (with `args`): legacy opens with `initialize` carrying `capabilities`;
/// modern opens with `server/discover` and sends them on every request.
struct Session {
    wire: Wire,
    modern: bool,
    capabilities: Value,
    next: u64,
    /// `initialize`'s or `server/discover`'s result.
    opened: Value,
}

impl Session {
    async fn open(args: &[&str], modern: bool, capabilities: Value) -> Session {
        let mut wire = Wire::start_with(args, &[], false);
        let opened = if modern {
            wire.request(
                1,
                "server/discover",
                json!({"_meta": modern_meta(capabilities.clone())}),
            )
            .await
        } else {
            let init = wire
                .request(
                    1,
                    "initialize",
                    json!({"protocolVersion": "2025-06-18", "capabilities": capabilities, "clientInfo": {"name": "t", "version": "0"}}),
                )
                .await;
            wire.send(json!({"jsonrpc": "2.0", "method": "notifications/initialized"}))
                .await;
            init
        };
        let opened = opened["result"].clone();
        assert!(opened.is_object(), "the session opened: {opened}");
        Session {
            wire,
            modern,
            capabilities,
            next: 2,
            opened,
        }
    }

    /// A request's whole answer (`result` or `error`).
    async fn ask(&mut self, method: &str, mut params: Value) -> Value {
        if self.modern {
            params["_meta"] = modern_meta(self.capabilities.clone());
        }
        self.next += 1;
        self.wire.request(self.next, method, params).await
    }

    async fn result(&mut self, method: &str, params: Value) -> Value {
        let answer = self.ask(method, params).await;
        assert!(answer.get("result").is_some(), "{method} answered {answer}");
        answer["result"].clone()
    }

    /// No UI extension in the capabilities, no UI meta on any tool, no view listed.
    async fn advertises_no_ui(&mut self) {
        let capabilities = capabilities_of(&self.opened);
        assert!(
            capabilities
                .get("extensions")
                .is_none_or(|e| e.get("io.modelcontextprotocol/ui").is_none()),
            "modern={}: {capabilities}",
            self.modern
        );
        let tools = self.result("tools/list", json!({})).await;
        for tool in tools["tools"].as_array().unwrap() {
            assert!(tool.get("_meta").is_none(), "{tool}");
        }
        let listed = self.result("resources/list", json!({})).await;
        assert!(!listed.to_string().contains("ui://"), "{listed}");
    }

    async fn tool(&mut self, name: &str) -> Value {
        let tools = self.result("tools/list", json!({})).await;
        tools["tools"]
            .as_array()
            .unwrap()
            .iter()
            .find(|t| t["name"] == name)
            .unwrap_or_else(|| panic!("no tool {name} in {tools}"))
            .clone()
    }
}

/// Each era, each with and without a client that renders views.
fn sessions() -> impl Iterator<Item = (bool, Value)> {
    [false, true]
        .into_iter()
        .flat_map(|modern| [(modern, renders()), (modern, json!({}))])
}

fn capabilities_of(opened: &Value) -> &Value {
    // initialize answers `capabilities`; server/discover the same under `capabilities` too.
    &opened["capabilities"]
}

/// The Apps spec: a server SHOULD check the client's capability before it advertises UI. A
/// client that does not declare the extension sees no extension, no tool UI meta and no view in
/// `resources/list`; the tools answer it text first all the same.
#[tokio::test]
async fn nothing_of_the_ui_is_advertised_to_a_client_that_does_not_declare_it() {
    for modern in [false, true] {
        let mut s = Session::open(&[], modern, json!({})).await;
        s.advertises_no_ui().await;
        let answer = s
            .result("tools/call", json!({"name": "processes_view", "arguments": {}}))
            .await;
        assert_eq!(answer["content"].as_array().unwrap().len(), 1, "{answer}");
        assert_eq!(answer["content"][0]["type"], "text");
    }
}

/// Clients that declare the extension (with or without the page's MIME type).
fn declaring() -> impl Iterator<Item = (bool, Value)> {
    let bare = json!({"extensions": {"io.modelcontextprotocol/ui": {}}});
    [false, true]
        .into_iter()
        .flat_map(move |modern| [(modern, renders()), (modern, bare.clone())])
}

#[tokio::test]
async fn the_declared_convention_in_both_eras() {
    for (modern, caps) in declaring() {
        let mut s = Session::open(&[], modern, caps).await;
        assert_eq!(
            capabilities_of(&s.opened)["extensions"]["io.modelcontextprotocol/ui"],
            json!({}),
            "modern={modern}: {}",
            s.opened
        );
        let tool = s.tool("processes_view").await;
        assert_eq!(
            tool["_meta"],
            json!({"ui": {"resourceUri": VIEW}, "ui/resourceUri": VIEW}),
            "the nested key, the flat one, and never csp or permissions on a tool"
        );
        assert_eq!(tool["annotations"]["readOnlyHint"], true);
        let count = s.tool("count").await;
        assert!(
            count.get("_meta").is_none(),
            "an unbound tool has no UI meta: {count}"
        );

        let listed = s.result("resources/list", json!({})).await;
        let views: Vec<&Value> = listed["resources"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|r| r["uri"] == VIEW)
            .collect();
        assert_eq!(views.len(), 1, "{listed}");
        assert_eq!(views[0]["mimeType"], MIME);
        assert_eq!(views[0]["name"], "processes");

        let read = s.result("resources/read", json!({"uri": VIEW})).await;
        let contents = read["contents"].as_array().unwrap();
        assert_eq!(contents.len(), 1, "exactly one content item: {read}");
        assert_eq!(contents[0]["uri"], VIEW);
        assert_eq!(contents[0]["mimeType"], MIME);
        let html = contents[0]["text"].as_str().unwrap();
        assert_eq!(html, include_str!("../examples/views/processes.html"));
        assert_eq!(
            contents[0]["_meta"]["ui"],
            json!({"csp": {}, "prefersBorder": true}),
            "the page's meta travels with the page"
        );
        // Self-contained: nothing it loads comes from elsewhere.
        for outside in ["src=\"http", "href=\"http", "@import", "url(http"] {
            assert!(!html.contains(outside), "the page fetches {outside}");
        }
    }
}

#[tokio::test]
async fn the_page_is_embedded_only_for_clients_that_render_views() {
    for (modern, caps) in sessions() {
        let renders_views = caps != json!({});
        let mut s = Session::open(&[], modern, caps).await;
        let answer = s
            .result("tools/call", json!({"name": "processes_view", "arguments": {}}))
            .await;
        let content = answer["content"].as_array().unwrap();
        // Text first and complete: the same JSON as the structured content.
        assert_eq!(content[0]["type"], "text", "{answer}");
        let text: Value = serde_json::from_str(content[0]["text"].as_str().unwrap()).unwrap();
        assert_eq!(text, answer["structuredContent"]);
        let pids: Vec<&Value> = answer["structuredContent"]["processes"]
            .as_array()
            .unwrap()
            .iter()
            .map(|p| &p["pid"])
            .collect();
        assert_eq!(pids, [&json!(1), &json!(2)]);
        if renders_views {
            assert_eq!(content.len(), 2, "modern={modern}: {answer}");
            assert_eq!(content[1]["type"], "resource");
            assert_eq!(content[1]["resource"]["uri"], VIEW);
            assert_eq!(content[1]["resource"]["mimeType"], MIME);
            assert!(
                content[1]["resource"]["text"]
                    .as_str()
                    .unwrap()
                    .contains("ui/initialize")
            );
        } else {
            assert_eq!(
                content.len(),
                1,
                "modern={modern}: no page for a client without UI: {answer}"
            );
        }
        // Other tools never embed it.
        let count = s
            .result("tools/call", json!({"name": "count", "arguments": {}}))
            .await;
        assert_eq!(count["content"].as_array().unwrap().len(), 1, "{count}");
    }
}

#[tokio::test]
async fn a_client_naming_the_extension_without_the_mime_type_gets_no_page() {
    let caps = json!({"extensions": {"io.modelcontextprotocol/ui": {"mimeTypes": ["text/html"]}}});
    for modern in [false, true] {
        let mut s = Session::open(&[], modern, caps.clone()).await;
        let answer = s
            .result("tools/call", json!({"name": "processes_view", "arguments": {}}))
            .await;
        assert_eq!(answer["content"].as_array().unwrap().len(), 1, "{answer}");
    }
}

#[tokio::test]
async fn no_ui_removes_views_the_extension_and_all_ui_meta() {
    for (modern, caps) in sessions() {
        let mut s = Session::open(&["--no-ui"], modern, caps).await;
        s.advertises_no_ui().await;
        let read = s.ask("resources/read", json!({"uri": VIEW})).await;
        assert!(read.get("error").is_some(), "{read}");
        // The tool still answers the whole table, as text and structured content.
        let answer = s
            .result("tools/call", json!({"name": "processes_view", "arguments": {}}))
            .await;
        let content = answer["content"].as_array().unwrap();
        assert_eq!(content.len(), 1, "{answer}");
        let text: Value = serde_json::from_str(content[0]["text"].as_str().unwrap()).unwrap();
        assert_eq!(text["processes"].as_array().unwrap().len(), 2);
        assert_eq!(text, answer["structuredContent"]);
    }
}

#[allow(dead_code)]
#[path = "../examples/ops.rs"]
mod ops;

use std::sync::Arc;
use surface::mcp::{McpServer, Member};
use surface::resource::ResourceForm;
use surface::view::View;

fn server() -> McpServer {
    let live = Arc::new(ops::Ops::new());
    McpServer::new("ops", "0")
        .client(move || surface::mcp::BundleClient::with_core(ops::OpsClient::direct(live.clone())))
}

#[test]
fn a_tool_bound_to_an_undeclared_view_is_refused_at_start() {
    let Err(refused) = server().core(ops::core()).start() else {
        panic!("a bound view that is not declared composes");
    };
    assert_eq!(
        refused.problems,
        [format!(
            "tool \"processes_view\" (bespoke processes_view on the core) is bound to the view {VIEW}, which this server does not declare — declare it with `.view(…)` (or in `bundle!`'s `views: [..]`)"
        )]
    );
    // With the UI off nothing is served from a view, so nothing is refused.
    assert!(server().core(ops::core()).ui(false).start().is_ok());
}

#[test]
fn a_view_twice_or_at_a_members_uri_is_refused() {
    let Err(refused) = server()
        .core(ops::core())
        .view(ops::PROCESSES)
        .view(ops::PROCESSES)
        .start()
    else {
        panic!("a view declared twice composes");
    };
    assert_eq!(
        refused.problems,
        [format!("the view {VIEW} is declared twice — keep one")]
    );
    const LOAD_AT_THE_VIEW: ResourceForm = ResourceForm::uri(VIEW);
    let Err(refused) = server()
        .core(Member::new(ops::EXPOSE).resource("load", LOAD_AT_THE_VIEW))
        .view(ops::PROCESSES)
        .start()
    else {
        panic!("a view at a member's URI composes");
    };
    assert_eq!(
        refused.problems,
        [format!(
            "the view {VIEW} is at a URI a member's resource also claims — move one"
        )]
    );
}

#[tokio::test]
async fn the_flat_key_can_be_switched_off() {
    const OTHER: View = View::new("ui://ops/other", "<!doctype html><p>other</p>");
    let served = server()
        .core(ops::core())
        .view(ops::PROCESSES)
        .view(OTHER)
        .flat_ui_key(false)
        .start()
        .unwrap();
    for era in common::ERAS {
        let client = common::connect_with(&served, era, RendersViews).await;
        let tools = client.list_all_tools().await.unwrap();
        let tool = tools.iter().find(|t| t.name == "processes_view").unwrap();
        assert_eq!(
            serde_json::to_value(&tool.meta).unwrap(),
            json!({"ui": {"resourceUri": VIEW}}),
            "{era:?}"
        );
        // A declared view no tool is bound to is served all the same (a page tools call into).
        let listed = client.list_all_resources().await.unwrap();
        assert!(listed.iter().any(|r| r.uri == "ui://ops/other"), "{era:?}");
        assert!(
            listed
                .iter()
                .all(|r| r.uri != "ui://ops/other" || r.meta.is_none()),
            "no meta when none is set"
        );
    }
}

/// An rmcp client that declares it renders views (the Apps extension with the page's type).
#[derive(Clone)]
struct RendersViews;

impl rmcp::ClientHandler for RendersViews {
    fn get_info(&self) -> rmcp::model::ClientConfig {
        let capabilities = serde_json::from_value(renders()).expect("client capabilities");
        rmcp::model::ClientConfig::new(capabilities, rmcp::model::Implementation::new("apps-test", "0"))
            .with_protocol_version(rmcp::model::ProtocolVersion::LATEST_WITH_INITIALIZE)
    }
}
