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
});

// A scope given to a key that names nothing: one error, at the key.
const EXPOSE: Expose<Ops> = expose!(Ops {
    lod: resource(scope = read),
});

fn main() {}

#[surface]
impl Ops {}
