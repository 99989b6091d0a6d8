//! The contract gate: the ops example's face against its checked-in manifest, and each rule of
//! what breaks an agent and what only adds to what it can do.

#[allow(dead_code)]
#[path = "../examples/ops.rs"]
mod ops;

use serde_json::json;
use std::path::Path;
use std::sync::Arc;
use surface::mcp::ServedMcp;
use surface::mcp::contract::{self, ContractError, Manifest};

fn served() -> ServedMcp {
    ops::mcp_server(Arc::new(ops::Ops::new())).start().unwrap()
}

fn manifest_path() -> std::path::PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("examples/ops.contract.json")
}

#[test]
fn the_ops_face_keeps_its_checked_in_contract() {
    let changes = contract::check(&served(), &manifest_path()).unwrap_or_else(|e| panic!("{e}"));
    print!("{changes}");
    let manifest = Manifest::read(&manifest_path()).unwrap();
    assert_eq!(
        manifest.tools.keys().collect::<Vec<_>>(),
        [
            "count",
            "load_sample",
            "proc_kill",
            "proc_spawn",
            "proc_wait",
            "processes_view"
        ]
    );
    assert_eq!(manifest.templates.len(), 1);
}

/// The live face, edited as a past manifest would differ from it.
fn past(edit: impl FnOnce(&mut Manifest)) -> Manifest {
    let mut manifest = Manifest::of(&served());
    edit(&mut manifest);
    manifest
}

fn breaking(old: &Manifest) -> Vec<String> {
    Manifest::compare(old, &Manifest::of(&served())).breaking
}

fn additive(old: &Manifest) -> Vec<String> {
    let changes = Manifest::compare(old, &Manifest::of(&served()));
    assert_eq!(changes.breaking, Vec::<String>::new());
    changes.additive
}

#[test]
fn removed_or_renamed_names_break() {
    let old = past(|m| {
        let kill = m.tools.remove("proc_kill").unwrap();
        m.tools.insert("proc_stop".into(), kill);
        let load = m.resources.remove("surface://cells/load").unwrap();
        m.resources.insert("surface://cells/loadavg".into(), load);
        let t = m
            .templates
            .remove("surface://collections/processes/{id}")
            .unwrap();
        m.templates.insert("surface://collections/procs/{id}".into(), t);
    });
    assert_eq!(
        breaking(&old),
        [
            "tool \"proc_stop\" was removed (or renamed)",
            "resource \"surface://cells/loadavg\" was removed (or renamed)",
            "template \"surface://collections/procs/{id}\" was removed (or renamed)",
        ]
    );
    // Seen the other way round, the same edit only adds.
    let changes = Manifest::compare(&Manifest::of(&served()), &old);
    assert!(
        changes
            .additive
            .contains(&"tool \"proc_stop\" was added".to_owned())
    );
}

#[test]
fn a_new_required_field_or_a_narrowed_type_breaks() {
    // Then, `count` took no `state` (nor `running`), and `proc_kill` took its pid as any number.
    let old = past(|m| {
        let count = m.tools.get_mut("count").unwrap();
        count["inputSchema"]["properties"] = json!({});
        let kill = m.tools.get_mut("proc_kill").unwrap();
        kill["inputSchema"]["properties"]["pid"] = json!({"type": "number"});
        let spawn = m.tools.get_mut("proc_spawn").unwrap();
        spawn["inputSchema"]["required"] = json!([]);
    });
    assert_eq!(
        breaking(&old),
        [
            "tool \"proc_kill\": input field `pid` type narrowed from number to integer",
            "tool \"proc_kill\": input field `pid` gained `minimum: 0`",
            "tool \"proc_spawn\": input field `name` became required",
        ]
    );
    assert_eq!(
        Manifest::compare(&old, &Manifest::of(&served())).additive,
        [
            "tool \"count\": optional input field `running` was added",
            "tool \"count\": optional input field `state` was added",
            "tool \"proc_kill\": input field `pid` changed its description"
        ]
    );
    // Now, `count` requires a `state` it never took.
    let old = past(|m| m.tools.get_mut("count").unwrap()["inputSchema"]["properties"] = json!({}));
    let mut live = Manifest::of(&served());
    live.tools.get_mut("count").unwrap()["inputSchema"]["required"] = json!(["state"]);
    assert_eq!(
        Manifest::compare(&old, &live).breaking,
        ["tool \"count\": required input field `state` was added"]
    );
}

#[test]
fn a_read_only_tool_turned_mutating_breaks() {
    let old = past(|m| {
        let spawn = m.tools.get_mut("proc_spawn").unwrap();
        spawn["annotations"] = json!({"readOnlyHint": true, "destructiveHint": false});
        let kill = m.tools.get_mut("proc_kill").unwrap();
        kill["inputSchema"]["properties"]["pid"]["enum"] = json!([1, 2]);
    });
    assert_eq!(
        breaking(&old),
        ["tool \"proc_spawn\" was read-only and now mutates"]
    );
    assert_eq!(
        Manifest::compare(&old, &Manifest::of(&served())).additive,
        ["tool \"proc_kill\": input field `pid` no longer restricted to listed values"]
    );
}

