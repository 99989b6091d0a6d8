use surface::surface;

#[surface]
pub struct Ops {
    #[collection(kye = u32)]
    pub processes: String,
}

#[surface]
impl Ops {}

fn main() {}
