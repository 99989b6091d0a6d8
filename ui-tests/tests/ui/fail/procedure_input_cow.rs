//! A procedure whose input borrows through a declared lifetime (`Cow<'a, str>`): the lifetime
//! is a generic the JSON input cannot carry; one error at it, saying to own the data.
use std::borrow::Cow;
use std::convert::Infallible;
use surface::surface;

#[surface]
pub struct Ops {
    #[cell]
    pub load: u32,
}

#[surface]
impl Ops {
    #[procedure("proc.find")]
    async fn find<'a>(&'a self, input: Cow<'a, str>) -> Result<u32, Infallible> {
        Ok(input.len() as u32)
    }
}

fn main() {}
