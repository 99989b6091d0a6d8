//! A member whose value is borrowed (`&'static str`): one error at the type, naming the owned
//! `String`; the member is read as one, so its uses resolve.
use std::sync::Arc;
use surface::{Expose, expose, surface};

#[surface]
pub struct Ops {
    #[cell]
    pub name: &'static str,
}

#[surface]
impl Ops {}

const EXPOSE: Expose<Ops> = expose!(Ops { name: resource });

fn main() {
    let _ = EXPOSE;
    let client = OpsClient::direct(Arc::new(Ops { name: surface::Cell::new("ops".to_string()) }));
    let _ = async move {
        let _ = client.name().get().await;
    };
}
