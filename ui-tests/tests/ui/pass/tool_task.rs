//! `#[tool(task)]` and `#[tool(task = required)]` reach the tool's descriptor.
use surface::{BespokeTool, CancellationToken, TaskSupport, surface, tool};

#[surface]
pub struct Ops {
    #[cell]
    pub load: u32,
}

#[surface]
impl Ops {}

/// Rebuilds; long, so a task when the client supports them.
#[tool(task)]
async fn rebuild(client: &OpsClient, _cancel: CancellationToken) -> Result<(), surface::Failure> {
    client.load().set(&0).await
}

/// Migrates; only ever as a task.
#[tool(mutates, task = required)]
async fn migrate(client: &OpsClient, _cancel: CancellationToken) -> Result<(), surface::Failure> {
    client.load().set(&1).await
}

/// Reads at once.
#[tool(read_only)]
async fn peek(client: &OpsClient, _cancel: CancellationToken) -> Result<u32, surface::Failure> {
    client.load().get().await
}

fn main() {
    assert_eq!(RebuildTool.descriptor().task, TaskSupport::Optional);
    assert_eq!(MigrateTool.descriptor().task, TaskSupport::Required);
    assert_eq!(PeekTool.descriptor().task, TaskSupport::Never);
}
