//! What the floors (`floor.rs` and `floor_typed.rs` on stdio, `floor_http.rs`) share: the
//! JSON-RPC request they read, the tools' calls and the result each method answers, over the
//! process table of `table.rs`, and the stdio loop.

// Shared by three binaries, each using part of it.
#![allow(dead_code)]

use super::table::{Kill, Spawn, Table};
use serde::Deserialize;
use serde_json::value::RawValue;
use serde_json::{Value, json};
use std::io::{BufRead, BufWriter, Write};

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
            call(table, p.name.as_deref(), p.arguments, structured, failed)
        }
        _ => json!({}),
    }
}

/// A call of tool `name` with `arguments`: its output given to `structured`, or its failure's
/// text to `failed` (each floor builds its answer its own way).
pub fn call<R>(
    table: &Table,
    name: Option<&str>,
    arguments: Option<Value>,
    structured: impl FnOnce(Value) -> R,
    failed: impl FnOnce(String) -> R,
) -> R {
    let args = arguments.unwrap_or(Value::Null);
    match name {
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

/// Serves stdin's lines on stdout: each line (its newline included) given to `answer` with
/// the buffered output, which is flushed whenever no more input is buffered.
pub fn serve_lines(mut answer: impl FnMut(&[u8], &mut BufWriter<std::io::StdoutLock<'static>>)) {
    let stdin = std::io::stdin().lock();
    let mut out = BufWriter::with_capacity(64 * 1024, std::io::stdout().lock());
    let mut reader = std::io::BufReader::with_capacity(64 * 1024, stdin);
    let mut line = Vec::new();
    loop {
        line.clear();
        if reader.read_until(b'\n', &mut line).unwrap_or(0) == 0 {
            break;
        }
        answer(&line, &mut out);
        if reader.buffer().is_empty() {
            let _ = out.flush();
        }
    }
    let _ = out.flush();
}
