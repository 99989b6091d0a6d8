//! The contract gate of `examples/ops.rs`: `cargo run --example contract -- check` compares the
//! MCP face the ops server advertises with `examples/ops.contract.json` and fails on a breaking
//! change (printing additive ones); `-- write` records the face as the new manifest.

#[allow(dead_code)]
#[path = "ops.rs"]
mod ops;

use std::path::Path;
use std::sync::Arc;

fn main() {
    let served = ops::mcp_server(Arc::new(ops::Ops::new()))
        .start()
        .unwrap_or_else(|e| panic!("{e}"));
    let manifest = Path::new(env!("CARGO_MANIFEST_DIR")).join("examples/ops.contract.json");
    let (ok, text) = surface::mcp::contract::command(&served, std::env::args().skip(1), &manifest);
    print!("{text}");
    std::process::exit(if ok { 0 } else { 1 });
}
