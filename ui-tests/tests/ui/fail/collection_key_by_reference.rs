//! A collection keyed by a borrowed `&'static str`: one error at the key, naming `String`.
use surface::surface;

#[surface]
pub struct Ops {
    #[collection(key = &'static str)]
    pub processes: u32,
}

#[surface]
impl Ops {}

fn main() {}
