use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use surface::{scopes, surface};

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
    read = "ops.read": admin,
    admin = "ops.admin": read,
});

fn main() {}

#[surface]
impl Ops {}
