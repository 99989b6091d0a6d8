//! The ops example served over MCP in-process, driven by rmcp's client in both protocol eras.

mod common;

#[allow(dead_code)]
#[path = "../examples/ops.rs"]
mod ops;

use common::{ERAS, Era, connect, empty, golden, text};
use rmcp::model::ErrorCode;
use serde_json::json;
use std::sync::Arc;
use std::time::Duration;
use surface::mcp::ServedMcp;
use surface::testing::{Era as TestEra, Notice, Refusal, TestClient};

fn serve() -> (Arc<ops::Ops>, ServedMcp) {
    let surface = Arc::new(ops::Ops::new());
    let served = ops::mcp_server(surface.clone())
        .start()
        .expect("the ops bundle composes");
    (surface, served)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn identity_capabilities_and_instructions_in_both_eras() {
    let (_, served) = serve();
    for era in ERAS {
        let client = connect(&served, era).await;
        let info = client.service.peer_info().expect("server info");
        let server = serde_json::to_value(&info).unwrap();
        assert_eq!(server["serverInfo"]["name"], "ops", "{era:?}: {server}");
        assert_eq!(server["instructions"], ops::INSTRUCTIONS, "{era:?}");
        assert_eq!(server["capabilities"]["tools"]["listChanged"], true, "{era:?}");
        assert_eq!(server["capabilities"]["resources"]["subscribe"], true, "{era:?}");
        assert_eq!(
            server["capabilities"]["resources"]["listChanged"], true,
            "{era:?}"
        );
        let version = server["protocolVersion"].as_str().unwrap().to_owned();
        match era {
            Era::Legacy => assert!(version.as_str() < "2026-07-28", "{version}"),
            Era::Modern => assert_eq!(version, "2026-07-28"),
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn tools_list_exposes_exactly_the_map_with_annotations() {
    let (_, served) = serve();
    for era in ERAS {
        let client = connect(&served, era).await;
        let tools = client.service.list_all_tools().await.unwrap();
        let names: Vec<&str> = tools.iter().map(|t| t.name.as_ref()).collect();
        assert_eq!(
            names,
            [
                "proc_spawn",
                "proc_kill",
                "load_sample",
                "count",
                "processes_view",
                "proc_wait"
            ],
            "{era:?}"
        );
        let by_name = |n: &str| serde_json::to_value(tools.iter().find(|t| t.name == n).unwrap()).unwrap();
        assert_eq!(
            by_name("load_sample")["annotations"],
            json!({"readOnlyHint": true, "destructiveHint": false})
        );
        assert_eq!(
            by_name("load_sample")["inputSchema"],
            json!({"type": "object", "properties": {}})
        );
        assert_eq!(by_name("count")["title"], "Count processes");
        // A procedure answering a struct advertises its output schema; a scalar answer none.
        assert_eq!(by_name("proc_spawn")["outputSchema"]["type"], "object");
        assert!(by_name("count").get("outputSchema").is_none());
        let entries = json!([by_name("proc_spawn"), by_name("proc_kill")]);
        golden(
            "ops_tools_list.json",
            &(serde_json::to_string_pretty(&entries).unwrap() + "\n"),
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn resources_and_templates_follow_the_naming_table() {
    let (_, served) = serve();
    for era in ERAS {
        let client = connect(&served, era).await;
        let resources = client.service.list_all_resources().await.unwrap();
        let listed: Vec<(String, String)> = resources
            .iter()
            .map(|r| (r.uri.clone(), r.name.clone()))
            .collect();
        assert_eq!(
            listed,
            [
                ("surface://cells/load", "load"),
                ("surface://collections/processes", "processes"),
                ("surface://streams/log", "log"),
                ("surface://events/autosave", "autosave"),
                // The triage skill's file, after the members (tests/skills_mcp.rs).
                ("skill://triage/SKILL.md", "triage"),
            ]
            .map(|(u, n)| (u.to_owned(), n.to_owned())),
            "{era:?}"
        );
        // Members are JSON, the skill markdown; the view is listed only to clients that
        // declare the MCP Apps extension (tests/apps_mcp.rs), which this one does not.
        let mimes: Vec<Option<&str>> = resources.iter().map(|r| r.mime_type.as_deref()).collect();
        let json = Some("application/json");
        assert_eq!(mimes, [json, json, json, json, Some("text/markdown")]);
        let templates = client.service.list_all_resource_templates().await.unwrap();
        assert_eq!(templates.len(), 1);
        assert_eq!(templates[0].uri_template, "surface://collections/processes/{id}");
        assert_eq!(templates[0].name, "processes");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn reads_answer_json_per_kind() {
    let (_, served) = serve();
    for era in TestEra::ALL {
        let agent = TestClient::connect(&served, era).await;
        let read = |uri: &'static str| agent.read(uri);
        assert_eq!(
            read("surface://cells/load").await,
            Ok(json!({"cpu": 0.0, "procs": 2}))
        );
        assert_eq!(read("surface://collections/processes").await, Ok(json!([1, 2])));
        assert_eq!(
            read("surface://collections/processes/2").await,
            Ok(json!({"pid": 2, "name": "shell", "state": "running"}))
        );
        assert_eq!(read("surface://events/autosave").await, Ok(json!(null)));
        assert_eq!(read("surface://streams/log").await, Ok(json!([])));

        let absent = read("surface://collections/processes/42").await.unwrap_err();
        assert!(
            absent.message.contains("\"42\" is present") || absent.message.contains("not present"),
            "{absent:?}"
        );
        assert!(absent.message.starts_with("surface-mcp: "), "{absent:?}");
        let bad_key = read("surface://collections/processes/abc").await.unwrap_err();
        assert!(bad_key.message.contains("abc"), "{bad_key:?}");
        let unknown = read("surface://cells/nope").await.unwrap_err();
        assert!(unknown.message.contains("surface://cells/nope"), "{unknown:?}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn stream_reads_its_snapshot_after_writes() {
    let (_, served) = serve();
    let client = connect(&served, Era::Legacy).await;
    client.call_ok("proc_spawn", json!({"name": "vim"})).await;
    assert_eq!(
        client.read("surface://streams/log").await.unwrap(),
        json!(["spawned vim as 3"])
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn tools_answer_structured_and_text_from_one_serialization() {
    let (_, served) = serve();
    for era in ERAS {
        let client = connect(&served, era).await;
        let r = client.call("proc_spawn", json!({"name": "vim"})).await.unwrap();
        let structured = r.structured_content.clone().unwrap();
        assert_eq!(structured["name"], "vim");
        assert_eq!(
            serde_json::from_str::<serde_json::Value>(&text(&r)).unwrap(),
            structured
        );
        assert_eq!(text(&r), serde_json::to_string_pretty(&structured).unwrap());

        // A bare integer travels under `value`.
        let count = client.call_ok("count", json!({"state": "running"})).await;
        assert!(count["value"].as_u64().unwrap() >= 3, "{count}");
        let load = client.call_ok("load_sample", empty()).await;
        assert!(load["procs"].as_u64().unwrap() >= 3);
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn failures_are_answers() {
    let (_, served) = serve();
    for era in TestEra::ALL {
        let agent = TestClient::connect(&served, era).await;
        assert_eq!(
            agent.call("proc_kill", json!({"pid": 4242})).await.refusal(),
            Refusal {
                message: "surface-mcp: there is no process 4242".into(),
                detail: Some(json!({"kind": "no-such-process", "pid": 4242})),
            }
        );
        let bad = agent.call("proc_kill", json!({"pid": "one"})).await.refusal();
        assert!(bad.message.contains("`pid`"), "{bad:?}");
        assert_eq!(bad.message.matches("surface-mcp: ").count(), 1);
        let missing = agent.call("proc_spawn", empty()).await.refusal();
        assert!(missing.message.contains("`name`"), "{missing:?}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn unexposed_procedures_answer_like_names_never_served() {
    let (_, served) = serve();
    for era in TestEra::ALL {
        let agent = TestClient::connect(&served, era).await;
        for name in ["proc_configure", "proc.configure", "configure", "never_served"] {
            let e = agent.call(name, json!({"pid": 1, "nice": 0})).await.rejection();
            assert_eq!(e.code, Some(ErrorCode::INVALID_PARAMS.0), "{era:?} {name}");
            assert_eq!(e.message, format!("surface-mcp: unknown tool \"{name}\""));
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn kill_then_spawn_moves_load_and_processes() {
    let (surface, served) = serve();
    let agent = TestClient::connect(&served, TestEra::Modern).await;
    assert_eq!(
        agent.call("proc_kill", json!({"pid": 2})).await.value(),
        json!({"ok": true})
    );
    assert_eq!(surface.processes.keys(), vec![1]);
    assert_eq!(agent.read("surface://cells/load").await.unwrap()["procs"], 1);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn subscriptions_receive_updated_after_a_write_in_both_eras() {
    let quiet = Duration::from_secs(1);
    for era in TestEra::ALL {
        let (_, served) = serve();
        let agent = TestClient::connect(&served, era).await;
        let mut processes = agent.subscribe("surface://collections/processes").await.unwrap();
        let mut load = agent.subscribe("surface://cells/load").await.unwrap();
        let mut first = agent
            .subscribe("surface://collections/processes/1")
            .await
            .unwrap();
        agent.call("proc_spawn", json!({"name": "top"})).await.value();
        let updated = |uri: &str| vec![Notice::Updated(uri.to_owned())];
        // One debounced `updated` per URI; the untouched item stays quiet.
        assert_eq!(
            load.until_quiet(quiet).await,
            updated("surface://cells/load"),
            "{era:?}"
        );
        assert_eq!(
            processes.until_quiet(quiet).await,
            updated("surface://collections/processes"),
            "{era:?}"
        );
        assert_eq!(first.until_quiet(quiet).await, [], "{era:?}");
        // Several writes inside the window coalesce into one notification.
        for name in ["a", "b", "c"] {
            agent.call("proc_spawn", json!({"name": name})).await.value();
        }
        assert_eq!(
            load.until_quiet(quiet).await,
            updated("surface://cells/load"),
            "{era:?}"
        );
        // The item's own URI hears a change to that item.
        agent.call("proc_kill", json!({"pid": 1})).await.value();
        assert_eq!(
            first.until_quiet(quiet).await,
            updated("surface://collections/processes/1"),
            "{era:?}"
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn stream_and_event_subscriptions_hear_chunks_and_occurrences() {
    let (surface, served) = serve();
    for era in TestEra::ALL {
        let agent = TestClient::connect(&served, era).await;
        let mut log = agent.subscribe("surface://streams/log").await.unwrap();
        let mut autosave = agent.subscribe("surface://events/autosave").await.unwrap();
        surface.autosave.publish(ops::Saved { procs: 2 });
        surface.log.push("by hand".into());
        assert_eq!(
            autosave.next().await,
            Some(Notice::Updated("surface://events/autosave".into())),
            "{era:?}"
        );
        assert_eq!(
            log.next().await,
            Some(Notice::Updated("surface://streams/log".into())),
            "{era:?}"
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn subscribing_to_an_unknown_uri_is_refused_by_name() {
    let (_, served) = serve();
    let legacy = TestClient::connect(&served, TestEra::Legacy).await;
    let e = legacy.subscribe("surface://cells/nope").await.err().unwrap();
    assert!(e.message.contains("surface://cells/nope"), "{e:?}");

    let modern = TestClient::connect(&served, TestEra::Modern).await;
    match modern.subscribe("surface://cells/nope").await {
        Err(e) => assert!(e.message.contains("surface://cells/nope"), "{e:?}"),
        Ok(mut notices) => match notices.next().await {
            Some(Notice::Ended(message)) => assert!(message.contains("surface://cells/nope"), "{message}"),
            other => panic!("expected the listen stream to end with a refusal, got {other:?}"),
        },
    }
}

/// The user test the guide shows (docs/testing.md), verbatim but for the `ops::` paths.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn killing_a_process_moves_the_load() {
    for era in TestEra::ALL {
        let served = ops::mcp_server(Arc::new(ops::Ops::new())).start().unwrap();
        let agent = TestClient::connect(&served, era).await;
        assert!(agent.tool_names().await.contains(&"proc_kill".to_owned()));
        let mut load = agent.subscribe("surface://cells/load").await.unwrap();
        assert_eq!(
            agent.call("proc_kill", json!({"pid": 2})).await.value(),
            json!({"ok": true})
        );
        assert_eq!(
            load.next().await,
            Some(Notice::Updated("surface://cells/load".into()))
        );
        assert_eq!(
            agent.call("proc_kill", json!({"pid": 4242})).await.refusal(),
            Refusal {
                message: "surface-mcp: there is no process 4242".into(),
                detail: Some(json!({"kind": "no-such-process", "pid": 4242})),
            }
        );
        assert_eq!(agent.read("surface://cells/load").await.unwrap()["procs"], 1);
    }
}
