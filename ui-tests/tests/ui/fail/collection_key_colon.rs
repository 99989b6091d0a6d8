//! `#[collection(key: u32)]`: the error says `key = u32`, and the key is read as such.
use surface::surface;

#[surface]
pub struct Ops {
    #[collection(key: u32)]
    pub processes: String,
}

#[surface]
impl Ops {}

fn main() {
    let ops = Ops { processes: surface::Collection::new() };
    ops.processes.upsert(1, "init".into());
}
