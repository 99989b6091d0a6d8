//! `derived = true`: reported, and the member stays derived, so code reading it does not fail too.
use std::sync::Arc;
use surface::surface;

#[surface]
pub struct Observer {
    #[cell(derived = true)]
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
