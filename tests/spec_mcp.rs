//! The ops example over its real stdio, checked against what the MCP spec says where a
//! spec-driven test once found surface answering otherwise: a 2026-07-28 `_meta` log level that
//! is not a level, a cancelled call's effect, completions of unknown references, output schemas
//! and the completion of a prompt's enum argument.

mod common;

use common::stdio::Wire;
use serde_json::{Value, json};
use std::time::Duration;

const LOG_LEVEL: &str = "io.modelcontextprotocol/logLevel";

fn modern_meta() -> Value {
    json!({
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": {},
        "io.modelcontextprotocol/clientInfo": {"name": "spec-test", "version": "0"}
    })
}

/// A session on a fresh ops: legacy (`initialize`) or 2026-07-28 (`_meta` on every request).
struct Session {
    wire: Wire,
    modern: bool,
    next: u64,
}

impl Session {
    async fn open(modern: bool, env: &[(&str, &str)]) -> Session {
        let mut wire = Wire::start(env, false);
        if !modern {
            wire.initialize().await;
        }
        Session {
            wire,
            modern,
            next: 10,
        }
    }

    fn params(&self, mut params: Value) -> Value {
        if self.modern {
            params["_meta"] = modern_meta();
        }
        params
    }

    /// A request's whole answer (`result` or `error`).
    async fn ask(&mut self, method: &str, params: Value) -> Value {
        self.next += 1;
        let params = self.params(params);
        self.wire.request(self.next, method, params).await
    }
}

#[tokio::test]
async fn a_2026_request_whose_log_level_is_not_a_level_is_invalid_params() {
    let mut wire = Wire::start(&[], false);
    for (id, bad) in [json!("verbose"), json!(3), json!(null), json!({"level": "info"})]
        .into_iter()
        .enumerate()
    {
        let mut meta = modern_meta();
        meta[LOG_LEVEL] = bad.clone();
        for method in ["tools/call", "tools/list"] {
            let answer = wire
                .request(
                    id as u64 * 2 + u64::from(method == "tools/list"),
                    method,
                    json!({"name": "count", "arguments": {}, "_meta": meta}),
                )
                .await;
            assert_eq!(answer["error"]["code"], -32602, "{method} with {bad}: {answer}");
            assert!(
                answer["error"]["message"]
                    .as_str()
                    .unwrap()
                    .contains("not a log level"),
                "{answer}"
            );
        }
    }
    // A level is a level: the call runs.
    let mut meta = modern_meta();
    meta[LOG_LEVEL] = json!("debug");
    let answer = wire
        .request(
            100,
            "tools/call",
            json!({"name": "count", "arguments": {}, "_meta": meta}),
        )
        .await;
    assert_eq!(
        answer["result"]["structuredContent"],
        json!({"value": 2}),
        "{answer}"
    );
}

/// `proc_spawn` waits (OPS_SPAWN_DELAY_MS) before it spawns; a cancel that arrives during the
/// wait means the spawn never happens, and the cancelled call is never answered.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_cancelled_call_does_not_do_what_it_had_not_done_yet() {
    for modern in [false, true] {
        let mut s = Session::open(modern, &[("OPS_SPAWN_DELAY_MS", "800")]).await;
        let call = s.params(json!({"name": "proc_spawn", "arguments": {"name": "late"}}));
        s.wire
            .send(json!({"jsonrpc": "2.0", "id": 5, "method": "tools/call", "params": call}))
            .await;
        tokio::time::sleep(Duration::from_millis(200)).await;
        s.wire
            .send(json!({"jsonrpc": "2.0", "method": "notifications/cancelled",
                "params": {"requestId": 5, "reason": "changed my mind"}}))
            .await;
        // Well after the spawn would have happened.
        tokio::time::sleep(Duration::from_millis(1_400)).await;
        let count = s.params(json!({"name": "count", "arguments": {}}));
        s.wire
            .send(json!({"jsonrpc": "2.0", "id": 6, "method": "tools/call", "params": count}))
            .await;
        let answer = loop {
            let v = s.wire.receive().await;
            assert_ne!(
                v["id"], 5,
                "modern={modern}: the cancelled call was answered: {v}"
            );
            if v["id"] == 6 {
                break v;
            }
        };
        assert_eq!(
            answer["result"]["structuredContent"],
            json!({"value": 2}),
            "modern={modern}: the cancelled spawn still happened: {answer}"
        );
    }
}

