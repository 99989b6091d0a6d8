//! A member named like a method every client has: `client.clone()` would return the member.
use surface::surface;

#[surface]
pub struct Ops {
    #[cell]
    pub clone: u32,
}

#[surface]
impl Ops {}

fn main() {
    let _ = Ops::SPEC;
}
