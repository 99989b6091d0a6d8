//! An expose key naming a plain field: the error says it is no member and lists the members.
use surface::{Expose, expose, surface};

#[surface]
pub struct Ops {
    #[cell]
    pub load: u32,
    #[cell]
    pub uptime: u64,
    next_pid: u32,
}

#[surface]
impl Ops {}

const EXPOSE: Expose<Ops> = expose!(Ops { load: resource, next_pid: resource });

fn main() {
    let _ = EXPOSE;
}
