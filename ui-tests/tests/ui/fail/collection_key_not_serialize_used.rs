//! A key type missing `Serialize`, used through the client: one error at the key type, and rustc's own at the call that needs it (README).
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use std::convert::Infallible;
use std::sync::Arc;
use surface::{Expose, expose, surface};

/// Everything a key needs but `Serialize`.
#[derive(Clone, PartialEq, Eq, PartialOrd, Ord, Deserialize, JsonSchema)]
pub struct Pid(u32);

#[surface]
pub struct Ops {
    #[collection(key = Pid)]
    pub processes: String,
}

#[surface]
impl Ops {
    #[procedure("proc.count")]
    async fn count(&self) -> Result<usize, Infallible> {
        self.processes.upsert(Pid(1), "init".into());
        Ok(self.processes.len())
    }
}

const EXPOSE: Expose<Ops> = expose!(Ops { processes: resource, "proc.count": tool });

fn main() {
    let _ = EXPOSE;
    let ops = Arc::new(Ops { processes: surface::Collection::new() });
    let client = OpsClient::direct(ops);
    let _ = async move {
        let _ = client.processes().get(&Pid(1)).await;
    };
}
