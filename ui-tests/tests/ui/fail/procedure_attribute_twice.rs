//! `#[procedure]` twice on one method: the error says once.
use std::convert::Infallible;
use surface::{Expose, expose, surface};

#[surface]
pub struct Ops {
    #[cell]
    pub load: u32,
}

#[surface]
impl Ops {
    #[procedure("load.zero")]
    #[procedure("load.zero")]
    async fn zero(&self) -> Result<(), Infallible> {
        Ok(())
    }
}

const EXPOSE: Expose<Ops> = expose!(Ops { "load.zero": tool });

fn main() {
    let _ = EXPOSE;
}
