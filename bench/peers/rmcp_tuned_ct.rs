//! Tuned rmcp ([`rmcp_tuned.rs`](rmcp_tuned.rs)) on a current-thread runtime: the baseline
//! for surface served on one thread.

#[path = "rmcp_ops.rs"]
mod rmcp_ops;
#[path = "table.rs"]
mod table;

use rmcp::ServiceExt;

#[tokio::main(flavor = "current_thread")]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    rmcp_ops::Ops::new()
        .serve(rmcp::transport::stdio_pipes())
        .await?
        .waiting()
        .await?;
    Ok(())
}
