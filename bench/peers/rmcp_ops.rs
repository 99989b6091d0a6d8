//! The ops tools written by hand on rmcp, tuned the way its docs allow: the router built once
//! and kept in the handler (`#[tool_handler(router = self.tool_router)]`). The stdio peers
//! (`rmcp_tuned.rs`, `rmcp_fast.rs`) and the HTTP peer (`rmcp_http.rs`) serve this one handler.

use crate::table::{Kill, Killed, Load, Process, Spawn, Table};
use rmcp::handler::server::router::tool::ToolRouter;
use rmcp::handler::server::wrapper::{Json, Parameters};
use rmcp::{ServerHandler, tool, tool_handler, tool_router};
use std::sync::Arc;

#[derive(Clone)]
pub struct Ops {
    table: Arc<Table>,
    tool_router: ToolRouter<Self>,
}

#[tool_router]
impl Ops {
    pub fn new() -> Self {
        Ops {
            table: Arc::new(Table::new()),
            tool_router: Self::tool_router(),
        }
    }

    /// Start a process.
    #[tool(
        name = "proc_spawn",
        annotations(read_only_hint = false, destructive_hint = true)
    )]
    async fn proc_spawn(&self, Parameters(input): Parameters<Spawn>) -> Json<Process> {
        Json(self.table.spawn(input.name))
    }

    /// Stop a process.
    #[tool(
        name = "proc_kill",
        annotations(read_only_hint = false, destructive_hint = true)
    )]
    async fn proc_kill(&self, Parameters(input): Parameters<Kill>) -> Result<Json<Killed>, String> {
        self.table.kill(input.pid).map(Json)
    }

    /// The current load.
    #[tool(
        name = "load_sample",
        annotations(read_only_hint = true, destructive_hint = false)
    )]
    async fn load_sample(&self) -> Json<Load> {
        Json(self.table.sample())
    }
}

#[tool_handler(router = self.tool_router, name = "ops", version = "0.1.0", instructions = "Everything here is about processes, not files.")]
impl ServerHandler for Ops {}
