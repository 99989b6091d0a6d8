//! The floor: the same three tools behind a bare newline-delimited JSON-RPC loop on one
//! thread (serde_json and a buffered writer, no MCP framework). Nothing a user should ship —
//! no lifecycle, cancellation or schemas — it shows what the pipe and JSON alone cost.

#[path = "table.rs"]
mod table;

#[path = "floor_calls.rs"]
mod floor_calls;

use floor_calls::{Request, result};
use std::io::{BufRead, BufWriter, Write};
use table::Table;

fn main() {
    let table = Table::new();
    let stdin = std::io::stdin().lock();
    let mut out = BufWriter::with_capacity(64 * 1024, std::io::stdout().lock());
    let mut reader = std::io::BufReader::with_capacity(64 * 1024, stdin);
    let mut line = Vec::new();
    loop {
        line.clear();
        if reader.read_until(b'\n', &mut line).unwrap_or(0) == 0 {
            break;
        }
        let Ok(req) = serde_json::from_slice::<Request>(&line) else {
            continue;
        };
        let Some(id) = req.id else { continue };
        let result = result(&table, req.method, req.params);
        let _ = write!(out, "{{\"jsonrpc\":\"2.0\",\"id\":{},\"result\":", id.get());
        let _ = serde_json::to_writer(&mut out, &result);
        let _ = out.write_all(b"}\n");
        if reader.buffer().is_empty() {
            let _ = out.flush();
        }
    }
    let _ = out.flush();
}
