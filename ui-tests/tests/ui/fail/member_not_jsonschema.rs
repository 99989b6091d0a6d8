use serde::{Deserialize, Serialize};
use surface::surface;

/// Derives everything a member needs but `JsonSchema`.
#[derive(Clone, Serialize, Deserialize)]
pub struct Process {
    pub pid: u32,
}

#[surface]
pub struct Ops {
    #[collection(key = u32)]
    pub processes: Process,
}

#[surface]
impl Ops {}

fn main() {}
