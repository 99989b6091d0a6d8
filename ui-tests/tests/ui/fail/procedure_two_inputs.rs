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
    async fn kill(&self, pid: u32, signal: i32) -> Result<(), Infallible> {
        let _ = (pid, signal);
        Ok(())
    }
}

fn main() {}
