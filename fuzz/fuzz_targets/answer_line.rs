//! A tool's answer as the hand-written writer puts it on the wire: for any text block, any
//! structured value and either kind of id, `write_message` writes exactly the bytes serde
//! writes for rmcp's own types.
#![no_main]

use libfuzzer_sys::fuzz_target;
use rmcp::model::{CallToolResult, ContentBlock, RequestId, ServerJsonRpcMessage, ServerResult};
use serde_json::Value;
use surface_runtime::mcp::__transport::write_message;

fuzz_target!(|data: &[u8]| {
    let text = String::from_utf8_lossy(data).into_owned();
    let id = match data.first() {
        Some(b) if b % 2 == 0 => RequestId::Number(i64::from(*b) * -7_000_000_000),
        _ => RequestId::String(text.clone().into()),
    };
    let mut result = CallToolResult::success(vec![ContentBlock::text(text.clone()), ContentBlock::text("")]);
    result.structured_content = serde_json::from_slice::<Value>(data).ok();
    if data.len() % 3 == 0 {
        result.is_error = Some(true);
        result.result_type = None;
    }
    let message = ServerJsonRpcMessage::response(ServerResult::CallToolResult(result), id);
    let mut ours = Vec::new();
    write_message(&message, &mut ours).expect("an answer is written");
    let serde = serde_json::to_vec(&message).expect("an answer serializes");
    assert_eq!(String::from_utf8_lossy(&ours), String::from_utf8_lossy(&serde));
});
