//! A member attribute misspelt (`#[cel]`): one error at it, with the word meant; the field is
//! read as that member, so its uses resolve.
use std::convert::Infallible;
use surface::surface;

#[surface]
pub struct Ops {
    #[cell]
    pub load: u32,
    #[cel]
    pub uptime: u64,
}

#[surface]
impl Ops {
    #[procedure("uptime.reset")]
    async fn reset(&self) -> Result<(), Infallible> {
        self.uptime.set(0);
        Ok(())
    }
}

fn main() {}
