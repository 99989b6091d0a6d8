use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use surface::surface;

/// Everything a key needs but `Ord`.
#[derive(Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct Pid(u32);

#[surface]
pub struct Ops {
    #[collection(key = Pid)]
    pub processes: String,
}

#[surface]
impl Ops {}

fn main() {}
