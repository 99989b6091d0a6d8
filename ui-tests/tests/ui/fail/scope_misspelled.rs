use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use surface::{Expose, expose, scopes, surface};

#[derive(Clone, Serialize, Deserialize, JsonSchema)]
pub struct Load {
    pub cpu: f64,
}

#[surface]
pub struct Ops {
    #[cell]
    pub load: Load,
}

scopes!(Ops {
    read = "ops.read",
    admin = "ops.admin": read,
});

const EXPOSE: Expose<Ops> = expose!(Ops {
    load: resource(scope = reed),
});

fn main() {}

#[surface]
impl Ops {}
