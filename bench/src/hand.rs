//! The hand-written baseline: an rmcp `ServerHandler` that calls the very same `Ops` methods
//! the `#[surface]` procedures are, parses arguments with serde, and answers in the same shape
//! (structuredContent plus the same value as pretty JSON text). No router, no schemas per call.

use crate::ops::{Kill, Ops, Spawn};
use rmcp::model::*;
use rmcp::service::RequestContext;
use rmcp::{ErrorData, RoleServer, ServerHandler};
use serde_json::Value;
use std::sync::Arc;

#[derive(Clone)]
pub struct Hand {
    pub ops: Arc<Ops>,
    /// The tools/list answer, built once.
    pub tools: Arc<Vec<Tool>>,
    /// Rebuild every tool and its schema on each tools/list, as rmcp's default
    /// `#[tool_handler]` (`Self::tool_router()` per call) does.
    pub recompute: Option<usize>,
}

impl Hand {
    pub fn new(ops: Arc<Ops>) -> Hand {
        Hand {
            ops,
            tools: Arc::new(Vec::new()),
            recompute: None,
        }
    }
}

fn answer(v: Value) -> CallToolResponse {
    let text = serde_json::to_string_pretty(&v).unwrap_or_default();
    let mut r = CallToolResult::success(vec![ContentBlock::text(text)]);
    r.structured_content = Some(v);
    r.into()
}

fn args<T: serde::de::DeserializeOwned>(a: Option<JsonObject>) -> Result<T, ErrorData> {
    serde_json::from_value(Value::Object(a.unwrap_or_default()))
        .map_err(|e| ErrorData::invalid_params(format!("invalid arguments: {e}"), None))
}

/// The ops tools, schemas computed now (what a per-request router rebuild costs).
pub fn build_tools(copies: usize) -> Vec<Tool> {
    let schema = |v: schemars::Schema| -> Arc<JsonObject> {
        Arc::new(serde_json::from_value(v.to_value()).unwrap_or_default())
    };
    let mut tools = Vec::with_capacity(copies * 4);
    for i in 0..copies {
        let p = if i == 0 { String::new() } else { format!("s{i}_") };
        tools.push(Tool::new(
            format!("{p}proc_spawn"),
            "Start a process.",
            schema(schemars::schema_for!(Spawn)),
        ));
        tools.push(Tool::new(
            format!("{p}proc_kill"),
            "Stop a process.",
            schema(schemars::schema_for!(Kill)),
        ));
        tools.push(Tool::new(
            format!("{p}load_sample"),
            "The current load.",
            schema(schemars::schema_for!(())),
        ));
        tools.push(Tool::new(
            format!("{p}count"),
            "Count processes, optionally only those in one state.",
            schema(schemars::schema_for!(crate::ops::CountArgs)),
        ));
    }
    tools
}

impl ServerHandler for Hand {
    fn get_info(&self) -> ServerConfig {
        let caps = ServerCapabilities::builder()
            .enable_tools()
            .enable_resources()
            .build();
        ServerConfig::new(caps).with_server_info(Implementation::new("ops", "0.1.0"))
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        let to = |v: Result<Value, serde_json::Error>| {
            v.map_err(|e| ErrorData::internal_error(e.to_string(), None))
        };
        match request.name.as_ref() {
            "load_sample" => Ok(answer(to(serde_json::to_value(
                self.ops.sample().await.unwrap(),
            ))?)),
            "proc_spawn" => {
                let input: Spawn = args(request.arguments)?;
                Ok(answer(to(serde_json::to_value(
                    self.ops.spawn(input).await.unwrap(),
                ))?))
            }
            "proc_kill" => {
                let input: Kill = args(request.arguments)?;
                match self.ops.kill(input).await {
                    Ok(k) => Ok(answer(to(serde_json::to_value(k))?)),
                    Err(f) => {
                        Ok(CallToolResult::error(vec![ContentBlock::text(f.message().to_owned())]).into())
                    }
                }
            }
            other => Err(ErrorData::invalid_params(
                format!("unknown tool \"{other}\""),
                None,
            )),
        }
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        Ok(ListToolsResult::with_all_items(match self.recompute {
            Some(copies) => build_tools(copies),
            None => self.tools.to_vec(),
        }))
    }

    async fn read_resource(
        &self,
        request: ReadResourceRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<ReadResourceResponse, ErrorData> {
        let uri = request.uri;
        let value = if uri == "surface://collections/processes" {
            serde_json::to_value(self.ops.processes.keys())
        } else if let Some(id) = uri.strip_prefix("surface://collections/processes/") {
            let pid: u32 = id
                .parse()
                .map_err(|_| ErrorData::resource_not_found("no such item", None))?;
            match self.ops.processes.get(&pid) {
                Some(p) => serde_json::to_value(p),
                None => return Err(ErrorData::resource_not_found("no such item", None)),
            }
        } else {
            return Err(ErrorData::resource_not_found("unknown resource", None));
        }
        .map_err(|e| ErrorData::internal_error(e.to_string(), None))?;
        let text = serde_json::to_string_pretty(&value).unwrap_or_default();
        Ok(ReadResourceResult::new(vec![
            ResourceContents::text(text, uri).with_mime_type("application/json"),
        ])
        .into())
    }
}
