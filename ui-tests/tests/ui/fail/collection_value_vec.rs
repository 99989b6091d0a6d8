//! A collection whose value is a `Vec<…>`: the error is at the field's type, and the rest reads it as the item type.
use std::sync::Arc;
use surface::{Expose, expose, surface};

#[surface]
pub struct Ops {
    #[collection(key = u32)]
    pub processes: Vec<String>,
}

#[surface]
impl Ops {}

const EXPOSE: Expose<Ops> = expose!(Ops { processes: resource });

fn main() {
    let _ = EXPOSE;
    let ops = Arc::new(Ops { processes: surface::Collection::new() });
    ops.processes.upsert(1, "init".to_string());
    let _ = OpsClient::direct(ops);
}
