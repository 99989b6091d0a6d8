//! The bundle example over MCP: composed lists, refusals, live reroster, tombstones and
//! subscriptions across rosters, in both protocol eras; and rerosters under concurrent calls.

mod common;

#[allow(dead_code)]
#[path = "../examples/bundle.rs"]
mod bundle;

#[allow(dead_code)]
#[path = "../examples/ops.rs"]
mod ops;

use bundle::{Host, NARROW, TENANT};
use common::{ERAS, Era, connect, empty, rpc_error, text};
use serde_json::json;
use std::sync::Arc;
use std::time::Duration;
use surface::mcp::{BundleClient, McpServer, Member, ServedMcp, Siblings};
use surface::testing::{Era as TestEra, Notice, TestClient};
use surface::{Expose, Failure};

fn serve() -> (Arc<Host>, ServedMcp) {
    let host = Arc::new(Host::default());
    let served = bundle::start(host.clone()).expect("the bundle composes");
    (host, served)
}

async fn tool_names(client: &common::Client) -> Vec<String> {
    client
        .service
        .list_all_tools()
        .await
        .unwrap()
        .iter()
        .map(|t| t.name.to_string())
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn composed_lists_put_the_core_first_then_siblings_by_key() {
    let (_, served) = serve();
    for era in ERAS {
        let client = connect(&served, era).await;
        assert_eq!(
            tool_names(&client).await,
            [
                "who_get",
                "a_ops_run",
                "a_here",
                "b_ops_run",
                "b_here",
                "roster_set",
                "roster_narrow"
            ],
            "{era:?}"
        );
        let resources: Vec<(String, String)> = client
            .service
            .list_all_resources()
            .await
            .unwrap()
            .into_iter()
            .map(|r| (r.uri, r.name))
            .collect();
        assert_eq!(
            resources,
            [
                ("surface://cells/banner", "banner"),
                ("surface://cells/a/entries", "a/entries"),
                ("surface://collections/a/rows", "a/rows"),
                ("surface://cells/b/entries", "b/entries"),
                ("surface://collections/b/rows", "b/rows"),
            ]
            .map(|(u, n)| (u.to_owned(), n.to_owned()))
        );
        let templates: Vec<String> = client
            .service
            .list_all_resource_templates()
            .await
            .unwrap()
            .into_iter()
            .map(|t| t.uri_template)
            .collect();
        assert_eq!(
            templates,
            [
                "surface://collections/a/rows/{id}",
                "surface://collections/b/rows/{id}"
            ]
        );

        assert_eq!(client.call_ok("who_get", empty()).await, json!({"value": "core"}));
        assert_eq!(client.call_ok("a_ops_run", empty()).await, json!({"value": "a"}));
        assert_eq!(client.call_ok("b_here", empty()).await, json!({"value": "b"}));
        assert_eq!(
            client.read("surface://collections/b/rows/b-row").await.unwrap(),
            json!("b")
        );
        assert_eq!(client.read("surface://cells/a/entries").await.unwrap(), json!(1));
        assert_eq!(
            client.read("surface://cells/banner").await.unwrap(),
            json!("hello")
        );
        let info = serde_json::to_value(client.service.peer_info().unwrap()).unwrap();
        assert_eq!(info["instructions"], "Tenants standing now: a, b.");
    }
}

fn tenant() -> Member {
    Member::new(TENANT).tool(bundle::HereTool)
}

fn problems(result: Result<ServedMcp, surface::mcp::CompositionError>) -> Vec<String> {
    match result {
        Err(e) => e.problems,
        Ok(_) => panic!("the bundle should have been refused"),
    }
}

/// A root tool whose name collides with sibling `a`'s scoped names.
#[surface::tool(read_only)]
async fn a_here(_client: &BundleClient) -> Result<u8, Failure> {
    Ok(0)
}

/// Another root tool colliding with a generated sibling tool.
#[surface::tool(read_only)]
async fn a_ops_run(_client: &BundleClient) -> Result<u8, Failure> {
    Ok(0)
}

#[test]
fn refusals_name_what_collides_and_how_to_fix_it() {
    assert_eq!(
        problems(McpServer::new("x", "0").start()),
        ["a rooted bundle needs a core or at least one sibling, and this one has neither"]
    );

    let ops_core = Member::new(ops::EXPOSE);
    let clash = problems(
        McpServer::new("x", "0")
            .core(ops_core)
            .sibling("processes", tenant())
            .start(),
    );
    assert_eq!(clash.len(), 1, "{clash:?}");
    assert!(
        clash[0].starts_with("sibling key \"processes\" equals the core collection \"processes\""),
        "{clash:?}"
    );
    assert!(clash[0].contains("rename the sibling"), "{clash:?}");

    let dup = problems(
        McpServer::new("x", "0")
            .sibling("a", tenant())
            .root_tool(AHereTool)
            .root_tool(AOpsRunTool)
            .start(),
    );
    assert_eq!(
        dup,
        [
            "tool name \"a_here\" is produced by both bespoke here on sibling \"a\" and bespoke a_here at the bundle root — rename one",
            "tool name \"a_ops_run\" is produced by both procedure ops.run on sibling \"a\" and bespoke a_ops_run at the bundle root — rename one",
        ]
    );

    // A tool name over 64 characters is a compile error (`#[tool]`, `#[surface]`); a sibling
    // key's prefix can still push a valid one over at boot.
    let long = problems(
        McpServer::new("x", "0")
            .sibling(
                "a_sibling_key_that_goes_on_and_on_well_past_what_hosts_accept",
                tenant(),
            )
            .start(),
    );
    assert!(
        long[0].contains("breaks the client limits of at most 64 characters"),
        "{long:?}"
    );

    let bad_key = problems(McpServer::new("x", "0").sibling("a/b", tenant()).start());
    assert!(
        bad_key[0].starts_with("sibling key \"a/b\" must be non-empty"),
        "{bad_key:?}"
    );
}

/// The problems `bundle!`'s compile-time check blames on every part of a static roster (the
/// check is a const fn; called here at run time), one sentence each, sorted.
fn checked(core: bool, siblings: &[&'static str], root: &'static [&'static str]) -> Vec<String> {
    use surface::__private::bundle::{Culprit, StaticBundle, problem_at, static_member};
    use surface::{StaticTool, rules::PROBLEM_SEPARATOR};
    const TOOLS: &[&str] = &[<bundle::HereTool as StaticTool>::NAME];
    let siblings: Vec<_> = siblings
        .iter()
        .map(|k| (*k, static_member(TENANT, TOOLS)))
        .collect();
    let bundle = StaticBundle {
        core: core.then(|| static_member(ops::EXPOSE, &[])),
        siblings: Vec::leak(siblings),
        root,
    };
    let mut parts = vec![Culprit::Whole];
    if core {
        parts.push(Culprit::Expose(None));
    }
    for i in 0..bundle.siblings.len() {
        parts.extend([
            Culprit::Key(i),
            Culprit::Expose(Some(i)),
            Culprit::Tool(Some(i), 0),
        ]);
    }
    parts.extend((0..root.len()).map(Culprit::Root));
    let mut found: Vec<String> = parts
        .into_iter()
        .filter_map(|at| problem_at(&bundle, at))
        .flat_map(|s| {
            s.as_str()
                .split(PROBLEM_SEPARATOR)
                .map(str::to_owned)
                .collect::<Vec<_>>()
        })
        .collect();
    found.sort();
    found
}

/// The same roster composed at boot, its problems sorted (the root tools by name: `a_here`,
/// `a_ops_run`).
fn composed(core: bool, siblings: &[&str], root: &[&str]) -> Vec<String> {
    let mut server = McpServer::new("x", "0");
    if core {
        server = server.core(Member::new(ops::EXPOSE));
    }
    for key in siblings {
        server = server.sibling(*key, tenant());
    }
    for name in root {
        server = match *name {
            "a_here" => server.root_tool(AHereTool),
            "a_ops_run" => server.root_tool(AOpsRunTool),
            other => panic!("no root tool {other} in this test"),
        };
    }
    let mut found = problems(server.start());
    found.sort();
    found
}

/// One rule book: `bundle!`'s compile-time check and boot-time composition call the same rule
/// functions and write the same sentences, every problem named (charset rules included).
#[test]
fn the_compile_time_check_and_boot_refuse_a_roster_in_the_same_words() {
    let long = "a_sibling_key_that_goes_on_and_on_well_past_what_hosts_accept";
    let cases: [(bool, &[&'static str], &'static [&'static str]); 6] = [
        (false, &[], &[]),
        (true, &["processes"], &[]),
        (false, &["a"], &["a_here", "a_ops_run"]),
        (false, &[long], &[]),
        // A bad key, and the tool names it prefixes break the charset rule too.
        (false, &["a b"], &[]),
        (true, &["processes", "a/b", "a"], &["a_here"]),
    ];
    for (core, siblings, root) in cases {
        let at_boot = composed(core, siblings, root);
        assert!(!at_boot.is_empty(), "{siblings:?} {root:?} should be refused");
        if siblings == ["a b"] {
            // The key, and `a b_ops_run` and `a b_here`: every problem, not the first.
            assert_eq!(at_boot.len(), 3, "{at_boot:?}");
        }
        assert_eq!(checked(core, siblings, root), at_boot, "{siblings:?} {root:?}");
    }
}

/// `Member::new(..).tool(..)` erases the surface, so a tool over another surface's client
/// compiles (`bundle!` refuses it at compile time); composition refuses it, naming both.
#[test]
fn a_tool_of_another_surface_is_refused_at_composition() {
    let foreign = problems(
        McpServer::new("x", "0")
            .core(Member::new(ops::EXPOSE).tool(bundle::HereTool))
            .start(),
    );
    assert_eq!(
        foreign,
        [
            "bespoke tool \"here\" on the core is handed a `TenantClient`, but that member serves Ops, not Tenant — give it to the member that serves Tenant"
        ]
    );
    let on_sibling = problems(
        McpServer::new("x", "0")
            .core(Member::new(TENANT))
            .sibling("o", Member::new(ops::EXPOSE).tool(bundle::HereTool))
            .start(),
    );
    assert_eq!(on_sibling.len(), 1, "{on_sibling:?}");
    assert!(on_sibling[0].starts_with("bespoke tool \"here\" on sibling \"o\" is handed a `TenantClient`"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_refused_reroster_changes_nothing() {
    let (_, served) = serve();
    let client = connect(&served, Era::Legacy).await;
    let before = tool_names(&client).await;
    let mut bad = Siblings::new();
    bad.insert("a".into(), tenant());
    bad.insert("a/x".into(), tenant());
    let e = served.reroster(bad).await.unwrap_err();
    assert!(
        e.to_string()
            .starts_with("surface-mcp: the bundle was refused: sibling key \"a/x\""),
        "{e}"
    );
    assert_eq!(tool_names(&client).await, before);
    assert_eq!(served.sibling_keys(), ["a", "b"]);
    assert_eq!(client.call_ok("b_ops_run", empty()).await, json!({"value": "b"}));

    // Through the root tool, the refusal is an answer and the host keeps its roster.
    let r = client
        .call("roster_set", json!({"keys": ["a", "bad key"]}))
        .await
        .unwrap();
    assert_eq!(r.is_error, Some(true));
    assert!(text(&r).contains("sibling key \"bad key\""), "{}", text(&r));
    assert_eq!(
        client.call_ok("roster_set", json!({"keys": ["a", "b"]})).await,
        json!({"value": ["a", "b"]})
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn roster_set_sends_list_changed_and_retires_names_by_sibling() {
    for era in TestEra::ALL {
        let (_, served) = serve();
        let agent = TestClient::connect(&served, era).await;
        let mut lists = agent.watch_lists().await.unwrap();
        let answer = agent.call("roster_set", json!({"keys": ["a", "c"]})).await;
        assert_eq!(answer.value(), json!({"value": ["a", "c"]}));
        let mut heard = vec![lists.next().await, lists.next().await];
        heard.sort_by_key(|h| format!("{h:?}"));
        assert_eq!(
            heard,
            [Some(Notice::ResourcesChanged), Some(Notice::ToolsChanged)],
            "{era:?}"
        );
        assert_eq!(
            agent.tool_names().await,
            [
                "who_get",
                "a_ops_run",
                "a_here",
                "c_ops_run",
                "c_here",
                "roster_set",
                "roster_narrow"
            ]
        );
        assert_eq!(
            agent.call("c_ops_run", empty()).await.value(),
            json!({"value": "c"})
        );

        assert_eq!(
            agent.call("b_ops_run", empty()).await.refusal().message,
            "surface-mcp: tool \"b_ops_run\" is no longer served — the sibling \"b\" was dropped from this rooted bundle — re-read the list"
        );
        let read = agent.read("surface://collections/b/rows").await.unwrap_err();
        assert!(read.message.contains("the sibling \"b\" was dropped"), "{read:?}");
        let item = agent
            .read("surface://collections/b/rows/b-row")
            .await
            .unwrap_err();
        assert!(item.message.contains("was dropped"), "{item:?}");
        // Never parsed from the name: `b_typo` was never served, so it stays unknown.
        let typo = agent.call("b_typo", empty()).await.rejection();
        assert_eq!(typo.message, "surface-mcp: unknown tool \"b_typo\"");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_narrowed_sibling_no_longer_exposes_what_it_dropped() {
    for era in ERAS {
        let (_, served) = serve();
        let client = connect(&served, era).await;
        assert_eq!(
            client.call_ok("roster_narrow", json!({"key": "b"})).await,
            json!({"value": ["a", "b"]})
        );
        let e = rpc_error(client.read("surface://collections/b/rows").await.unwrap_err());
        assert_eq!(
            e.message,
            "surface-mcp: resource \"surface://collections/b/rows\" is no longer served — the sibling \"b\" no longer exposes it — re-read the list"
        );
        let here = client.call("b_here", empty()).await.unwrap();
        assert!(
            text(&here).contains("the sibling \"b\" no longer exposes it"),
            "{}",
            text(&here)
        );
        assert_eq!(client.call_ok("b_ops_run", empty()).await, json!({"value": "b"}));
        // Subscribing to a retired name is refused with the same sentence.
        if era == Era::Legacy {
            let agent = TestClient::connect(&served, TestEra::Legacy).await;
            let sub = agent.subscribe("surface://cells/b/entries").await.err().unwrap();
            assert!(sub.message.contains("no longer exposes it"), "{sub:?}");
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_tombstone_outlives_present_empty_gone() {
    let (host, served) = serve();
    let agent = TestClient::connect(&served, TestEra::Legacy).await;
    let refusal = || async { agent.call("b_ops_run", empty()).await.refusal().message };
    // present → empty: `b` stands with nothing exposed.
    let mut empty_b = host.siblings();
    empty_b.insert("b".into(), Member::new(Expose::<bundle::Tenant>::none()));
    agent.reroster(empty_b).await.unwrap();
    assert!(refusal().await.contains("no longer exposes it"));
    // empty → gone.
    let mut gone = host.siblings();
    gone.remove("b");
    agent.reroster(gone.clone()).await.unwrap();
    assert!(refusal().await.contains("was dropped from this rooted bundle"));
    // Back, then gone again: still "dropped", forever.
    agent.reroster(host.siblings()).await.unwrap();
    assert_eq!(
        agent.call("b_ops_run", empty()).await.value(),
        json!({"value": "b"})
    );
    agent.reroster(gone).await.unwrap();
    assert!(refusal().await.contains("was dropped from this rooted bundle"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn subscriptions_follow_survivors_and_end_for_departures() {
    for era in TestEra::ALL {
        let (host, served) = serve();
        let agent = TestClient::connect(&served, era).await;
        let mut a_entries = agent.subscribe("surface://cells/a/entries").await.unwrap();
        let mut b_entries = agent.subscribe("surface://cells/b/entries").await.unwrap();
        let a = host_tenant(&host, "a");
        let b = host_tenant(&host, "b");
        agent.call("roster_set", json!({"keys": ["a"]})).await.value();
        a.entries.set(2);
        b.entries.set(2);
        assert_eq!(
            a_entries.until_quiet(Duration::from_secs(1)).await,
            [Notice::Updated("surface://cells/a/entries".into())],
            "{era:?}"
        );
        let departed = b_entries.until_quiet(Duration::from_secs(1)).await;
        assert!(
            departed.iter().all(|n| n.uri().is_none()),
            "{era:?}: a departed sibling's cell still notifies: {departed:?}"
        );
    }
}

fn host_tenant(host: &Host, key: &str) -> Arc<bundle::Tenant> {
    host.tenant(key).expect("tenant stands")
}

/// Answers the sibling keys of the generation that served the call.
#[surface::tool(read_only)]
async fn keys(client: &BundleClient) -> Result<Vec<String>, Failure> {
    Ok(client.sibling_keys().map(str::to_owned).collect())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn rerosters_under_concurrent_calls_answer_every_call_from_one_generation() {
    let host = Arc::new(Host::default());
    let served = bundle::start(host.clone()).unwrap();
    drop(served);
    // A bundle of its own with a root tool that reports its generation's roster.
    let core = Arc::new(bundle::Core {
        banner: surface::Cell::new("hi".into()),
    });
    let tenants: Vec<Arc<bundle::Tenant>> = ["a", "b", "c"]
        .iter()
        .map(|k| Arc::new(bundle::Tenant::new(k)))
        .collect();
    let roster = Arc::new(std::sync::Mutex::new(vec!["a".to_owned(), "b".to_owned()]));
    let factory_roster = roster.clone();
    let factory_tenants = tenants.clone();
    let siblings_for = |keys: &[&str]| -> Siblings {
        keys.iter()
            .map(|k| ((*k).to_owned(), Member::new(TENANT).tool(bundle::HereTool)))
            .collect()
    };
    let served = McpServer::new("concurrency", "0")
        .core(Member::new(bundle::CORE))
        .siblings(siblings_for(&["a", "b"]))
        .root_tool(KeysTool)
        .client(move || {
            let mut bundle = BundleClient::with_core(bundle::CoreClient::direct(core.clone()));
            for k in factory_roster.lock().unwrap().iter() {
                let i = ["a", "b", "c"].iter().position(|x| x == k).unwrap();
                bundle = bundle.sibling(
                    k.clone(),
                    bundle::TenantClient::direct(factory_tenants[i].clone()),
                );
            }
            bundle
        })
        .start()
        .unwrap();
    let client = Arc::new(connect(&served, Era::Legacy).await);

    let calls = 400;
    let mut handles = Vec::new();
    for i in 0..calls {
        let client = client.clone();
        handles.push(tokio::spawn(async move {
            if i % 2 == 0 {
                let v = client.call_ok("keys", empty()).await;
                let keys: Vec<String> = serde_json::from_value(v["value"].clone()).unwrap();
                assert!(
                    keys == ["a", "b"] || keys == ["a", "c"],
                    "half a roster: {keys:?}"
                );
            } else {
                let r = client.call("b_ops_run", empty()).await.expect("answered");
                match r.is_error {
                    Some(false) => assert_eq!(r.structured_content, Some(json!({"value": "b"}))),
                    _ => assert!(text(&r).contains("was dropped"), "{}", text(&r)),
                }
            }
        }));
    }
    for round in 0..40 {
        let keys: &[&str] = if round % 2 == 0 { &["a", "c"] } else { &["a", "b"] };
        *roster.lock().unwrap() = keys.iter().map(|k| (*k).to_owned()).collect();
        served.reroster(siblings_for(keys)).await.unwrap();
        tokio::task::yield_now().await;
    }
    let mut answered = 0;
    for h in handles {
        h.await.expect("no panic");
        answered += 1;
    }
    assert_eq!(answered, calls);
    let _ = NARROW;
}
