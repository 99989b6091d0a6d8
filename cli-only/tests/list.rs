//! `tallyctl list`: the roster's tools and members, and with `--json` its prompts and views
//! too, which the argv face names but does not render.

use serde_json::{Value, json};
use std::process::Command;

fn list(args: &[&str]) -> Value {
    let out = Command::new(env!("CARGO_BIN_EXE_tallyctl"))
        .arg("list")
        .args(args)
        .output()
        .expect("tallyctl runs");
    assert!(out.status.success(), "{out:?}");
    serde_json::from_slice(&out.stdout).expect("list prints JSON")
}

#[test]
fn list_names_the_tools_and_members() {
    let names: Vec<(String, String)> = list(&[])
        .as_array()
        .unwrap()
        .iter()
        .map(|r| {
            (
                r["name"].as_str().unwrap().into(),
                r["kind"].as_str().unwrap().into(),
            )
        })
        .collect();
    let expect = [
        ("count_up", "tool"),
        ("a_ops_run", "tool"),
        ("keys_list", "tool"),
        ("count", "cell"),
        ("a/entries", "cell"),
    ];
    assert_eq!(names, expect.map(|(n, k)| (n.to_owned(), k.to_owned())));
}

#[test]
fn list_json_names_the_root_prompt_and_the_declared_view() {
    let whole = list(&["--json"]);
    assert_eq!(
        whole["prompts"],
        json!([{"name": "read_tally", "description": "How to read the tally."}])
    );
    assert_eq!(
        whole["views"],
        json!([{"uri": "ui://tally/panel", "name": "panel"}])
    );
}
