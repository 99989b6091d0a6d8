//! A bespoke tool whose name is over the 64 characters MCP clients accept.
use surface::{surface, tool};

#[surface]
pub struct Ops {
    #[cell]
    pub load: u32,
}

#[surface]
impl Ops {}

/// Counts.
#[tool(read_only)]
async fn count_every_process_that_is_still_running_on_this_machine_right_now(
    client: &OpsClient,
) -> Result<u32, surface::Failure> {
    client.load().get().await
}

fn main() {
    let _ = CountEveryProcessThatIsStillRunningOnThisMachineRightNowTool;
}
