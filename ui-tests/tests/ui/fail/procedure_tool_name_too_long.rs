//! A procedure whose tool name would be over the 64 characters MCP clients accept.
use std::convert::Infallible;
use surface::{expose, surface};

#[surface]
pub struct Ops {
    #[cell]
    pub load: u32,
}

#[surface]
impl Ops {
    #[procedure("processes_of_the_machine.terminate_every_process_that_is_still_running")]
    async fn kill_all(&self) -> Result<u32, Infallible> {
        Ok(0)
    }
}

fn main() {
    let _ = expose!(Ops { load: resource });
}
