//! The floor: the same three tools behind a bare newline-delimited JSON-RPC loop on one
//! thread (serde_json and a buffered writer, no MCP framework). Nothing a user should ship —
//! no lifecycle, cancellation or schemas — it shows what the pipe and JSON alone cost.

#[path = "table.rs"]
mod table;

#[path = "floor_calls.rs"]
mod floor_calls;

use floor_calls::{Request, result, serve_lines};
use std::io::Write;
use table::Table;

fn main() {
    let table = Table::new();
    serve_lines(|line, out| {
        let Ok(req) = serde_json::from_slice::<Request>(line) else {
            return;
        };
        let Some(id) = req.id else { return };
        let result = result(&table, req.method, req.params);
        let _ = write!(out, "{{\"jsonrpc\":\"2.0\",\"id\":{},\"result\":", id.get());
        let _ = serde_json::to_writer(&mut *out, &result);
        let _ = out.write_all(b"}\n");
    });
}
