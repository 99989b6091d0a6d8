//! Bundles the benchmarks share.

use crate::ops::{CountTool, EXPOSE, Ops, OpsClient};
use std::sync::Arc;
use surface::mcp::{BundleClient, McpServer, Member, ServedMcp, Siblings};

/// Ops as the core plus 249 siblings, each with the 3 exposed procedures and `count`:
/// 1,000 tools.
pub fn thousand_tools(ops: Arc<Ops>) -> ServedMcp {
    let mut siblings = Siblings::new();
    for i in 1..250 {
        siblings.insert(format!("s{i}"), Member::new(EXPOSE).tool(CountTool));
    }
    McpServer::new("ops", "0.1.0")
        .core(Member::new(EXPOSE).tool(CountTool))
        .siblings(siblings)
        .client(move || {
            let client = OpsClient::direct(ops.clone());
            (1..250).fold(BundleClient::with_core(client.clone()), |b, i| {
                b.sibling(format!("s{i}"), client.clone())
            })
        })
        .start()
        .expect("the bundle composes")
}

#[derive(serde::Deserialize)]
struct ToolsList {
    result: ToolsListResult,
}
#[derive(serde::Deserialize)]
struct ToolsListResult {
    tools: Vec<rmcp::model::Tool>,
}

/// The tools of a `tools/list` answer line.
pub fn tools_of(line: &str) -> Vec<rmcp::model::Tool> {
    serde_json::from_str::<ToolsList>(line)
        .expect("a tools/list answer")
        .result
        .tools
}
