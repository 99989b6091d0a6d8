use std::sync::Arc;
use surface::surface;

#[surface]
pub struct Ops {
    #[cell]
    pub load: u32,
}

fn main() {
    let _client = OpsClient::direct(Arc::new(Ops {
        load: surface::Cell::new(0),
    }));
}
