use std::convert::Infallible;
use surface::surface;

#[surface]
pub struct Ops {
    #[cell]
    pub load: u32,
}

#[surface]
impl Ops {
    #[procedure("proc.kill")]
    async fn kill(&self) -> Result<(), Infallible> {
        Ok(())
    }

    #[procedure("proc.kill")]
    async fn terminate(&self) -> Result<(), Infallible> {
        Ok(())
    }
}

fn main() {}
