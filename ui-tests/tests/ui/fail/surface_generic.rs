//! A generic surface: one error at its generics (the impl block of the generic type says nothing more).
use std::convert::Infallible;
use surface::surface;

#[surface]
pub struct Ops<T> {
    #[cell]
    pub load: u32,
    pub extra: T,
}

#[surface]
impl<T> Ops<T> {
    #[procedure("load.zero")]
    async fn zero(&self) -> Result<(), Infallible> {
        self.load.set(0);
        Ok(())
    }
}

fn main() {}
