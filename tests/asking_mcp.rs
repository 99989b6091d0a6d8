//! A call's questions for its host (`ctx.elicit`, `ctx.sample`, `ctx.roots`) over MCP, driven
//! by rmcp's client against `examples/conformance.rs`: requests on a legacy session,
//! `input_required` rounds with a sealed `requestState` on 2026-07-28.
#![allow(deprecated)]

mod common;

#[allow(dead_code)]
#[path = "../examples/conformance.rs"]
mod conformance;

#[allow(dead_code)]
#[path = "../examples/release.rs"]
mod release;

use common::{ERAS, Era, rpc_error};
use conformance::Conformance;
use rmcp::model::*;
use rmcp::service::{RequestContext, RunningService};
use rmcp::{ClientHandler, ErrorData, RoleClient};
use serde_json::{Value, json};
use std::sync::{Arc, Mutex};
use surface::mcp::ServedMcp;

/// A host that can answer (or not): it fills forms in from their field names, has its model
/// say "Paris", owns one root, and records every question it was asked.
#[derive(Clone, Default)]
struct Host {
    capable: bool,
    /// Declares URL-mode elicitation too.
    url_mode: bool,
    decline: bool,
    asked: Arc<Mutex<Vec<String>>>,
    progress: Arc<Mutex<Vec<String>>>,
}

impl ClientHandler for Host {
    fn get_info(&self) -> ClientConfig {
        let capabilities = if self.url_mode {
            let mut caps = ClientCapabilities::builder().enable_elicitation().build();
            caps.elicitation = caps
                .elicitation
                .map(|e| e.with_url(UrlElicitationCapability::new()));
            caps
        } else if self.capable {
            ClientCapabilities::builder()
                .enable_elicitation()
                .enable_sampling()
                .enable_roots()
                .build()
        } else {
            ClientCapabilities::default()
        };
        ClientConfig::new(capabilities, Implementation::new("surface-tests", "0.0.0"))
    }

    async fn create_elicitation(
        &self,
        request: ElicitRequestParams,
        _: RequestContext<RoleClient>,
    ) -> Result<ElicitResult, ErrorData> {
        let request = serde_json::to_value(&request).unwrap();
        if request["mode"] == "url" {
            self.asked.lock().unwrap().push(format!(
                "url {} {} {}",
                request["elicitationId"].as_str().unwrap(),
                request["url"].as_str().unwrap(),
                request["message"].as_str().unwrap()
            ));
            let action = if self.decline { "decline" } else { "accept" };
            return Ok(serde_json::from_value(json!({ "action": action })).unwrap());
        }
        self.asked
            .lock()
            .unwrap()
            .push(format!("elicit {}", request["message"].as_str().unwrap_or("")));
        if self.decline {
            return Ok(serde_json::from_value(json!({"action": "decline"})).unwrap());
        }
        let mut content = serde_json::Map::new();
        for field in request["requestedSchema"]["properties"]
            .as_object()
            .unwrap()
            .keys()
        {
            let value = match field.as_str() {
                "name" | "username" => json!("Ada"),
                "color" => json!("blue"),
                "ok" => json!(true),
                "email" => json!("ada@example.com"),
                "context" => json!("tests"),
                "bump" => json!("minor"),
                "announce" => json!(true),
                _ => continue,
            };
            content.insert(field.clone(), value);
        }
        Ok(serde_json::from_value(json!({"action": "accept", "content": content})).unwrap())
    }

    async fn create_message(
        &self,
        params: CreateMessageRequestParams,
        _: RequestContext<RoleClient>,
    ) -> Result<CreateMessageResult, ErrorData> {
        let asked = serde_json::to_value(&params.messages).unwrap();
        self.asked.lock().unwrap().push(format!(
            "sample {}",
            asked[0]["content"]["text"].as_str().unwrap_or("")
        ));
        Ok(serde_json::from_value(json!({
            "role": "assistant",
            "content": {"type": "text", "text": "Paris"},
            "model": "test-model",
            "stopReason": "endTurn"
        }))
        .unwrap())
    }

    async fn on_progress(
        &self,
        p: ProgressNotificationParam,
        _: rmcp::service::NotificationContext<RoleClient>,
    ) {
        let said = format!("{}/{:?} {}", p.progress, p.total, p.message.unwrap_or_default());
        self.progress.lock().unwrap().push(said);
    }

    async fn on_custom_notification(
        &self,
        n: CustomNotification,
        _: rmcp::service::NotificationContext<RoleClient>,
    ) {
        let id = n
            .params
            .as_ref()
            .and_then(|p| p["elicitationId"].as_str())
            .unwrap_or("");
        self.asked.lock().unwrap().push(format!("{} {id}", n.method));
    }

