//! A collection key type that is not `Serialize`: one error, at the key type.
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use surface::{Expose, expose, surface};

#[derive(Clone, PartialEq, Eq, PartialOrd, Ord, Deserialize, JsonSchema)]
pub struct Pid(u32);

#[derive(Clone, Serialize, Deserialize, JsonSchema)]
pub struct Process {
    pub name: String,
}

#[surface]
pub struct Ops {
    #[collection(key = Pid)]
    pub processes: Process,
}

#[surface]
impl Ops {}

const EXPOSE: Expose<Ops> = expose!(Ops { processes: resource });

fn main() {
    let _ = (EXPOSE, OpsClient::procedures);
}
