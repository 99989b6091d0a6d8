//! `#[cell(key = …)]`: a cell takes no key.
use surface::surface;

#[surface]
pub struct Ops {
    #[cell(key = u32)]
    pub load: u32,
}

#[surface]
impl Ops {}

fn main() {
    let ops = Ops { load: surface::Cell::new(1) };
    let _ = ops.load.get();
}
