//! The floor: the same three tools behind a bare newline-delimited JSON-RPC loop on one
//! thread (serde_json and a buffered writer, no MCP framework). Nothing a user should ship —
//! no lifecycle, cancellation or schemas — it shows what the pipe and JSON alone cost.

#[path = "table.rs"]
mod table;

use serde::Deserialize;
use serde_json::value::RawValue;
use serde_json::{Value, json};
use std::io::{BufRead, BufWriter, Write};
use table::{Kill, Spawn, Table};

#[derive(Deserialize)]
struct Request<'a> {
    #[serde(borrow)]
    id: Option<&'a RawValue>,
    method: &'a str,
    #[serde(default)]
    params: Option<Params>,
}

#[derive(Deserialize)]
struct Params {
    name: Option<String>,
    arguments: Option<Value>,
}

fn structured(v: Value) -> Value {
    json!({"content": [{"type": "text", "text": serde_json::to_string_pretty(&v).unwrap()}], "structuredContent": v, "isError": false})
}

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
        let result = match req.method {
            "initialize" => {
                json!({"protocolVersion": "2025-11-25", "capabilities": {"tools": {}}, "serverInfo": {"name": "ops", "version": "0.1.0"}})
            }
            "tools/call" => {
                let p = req.params.unwrap_or(Params {
                    name: None,
                    arguments: None,
                });
                let args = p.arguments.unwrap_or(Value::Null);
                match p.name.as_deref() {
                    Some("load_sample") => structured(serde_json::to_value(table.sample()).unwrap()),
                    Some("proc_spawn") => match serde_json::from_value::<Spawn>(args) {
                        Ok(s) => structured(serde_json::to_value(table.spawn(s.name)).unwrap()),
                        Err(e) => {
                            json!({"content": [{"type": "text", "text": e.to_string()}], "isError": true})
                        }
                    },
                    Some("proc_kill") => match serde_json::from_value::<Kill>(args)
                        .map_err(|e| e.to_string())
                        .and_then(|k| table.kill(k.pid))
                    {
                        Ok(k) => structured(serde_json::to_value(k).unwrap()),
                        Err(e) => json!({"content": [{"type": "text", "text": e}], "isError": true}),
                    },
                    _ => json!({"content": [{"type": "text", "text": "unknown tool"}], "isError": true}),
                }
            }
            _ => json!({}),
        };
        let _ = write!(out, "{{\"jsonrpc\":\"2.0\",\"id\":{},\"result\":", id.get());
        let _ = serde_json::to_writer(&mut out, &result);
        let _ = out.write_all(b"}\n");
        if reader.buffer().is_empty() {
            let _ = out.flush();
        }
    }
    let _ = out.flush();
}
