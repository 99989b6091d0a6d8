//! A generic procedure: the error is at its generic parameters.
use std::convert::Infallible;
use surface::surface;

#[surface]
pub struct Ops {
    #[cell]
    pub load: u32,
}

#[surface]
impl Ops {
    #[procedure("load.set")]
    async fn set<T: Into<u32>>(&self, value: T) -> Result<(), Infallible> {
        self.load.set(value.into());
        Ok(())
    }
}

fn main() {}
