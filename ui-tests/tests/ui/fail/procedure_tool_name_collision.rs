//! Two procedures whose tool names (namespace and verb joined by `_`) are the same.
use std::convert::Infallible;
use surface::{Expose, expose, surface};

#[surface]
pub struct Ops {
    #[cell]
    pub load: u32,
}

#[surface]
impl Ops {
    #[procedure("proc_kill.all")]
    async fn kill_all(&self) -> Result<u32, Infallible> {
        Ok(0)
    }

    #[procedure("proc.kill_all")]
    async fn kill_every(&self) -> Result<u32, Infallible> {
        Ok(0)
    }
}

const EXPOSE: Expose<Ops> = expose!(Ops { "proc.kill_all": tool });

fn main() {
    let _ = EXPOSE;
}
