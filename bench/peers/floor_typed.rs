//! The floor with rmcp's model types: `floor.rs`'s loop, but each line read as surface reads
//! it (`decode_line`, into rmcp's `ClientJsonRpcMessage`) and each call answered as rmcp's
//! `CallToolResult` inside a `ServerJsonRpcMessage`, serialized by rmcp's own `Serialize`. No
//! dispatch, session, context, cancellation or metrics: beside `floor`, it shows what rmcp's
//! types alone cost per call, the part of surface's instructions that any server keeping
//! them pays. Not an MCP server either (no lifecycle, no checks).

#[path = "table.rs"]
mod table;

#[path = "floor_calls.rs"]
mod floor_calls;

use floor_calls::{call, serve_lines};
use rmcp::model::{
    CallToolRequestParams, CallToolResult, ClientRequest, ContentBlock, JsonRpcMessage, ServerJsonRpcMessage,
    ServerResult,
};
use serde_json::Value;
use std::io::Write;
use surface::mcp::__transport::{Decoded, decode_line};
use table::Table;

/// What `initialize` is answered with (once per connection: not what is measured).
const INITIALIZED: &str = r#"{"protocolVersion":"2025-11-25","capabilities":{"tools":{}},"serverInfo":{"name":"ops","version":"0.1.0"}}"#;

fn main() {
    let table = Table::new();
    serve_lines(|line, out| {
        let text = line.strip_suffix(b"\n").unwrap_or(line);
        let decoded = match decode_line(text) {
            // Unboxed here, as the transport unboxes a request it hands on.
            Decoded::Message(message) => Ok(*message),
            other => Err(other),
        };
        match decoded {
            Ok(JsonRpcMessage::Request(request)) => {
                let id = request.id;
                if let ClientRequest::InitializeRequest(_) = request.request {
                    let _ = write!(out, "{{\"jsonrpc\":\"2.0\",\"id\":");
                    let _ = serde_json::to_writer(&mut *out, &id);
                    let _ = writeln!(out, ",\"result\":{INITIALIZED}}}");
                    return;
                }
                let mut result = match request.request {
                    ClientRequest::CallToolRequest(request) => {
                        ServerResult::CallToolResult(call_tool(&table, request.params))
                    }
                    _ => ServerResult::empty(()),
                };
                // As rmcp's dispatch leaves a legacy session's result.
                result.strip_result_type_for_legacy_peer();
                result.strip_non_object_output_for_legacy_peer();
                let _ = serde_json::to_writer(&mut *out, &ServerJsonRpcMessage::response(result, id));
                let _ = out.write_all(b"\n");
            }
            Err(Decoded::Refuse(answer)) => {
                let _ = out.write_all(&answer);
            }
            Ok(_) | Err(_) => {}
        }
    });
}

/// A call of one of the three tools, answered as rmcp's `CallToolResult`.
fn call_tool(table: &Table, params: CallToolRequestParams) -> CallToolResult {
    let arguments = params.arguments.map(Value::Object);
    call(table, Some(params.name.as_ref()), arguments, structured, |text| {
        CallToolResult::error(vec![ContentBlock::text(text)])
    })
}

fn structured(v: Value) -> CallToolResult {
    let mut r = CallToolResult::success(vec![ContentBlock::text(
        serde_json::to_string_pretty(&v).unwrap(),
    )]);
    r.structured_content = Some(v);
    r
}
