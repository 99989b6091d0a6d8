use std::convert::Infallible;
use surface::surface;

/// Not declared with `#[surface]`.
pub struct Ops;

#[surface]
impl Ops {
    #[procedure("proc.kill")]
    async fn kill(&self, pid: u32) -> Result<u32, Infallible> {
        Ok(pid)
    }
}

fn main() {}
