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

const EXPOSE: Expose<Ops> = expose!(Ops {
    load: resource(scope = read),
});

fn main() {}

#[surface]
impl Ops {}