#[test]
fn a_narrowed_scope_breaks_and_a_widened_one_adds() {
    let live = Manifest::of(&served());
    assert_eq!(live.tools["proc_kill"]["scope"], "ops.admin");
    assert_eq!(live.resources["surface://cells/load"]["scope"], "ops.read");
    assert_eq!(live.scopes["ops.read"], json!({"impliedBy": ["ops.admin"]}));
    let old = past(|m| {
        // Before: proc_kill needed only ops.read, load needed nothing, count needed ops.admin.
        m.tools.get_mut("proc_kill").unwrap()["scope"] = json!("ops.read");
        m.resources
            .get_mut("surface://cells/load")
            .unwrap()
            .as_object_mut()
            .unwrap()
            .remove("scope");
        m.tools.get_mut("count").unwrap()["scope"] = json!("ops.admin");
    });
    let changes = Manifest::compare(&old, &live);
    assert_eq!(
        changes.breaking,
        [
            "tool \"proc_kill\": its scope narrowed from ops.read to ops.admin (a caller holding ops.read no longer reaches it)",
            "resource \"surface://cells/load\" now needs the scope ops.read",
        ]
    );
    assert_eq!(
        changes.additive,
        ["tool \"count\": its scope widened from ops.admin to ops.read"]
    );
    // A broader scope that no longer implies a narrower one narrows every exposure needing it.
    let old = past(|m| {
        m.scopes
            .insert("ops.read".into(), json!({"impliedBy": ["ops.admin", "ops.root"]}));
    });
    let lost = breaking(&old);
    assert!(
        lost.contains(&"tool \"count\": its scope narrowed from ops.read to ops.read (a caller holding ops.root no longer reaches it)".to_owned()),
        "{lost:?}"
    );
}

#[test]
fn widening_and_new_names_only_add() {
    let old = past(|m| {
        m.tools.remove("count");
        m.resources.remove("surface://streams/log");
        let kill = m.tools.get_mut("proc_kill").unwrap();
        kill["inputSchema"]["properties"]["pid"]["minimum"] = json!(1);
        kill["description"] = json!("Kill.");
    });
    assert_eq!(
        additive(&old),
        [
            "tool \"proc_kill\": its description changed",
            "tool \"proc_kill\": input field `pid` `minimum` moved from 1 to 0",
            "tool \"count\" was added",
            "resource \"surface://streams/log\" was added",
        ]
    );
}

#[test]
fn the_command_writes_then_checks_and_fails_on_a_break() {
    let dir = std::env::temp_dir().join(format!("surface-contract-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("face.json");
    let run = |args: &[&str]| contract::command(&served(), args.iter().map(|a| a.to_string()), &path);
    assert!(run(&["write"]).0);
    assert_eq!(
        run(&["check"]),
        (
            true,
            format!("surface-contract: the live face matches {}\n", path.display())
        )
    );
    let mut tampered = Manifest::read(&path).unwrap();
    tampered
        .tools
        .insert("proc_renice".into(), json!({"inputSchema": {"type": "object"}}));
    tampered.tools.remove("count");
    tampered.write(&path).unwrap();
    let (ok, text) = run(&["check"]);
    assert!(!ok, "{text}");
    assert!(
        text.contains("breaking: tool \"proc_renice\" was removed (or renamed)"),
        "{text}"
    );
    assert!(text.contains("additive: tool \"count\" was added"), "{text}");
    match contract::check(&served(), &path) {
        Err(ContractError::Breaking(changes)) => assert_eq!(changes.breaking.len(), 1),
        other => panic!("{other:?}"),
    }
    let (ok, usage) = run(&["verify"]);
    assert!(!ok && usage.starts_with("usage: contract check|write"), "{usage}");
    std::fs::remove_dir_all(&dir).unwrap();
}

/// A file that is JSON but not a manifest (`null`, `[]`, `5`, `"str"`, `{}`, a section that is
/// not an object) fails the gate with one sentence naming the file, as a missing or truncated
/// one does: it must not pass as a face with nothing to break.
#[test]
fn a_file_that_is_not_a_manifest_fails_the_gate() {
    let dir = std::env::temp_dir().join(format!("surface-contract-corrupt-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("face.json");
    for (text, why) in [
        ("null", "the manifest is null, not an object"),
        ("[]", "the manifest is an array, not an object"),
        ("5", "the manifest is a number, not an object"),
        ("\"str\"", "the manifest is a string, not an object"),
        ("{}", "the manifest has no `tools` object"),
        (
            r#"{"format":"surface-contract/1","tools":{},"resources":[],"templates":{}}"#,
            "the manifest's `resources` is an array, not an object",
        ),
        ("{\"tools\":", "the manifest is not JSON"),
    ] {
        std::fs::write(&path, text).unwrap();
        let (ok, out) = contract::command(&served(), ["check".to_owned()], &path);
        assert!(!ok, "{text} passed: {out}");
        assert!(
            out.starts_with(&format!("surface-contract: {}: {why}", path.display())),
            "{text}: {out}"
        );
        assert_eq!(out.lines().count(), 1, "one sentence: {out}");
        assert!(matches!(
            contract::check(&served(), &path),
            Err(ContractError::Manifest(_))
        ));
    }
    std::fs::remove_dir_all(&dir).unwrap();
}
