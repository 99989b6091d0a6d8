//! `#[surface]` on the struct but not on the impl block that declares procedures. Not one
//! error, and cannot be: no macro runs on the impl, so rustc reports its `#[procedure]`
//! attribute itself; the struct's `#[surface]` says the impl block needs it too, and so does
//! the `expose!` naming the surface (its keys need both halves; a check that passed there
//! would pass a surface missing its procedures).
use std::convert::Infallible;
use surface::{Expose, expose, surface};

#[surface]
pub struct Ops {
    #[cell]
    pub load: u32,
}

impl Ops {
    #[procedure("load.get")]
    async fn get(&self) -> Result<u32, Infallible> {
        Ok(self.load.get())
    }
}

const EXPOSE: Expose<Ops> = expose!(Ops { "load.get": tool });

fn main() {
    let _ = EXPOSE;
}
