use surface::surface;

#[surface]
pub struct Ops {
    #[cell]
    pub load: u32,
}

#[surface]
impl Ops {
    #[procedure("proc.kill")]
    async fn kill(&self, pid: u32) -> u32 {
        pid
    }
}

fn main() {}
