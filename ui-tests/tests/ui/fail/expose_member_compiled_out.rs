//! An expose key naming a member `#[cfg]` leaves out: the error says so.
use surface::{Expose, expose, surface};

#[surface]
pub struct Ops {
    #[cell]
    pub load: u32,
    #[cfg(any())]
    #[cell]
    pub debug: u32,
}

#[surface]
impl Ops {}

const EXPOSE: Expose<Ops> = expose!(Ops { load: resource, debug: resource });

fn main() {
    let _ = EXPOSE;
}
