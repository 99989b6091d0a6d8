//! `expose!` on a value type: one error, at the type (not also a mismatch with the map's declared type).
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use surface::{Expose, expose, surface};

#[derive(Clone, Serialize, Deserialize, JsonSchema)]
pub struct Load {
    pub cpu: f64,
}

#[surface]
pub struct Ops {
    #[cell]
    pub load: Load,
}

#[surface]
impl Ops {}

const EXPOSE: Expose<Ops> = expose!(Load { load: resource });

fn main() {
    let _ = EXPOSE;
}
