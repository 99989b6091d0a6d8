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
    fn kill(&self, pid: u32) -> Result<u32, Infallible> {
        Ok(pid)
    }
}

fn main() {}
