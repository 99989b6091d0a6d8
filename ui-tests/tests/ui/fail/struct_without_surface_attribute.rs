//! `#[surface]` on the impl block but not on the struct: the error says to add it.
use std::convert::Infallible;
use surface::{Expose, expose, surface};

pub struct Ops {
    pub load: u32,
}

#[surface]
impl Ops {
    #[procedure("load.get")]
    async fn get(&self) -> Result<u32, Infallible> {
        Ok(self.load)
    }
}

const EXPOSE: Expose<Ops> = expose!(Ops { "load.get": tool });

fn main() {
    let _ = EXPOSE;
}
