use surface::surface;

#[surface]
pub struct Ops {
    #[collection]
    pub processes: String,
}

#[surface]
impl Ops {}

fn main() {}