    async fn list_roots(&self, _: RequestContext<RoleClient>) -> Result<ListRootsResult, ErrorData> {
        self.asked.lock().unwrap().push("roots".into());
        Ok(serde_json::from_value(json!({"roots": [{"uri": "file:///work", "name": "Work"}]})).unwrap())
    }
}

async fn open(served: &ServedMcp, era: Era, host: Host) -> RunningService<RoleClient, Host> {
    common::connect_with(served, era, host).await
}

/// What a tool said: its value when it answered a string (the text block is that value as
/// JSON), else its text (a refusal's message).
fn text(result: &CallToolResult) -> String {
    match result.structured_content.as_ref().map(|v| &v["value"]) {
        Some(Value::String(s)) => s.clone(),
        _ => common::text(result),
    }
}

fn served() -> ServedMcp {
    conformance::start(Arc::new(Conformance::new())).expect("composes")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn asks_reach_the_host_and_answer_the_call_in_both_eras() {
    let served = served();
    for era in ERAS {
        let host = Host {
            capable: true,
            ..Host::default()
        };
        let client = open(&served, era, host.clone()).await;
        let call = |name: &str| client.call_tool(CallToolRequestParams::new(name.to_owned()));

        let all = call("test_input_required_result_multiple_inputs").await.unwrap();
        assert_eq!(text(&all), "Paris Ada (roots: file:///work)", "{era:?}");
        let two = call("test_input_required_result_multi_round").await.unwrap();
        assert_eq!(text(&two), "Ada likes blue", "{era:?}");
        let mut asked = host.asked.lock().unwrap().clone();
        // One round asks all three at once, in no set order.
        asked[..3].sort();
        assert_eq!(
            asked,
            [
                "elicit What is your name?",
                "roots",
                "sample Generate a greeting",
                "elicit Step 1: What is your name?",
                "elicit Step 2: What is your favorite color?",
            ],
            "{era:?}"
        );

        let mut args = serde_json::Map::new();
        args.insert("message".into(), json!("Who are you?"));
        let form = client
            .call_tool(CallToolRequestParams::new("test_elicitation").with_arguments(args))
            .await
            .unwrap();
        assert_eq!(
            text(&form),
            r#"User response: action=accept, content={"email":"ada@example.com","username":"Ada"}"#
        );
        let prompt = client
            .get_prompt(GetPromptRequestParams::new("test_input_required_result_prompt"))
            .await
            .unwrap();
        let said = serde_json::to_value(&prompt.messages[0].content).unwrap();
        assert_eq!(said["text"], "Use this context: tests", "{era:?}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_declined_form_reaches_the_tool_as_decline() {
    let served = served();
    for era in ERAS {
        let host = Host {
            capable: true,
            decline: true,
            ..Host::default()
        };
        let client = open(&served, era, host).await;
        let answer = client
            .call_tool(CallToolRequestParams::new("test_elicitation_sep1034_defaults"))
            .await
            .unwrap();
        assert_eq!(
            text(&answer),
            "Elicitation completed: action=decline, content=null",
            "{era:?}"
        );
        let refused = client
            .call_tool(CallToolRequestParams::new(
                "test_input_required_result_elicitation",
            ))
            .await
            .unwrap();
        assert_eq!(refused.is_error, Some(true), "{era:?}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_2026_round_is_sealed_bound_and_checked() {
    let served = served();
    let client = open(
        &served,
        Era::Modern,
        Host {
            capable: true,
            ..Host::default()
        },
    )
    .await;
    let once = |name: &str, responses: Option<Value>, state: Option<String>| {
        let mut params = CallToolRequestParams::new(name.to_owned());
        params.input_responses = responses.map(|r| serde_json::from_value(r).unwrap());
        params.request_state = state;
        client.call_tool_once(params)
    };
    let CallToolResponse::InputRequired(first) = once("test_input_required_result_request_state", None, None)
        .await
        .unwrap()
    else {
        panic!("a call that asks answers input_required first");
    };
    let requests = serde_json::to_value(first.input_requests.as_ref().unwrap()).unwrap();
    assert_eq!(requests["confirm"]["method"], "elicitation/create");
    assert_eq!(
        requests["confirm"]["params"]["requestedSchema"]["properties"]["ok"]["type"],
        "boolean"
    );
    let state = first.request_state.clone().expect("a sealed state");
    let yes = json!({"confirm": {"action": "accept", "content": {"ok": true}}});

    // Tampered, or replayed against another tool: -32602 before the tool runs.
    for (tool, state) in [
        (
            "test_input_required_result_request_state",
            format!("{state}-TAMPERED"),
        ),
        ("test_input_required_result_tampered_state", state.clone()),
    ] {
        let refused = rpc_error(once(tool, Some(yes.clone()), Some(state)).await.unwrap_err());
        assert_eq!(refused.code, ErrorCode::INVALID_PARAMS, "{tool}");
        assert!(refused.message.contains("requestState"), "{}", refused.message);
    }
    // A number where an ElicitResult goes: -32602 naming the key.
    let bad = rpc_error(
        once(
            "test_input_required_result_request_state",
            Some(json!({"confirm": 12345})),
            Some(state.clone()),
        )
        .await
        .unwrap_err(),
    );
    assert_eq!(bad.code, ErrorCode::INVALID_PARAMS);
    assert!(bad.message.contains("confirm"), "{}", bad.message);
    // The echoed state and the answer: complete.
    let CallToolResponse::Complete(done) =
        once("test_input_required_result_request_state", Some(yes), Some(state))
            .await
            .unwrap()
    else {
        panic!("answered, the call completes");
    };
    assert_eq!(text(&done), "state-ok: confirmed=true");

    // Round two carries round one's answer in a new state; round three needs only its own.
    let CallToolResponse::InputRequired(r1) = once("test_input_required_result_multi_round", None, None)
        .await
        .unwrap()
    else {
        panic!("round one asks");
    };
    let step1 = json!({"step1": {"action": "accept", "content": {"name": "Ada"}}});
    let CallToolResponse::InputRequired(r2) = once(
        "test_input_required_result_multi_round",
        Some(step1),
        r1.request_state.clone(),
    )
    .await
    .unwrap() else {
        panic!("round two asks again");
    };
    assert!(r2.input_requests.as_ref().unwrap().contains_key("step2"));
    assert_ne!(r2.request_state, r1.request_state);
    let step2 = json!({"step2": {"action": "accept", "content": {"color": "red"}}});
    let CallToolResponse::Complete(done) = once(
        "test_input_required_result_multi_round",
        Some(step2),
        r2.request_state,
    )
    .await
    .unwrap() else {
        panic!("round three completes");
    };
    assert_eq!(text(&done), "Ada likes red");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_capability_the_host_lacks_is_refused_in_2026_and_a_tool_error_before() {
    let served = served();
    for era in ERAS {
        let host = Host::default();
        let client = open(&served, era, host.clone()).await;
        let answer = client
            .call_tool(CallToolRequestParams::new("test_missing_capability"))
            .await;
        match era {
            Era::Modern => {
                let refused = rpc_error(answer.unwrap_err());
                assert_eq!(refused.code, ErrorCode::MISSING_REQUIRED_CLIENT_CAPABILITY);
                assert_eq!(
                    refused.data.unwrap()["requiredCapabilities"],
                    json!({"sampling": {}})
                );
            }
            Era::Legacy => {
                let answer = answer.unwrap();
                assert_eq!(answer.is_error, Some(true));
                assert!(text(&answer).contains("sampling"), "{}", text(&answer));
            }
        }
        // A tool that can do without: it asks nothing it cannot have, and completes.
        let answer = client
            .call_tool(CallToolRequestParams::new(
                "test_input_required_result_capabilities",
            ))
            .await
            .unwrap();
        assert_eq!(
            text(&answer),
            "name: (not asked), greeting: (not asked)",
            "{era:?}"
        );
        assert!(host.asked.lock().unwrap().is_empty(), "{era:?}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_procedure_reports_progress_through_the_face_neutral_context() {
    let served = served();
    for era in ERAS {
        let host = Host::default();
        let client = open(&served, era, host.clone()).await;
        // rmcp's client gives every request a progress token of its own.
        client
            .call_tool(CallToolRequestParams::new("watched_bump"))
            .await
            .unwrap();
        tokio::time::sleep(std::time::Duration::from_millis(100)).await;
        let heard = host.progress.lock().unwrap().clone();
        assert_eq!(heard.len(), 1, "{era:?}: {heard:?}");
        assert!(
            heard[0].starts_with("1/Some(1.0) watched is "),
            "{era:?}: {heard:?}"
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_release_example_asks_then_acts_in_both_eras() {
    for era in ERAS {
        let served = release::start(Arc::new(release::Releases::at("1.4.2"))).expect("composes");
        let host = Host {
            capable: true,
            ..Host::default()
        };
        let client = open(&served, era, host.clone()).await;
        let mut args = serde_json::Map::new();
        args.insert("changes".into(), json!("faster startup"));
        let done = client
            .call_tool(CallToolRequestParams::new("release").with_arguments(args.clone()))
            .await
            .unwrap();
        assert_eq!(
            text(&done),
            "released 1.5.0 in file:///work, announced: Paris",
            "{era:?}"
        );
        tokio::time::sleep(std::time::Duration::from_millis(100)).await;
        // rmcp's client handles each notification on a task of its own, so the order they are
        // heard in is not the order they came in (the wire order is direct_stdio's test).
        let mut progress = host.progress.lock().unwrap().clone();
        progress.sort();
        assert_eq!(
            progress,
            [
                "1/Some(2.0) recording the version",
                "2/Some(2.0) publishing the notes"
            ],
            "{era:?}"
        );

        // A user who declines: nothing is released.
        let declining = Host {
            capable: true,
            decline: true,
            ..Host::default()
        };
        let client = open(&served, era, declining).await;
        let refused = client
            .call_tool(CallToolRequestParams::new("release").with_arguments(args))
            .await
            .unwrap();
        assert_eq!(refused.is_error, Some(true), "{era:?}");
        assert!(
            text(&refused).contains("the user chose to decline"),
            "{}",
            text(&refused)
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_url_elicitation_sends_the_user_out_of_band_in_both_eras() {
    let page = "https://registry.example.com/sign-in?package=release&version=1.4.2";
    for era in ERAS {
        let served = release::start(Arc::new(release::Releases::at("1.4.2"))).expect("composes");
        let host = Host {
            url_mode: true,
            ..Host::default()
        };
        let client = open(&served, era, host.clone()).await;
        let done = client
            .call_tool(CallToolRequestParams::new("publish"))
            .await
            .unwrap();
        assert_eq!(text(&done), "published 1.4.2", "{era:?}");
        let asked = host.asked.lock().unwrap().clone();
        let words: Vec<&str> = asked[0].split(' ').collect();
        assert_eq!(words[0], "url", "{era:?}: {asked:?}");
        assert_eq!(words[2], page, "{era:?}");
        assert_eq!(words[3..].join(" "), "Sign in to the registry to publish 1.4.2");
        let id = words[1];
        assert_eq!(id.len(), 32, "a fresh 128-bit id: {id}");
        if era == Era::Legacy {
            // The completion goes out on the session, naming the same elicitation.
            let complete = format!("notifications/elicitation/complete {id}");
            for _ in 0..100 {
                if host.asked.lock().unwrap().contains(&complete) {
                    break;
                }
                tokio::time::sleep(std::time::Duration::from_millis(50)).await;
            }
            assert!(host.asked.lock().unwrap().contains(&complete), "{:?}", host.asked);
        }

        // A user who declines: nothing is published.
        let declining = Host {
            url_mode: true,
            decline: true,
            ..Host::default()
        };
        let client = open(&served, era, declining).await;
        let refused = client
            .call_tool(CallToolRequestParams::new("publish"))
            .await
            .unwrap();
        assert_eq!(refused.is_error, Some(true), "{era:?}");
        assert!(
            text(&refused).contains("the user chose to decline"),
            "{}",
            text(&refused)
        );

        // A host that elicits forms only is never sent the URL.
        let forms_only = Host {
            capable: true,
            ..Host::default()
        };
        let client = open(&served, era, forms_only.clone()).await;
        let answer = client.call_tool(CallToolRequestParams::new("publish")).await;
        match era {
            Era::Modern => {
                let refused = rpc_error(answer.unwrap_err());
                assert_eq!(refused.code, ErrorCode::MISSING_REQUIRED_CLIENT_CAPABILITY);
                assert_eq!(
                    refused.data.unwrap()["requiredCapabilities"],
                    json!({"elicitation": {"url": {}}})
                );
            }
            Era::Legacy => {
                let answer = answer.unwrap();
                assert_eq!(answer.is_error, Some(true));
                assert!(text(&answer).contains("`elicitation.url`"), "{}", text(&answer));
            }
        }
        assert!(forms_only.asked.lock().unwrap().is_empty(), "{era:?}");

        // Not waiting: 2025-11-25's -32042, naming the page and a fresh id; 2026-07-28 retired
        // the code, so there it is the tool's error naming the page.
        let mut args = serde_json::Map::new();
        args.insert("wait".into(), json!(false));
        let answer = client
            .call_tool(CallToolRequestParams::new("publish").with_arguments(args))
            .await;
        match era {
            Era::Legacy => {
                let required = rpc_error(answer.unwrap_err());
                assert_eq!(required.code, ErrorCode(-32042));
                let elicitations = &required.data.unwrap()["elicitations"];
                assert_eq!(elicitations[0]["mode"], "url");
                assert_eq!(elicitations[0]["url"], page);
                assert_eq!(elicitations[0]["elicitationId"].as_str().unwrap().len(), 32);
            }
            Era::Modern => {
                let answer = answer.unwrap();
                assert_eq!(answer.is_error, Some(true));
                assert!(text(&answer).contains(page), "{}", text(&answer));
            }
        }
    }
}
