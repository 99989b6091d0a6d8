//! `derive` for `derived`: reported, and the member stays derived.
use std::sync::Arc;
use surface::surface;

#[surface]
pub struct Observer {
    #[cell(derive)]
    pub load: u32,
}

#[surface]
impl Observer {}

fn main() {
    let observer = Arc::new(Observer { load: surface::ReadOnly::new(surface::Cell::new(1)) });
    let _ = observer.load.value();
    let client = ObserverClient::direct(observer);
    let _ = async move {
        let _ = client.load().value().await;
    };
}
