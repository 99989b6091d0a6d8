//! A refused procedure name is reported once, at the procedure, not again at its expose key.
use std::convert::Infallible;
use surface::{Expose, expose, surface};

#[surface]
pub struct Ops {
    #[cell]
    pub load: u32,
}

#[surface]
impl Ops {
    #[procedure("proc.kill-all")]
    async fn kill_all(&self) -> Result<u32, Infallible> {
        Ok(0)
    }
}

const EXPOSE: Expose<Ops> = expose!(Ops { load: resource, "proc.kill-all": tool });

fn main() {
    let _ = EXPOSE;
}
