//! A procedure whose output borrows from `&'a self`: one error at the `&'a str`, naming the
//! owned `String` (the lifetime declared for it is not a second mistake).
use std::convert::Infallible;
use surface::surface;

#[surface]
pub struct Ops {
    #[cell]
    pub load: u32,
}

#[surface]
impl Ops {
    #[procedure("proc.name")]
    async fn name<'a>(&'a self) -> Result<&'a str, Infallible> {
        Ok("ops")
    }
}

fn main() {}
