//! A skill over an expose map, with a key of each kind, through the map's `use` path; served
//! by a member, whose server composes.
use std::sync::Arc;
use surface::mcp::{BundleClient, McpServer, Member};
use surface::skill::Skill;
use surface::{Expose, expose, skill};
use surface_ui_tests::ops::{Ops, OpsClient};

mod map {
    use super::*;
    pub const EXPOSE: Expose<Ops> = expose!(Ops { load: resource, "proc.kill": tool(mutates) });
}

/// How to stop the busiest process.
const TRIAGE: Skill<Ops> = skill!(map::EXPOSE {
    instructions: concat!("Read the load.\n", "Then stop the busiest process."),
    uses: [load, "proc.kill"],
    description: "Find the process to stop: read the load, then stop it.",
    name: "triage-2",
});

#[tokio::main(flavor = "current_thread")]
async fn main() {
    assert_eq!(TRIAGE.name(), "triage-2");
    assert_eq!(TRIAGE.uses(), ["load", "proc.kill"]);
    assert!(TRIAGE.instructions().ends_with("busiest process."));
    let ops = Arc::new(Ops { load: surface::Cell::new(0) });
    McpServer::new("ops", "0")
        .core(Member::new(map::EXPOSE).skill(TRIAGE))
        .client(move || BundleClient::with_core(OpsClient::direct(ops.clone())))
        .start()
        .expect("composes");
}
