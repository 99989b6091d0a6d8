use surface::surface;

#[surface]
pub enum Ops {
    Idle,
    Busy {
        load: u32,
    },
    Done,
}

fn main() {
    let _ = Ops::Idle;
}
