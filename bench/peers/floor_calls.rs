//! What both floors (`floor.rs` on stdio, `floor_http.rs`) share: the JSON-RPC request they
//! read and the result each method answers, over the process table of `table.rs`.

use super::table::{Kill, Spawn, Table};
use serde::Deserialize;
use serde_json::value::RawValue;
use serde_json::{Value, json};

/// One JSON-RPC message, its id kept as written.
#[derive(Deserialize)]
pub struct Request<'a> {
    #[serde(borrow)]
    pub id: Option<&'a RawValue>,
    pub method: &'a str,
    #[serde(default)]
    pub params: Option<Params>,
}

/// A `tools/call`'s parameters (other methods' are ignored).
#[derive(Deserialize)]
pub struct Params {
    name: Option<String>,
    arguments: Option<Value>,
}

fn structured(v: Value) -> Value {
    json!({"content": [{"type": "text", "text": serde_json::to_string_pretty(&v).unwrap()}], "structuredContent": v, "isError": false})
}

fn failed(text: String) -> Value {
    json!({"content": [{"type": "text", "text": text}], "isError": true})
}

/// The result of `method`: `initialize`, a `tools/call` of one of the three tools, `{}` for
/// anything else.
pub fn result(table: &Table, method: &str, params: Option<Params>) -> Value {
    match method {
        "initialize" => {
            json!({"protocolVersion": "2025-11-25", "capabilities": {"tools": {}}, "serverInfo": {"name": "ops", "version": "0.1.0"}})
        }
        "tools/call" => {
            let p = params.unwrap_or(Params {
                name: None,
                arguments: None,
            });
            let args = p.arguments.unwrap_or(Value::Null);
            match p.name.as_deref() {
                Some("load_sample") => structured(serde_json::to_value(table.sample()).unwrap()),
                Some("proc_spawn") => match serde_json::from_value::<Spawn>(args) {
                    Ok(s) => structured(serde_json::to_value(table.spawn(s.name)).unwrap()),
                    Err(e) => failed(e.to_string()),
                },
                Some("proc_kill") => match serde_json::from_value::<Kill>(args)
                    .map_err(|e| e.to_string())
                    .and_then(|k| table.kill(k.pid))
                {
                    Ok(k) => structured(serde_json::to_value(k).unwrap()),
                    Err(e) => failed(e),
                },
                _ => failed("unknown tool".into()),
            }
        }
        _ => json!({}),
    }
}
