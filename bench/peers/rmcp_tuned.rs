//! The ops tools written by hand on rmcp, tuned the way its docs allow: the router built once
//! and kept in the handler (`#[tool_handler(router = self.tool_router)]`), and the non-blocking
//! `transport::stdio_pipes()` instead of `stdio()`. The honest baseline surface must match.

#[path = "rmcp_ops.rs"]
mod rmcp_ops;
#[path = "table.rs"]
mod table;

use rmcp::ServiceExt;

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    rmcp_ops::Ops::new()
        .serve(rmcp::transport::stdio_pipes())
        .await?
        .waiting()
        .await?;
    Ok(())
}
