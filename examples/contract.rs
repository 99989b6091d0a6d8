//! The contract gate of `examples/ops.rs`: `cargo run --example contract -- check` compares the
//! MCP face the ops server advertises with `examples/ops.contract.json` and fails on a breaking
//! change (printing additive ones); `-- write` records the face as the new manifest;
//! `-- server-json` prints the official MCP registry's `server.json` for ops, generated from
//! that manifest.

#[allow(dead_code)]
#[path = "ops.rs"]
mod ops;

use std::path::Path;
use std::sync::Arc;
use surface::mcp::contract::Manifest;
use surface::mcp::registry::{RegistryEntry, server_json};

fn main() {
    let manifest = Path::new(env!("CARGO_MANIFEST_DIR")).join("examples/ops.contract.json");
    let args: Vec<String> = std::env::args().skip(1).collect();
    if args.first().map(String::as_str) == Some("server-json") {
        let path = args.get(1).map_or(manifest.as_path(), |p| Path::new(p));
        let entry = RegistryEntry::new(
            "io.github.mcp-surface/ops",
            "Inspect a machine's load and processes; spawn, kill and wait for processes",
            env!("CARGO_PKG_VERSION"),
        )
        .title("ops")
        .crate_name("mcp-surface");
        match Manifest::read(path).and_then(|m| server_json(&m, &entry)) {
            Ok(json) => println!("{}", serde_json::to_string_pretty(&json).expect("a JSON value")),
            Err(e) => {
                eprintln!("surface-contract: {e}");
                std::process::exit(1);
            }
        }
        return;
    }
    let served = ops::mcp_server(Arc::new(ops::Ops::new()))
        .start()
        .unwrap_or_else(|e| panic!("{e}"));
    let (ok, text) = surface::mcp::contract::command(&served, args, &manifest);
    print!("{text}");
    std::process::exit(if ok { 0 } else { 1 });
}
