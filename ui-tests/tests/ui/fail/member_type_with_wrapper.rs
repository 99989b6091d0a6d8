//! A member written with its container (`Cell<Load>`): one error at the type; the member is read as `Load`.
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use std::sync::Arc;
use surface::{Expose, expose, surface};

#[derive(Clone, Serialize, Deserialize, JsonSchema)]
pub struct Load {
    pub cpu: f64,
}

#[surface]
pub struct Ops {
    #[cell]
    pub load: surface::Cell<Load>,
}

#[surface]
impl Ops {

}

const EXPOSE: Expose<Ops> = expose!(Ops { load: resource });

fn main() {
    let _ = EXPOSE;
    let ops = Arc::new(Ops { load: surface::Cell::new(Load { cpu: 0.0 }) });
    let client = OpsClient::direct(ops);
    let _ = async move {
        let _ = client.load().get().await.unwrap().cpu;
    };
}