#[tokio::test]
async fn completing_an_unknown_prompt_or_template_is_invalid_params_like_prompts_get() {
    for modern in [false, true] {
        let mut s = Session::open(modern, &[]).await;
        let got = s.ask("prompts/get", json!({"name": "nope"})).await;
        assert_eq!(got["error"]["code"], -32602, "{got}");
        let completed = s
            .ask(
                "completion/complete",
                json!({"ref": {"type": "ref/prompt", "name": "nope"}, "argument": {"name": "state", "value": ""}}),
            )
            .await;
        assert_eq!(completed["error"]["code"], -32602, "modern={modern}: {completed}");
        let template = s
            .ask(
                "completion/complete",
                json!({"ref": {"type": "ref/resource", "uri": "surface://collections/nope/{id}"},
                       "argument": {"name": "id", "value": ""}}),
            )
            .await;
        assert_eq!(template["error"]["code"], -32602, "modern={modern}: {template}");
        // The served ones still complete.
        let ids = s
            .ask(
                "completion/complete",
                json!({"ref": {"type": "ref/resource", "uri": "surface://collections/processes/{id}"},
                       "argument": {"name": "id", "value": ""}}),
            )
            .await;
        assert_eq!(ids["result"]["completion"]["values"], json!(["1", "2"]), "{ids}");
    }
}

#[tokio::test]
async fn a_prompts_enum_argument_completes_from_its_values() {
    for modern in [false, true] {
        let mut s = Session::open(modern, &[]).await;
        let listed = s.ask("prompts/list", json!({})).await;
        let triage = listed["result"]["prompts"]
            .as_array()
            .unwrap()
            .iter()
            .find(|p| p["name"] == "triage")
            .unwrap_or_else(|| panic!("no triage prompt: {listed}"))
            .clone();
        assert_eq!(triage["arguments"][0]["name"], "state", "{triage}");
        let complete = |value: &str| json!({"ref": {"type": "ref/prompt", "name": "triage"}, "argument": {"name": "state", "value": value}});
        let all = s.ask("completion/complete", complete("")).await;
        assert_eq!(
            all["result"]["completion"],
            json!({"values": ["running", "sleeping"], "total": 2, "hasMore": false}),
            "modern={modern}: {all}"
        );
        let r = s.ask("completion/complete", complete("r")).await;
        assert_eq!(r["result"]["completion"]["values"], json!(["running"]));
        let got = s
            .ask(
                "prompts/get",
                json!({"name": "triage", "arguments": {"state": "running"}}),
            )
            .await;
        let text = got["result"]["messages"][0]["content"]["text"].as_str().unwrap();
        assert!(
            text.contains("- init (pid 1)") && text.contains("- shell (pid 2)"),
            "{text}"
        );
    }
}

#[tokio::test]
async fn a_procedure_answering_a_struct_advertises_its_output_schema_and_matches_it() {
    for modern in [false, true] {
        let mut s = Session::open(modern, &[]).await;
        let listed = s.ask("tools/list", json!({})).await;
        let tools = listed["result"]["tools"].as_array().unwrap().clone();
        let tool = |name: &str| tools.iter().find(|t| t["name"] == name).unwrap().clone();
        let spawn = tool("proc_spawn");
        let schema = &spawn["outputSchema"];
        assert_eq!(schema["type"], "object", "{spawn}");
        assert_eq!(schema["required"], json!(["pid", "name", "state"]), "{schema}");
        assert_eq!(schema["properties"]["pid"]["type"], "integer");
        assert_eq!(schema["properties"]["name"]["type"], "string");
        // A scalar answer travels as {"value": …} and a bespoke tool declares none.
        assert!(tool("count").get("outputSchema").is_none());
        assert!(tool("load_sample").get("outputSchema").is_some());
        // A procedure that refuses with a detail advertises none: the refusal's detail is its
        // `structuredContent`, which clients check against an `outputSchema` even on `isError`.
        assert!(tool("proc_kill").get("outputSchema").is_none());
        let refused = s
            .ask(
                "tools/call",
                json!({"name": "proc_kill", "arguments": {"pid": 999}}),
            )
            .await;
        assert_eq!(refused["result"]["isError"], true, "{refused}");
        assert_eq!(
            refused["result"]["structuredContent"],
            json!({"kind": "no-such-process", "pid": 999}),
            "{refused}"
        );

        let answer = s
            .ask(
                "tools/call",
                json!({"name": "proc_spawn", "arguments": {"name": "vim"}}),
            )
            .await;
        let structured = answer["result"]["structuredContent"].as_object().unwrap().clone();
        let properties = schema["properties"].as_object().unwrap();
        for (key, value) in &structured {
            let want = properties[key]["type"].as_str().unwrap();
            let is = match value {
                Value::String(_) => "string",
                Value::Number(_) => "integer",
                _ => "other",
            };
            assert_eq!(is, want, "{key}: {value}");
        }
        for required in schema["required"].as_array().unwrap() {
            assert!(structured.contains_key(required.as_str().unwrap()));
        }
    }
}
