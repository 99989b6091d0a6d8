//! A procedure whose output borrows from `&'a self`: the lifetime is a generic the JSON answer
//! cannot carry; one error at it, saying to own the data.
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
