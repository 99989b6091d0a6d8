use schemars::JsonSchema;
use serde::Deserialize;
use surface::surface;

/// Derives everything a member needs but `Serialize`.
#[derive(Clone, Deserialize, JsonSchema)]
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

fn main() {}
