//! An `f64` key: one error at the key names the missing `Ord`; rustc also refuses the code calling the collection's methods (README: rustc's own errors).
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use std::convert::Infallible;
use std::sync::Arc;
use surface::{Expose, expose, surface};


#[surface]
pub struct Ops {
    #[collection(key = f64)]
    pub processes: String,
}

#[surface]
impl Ops {
    #[procedure("proc.count")]
    async fn count(&self) -> Result<usize, Infallible> {
        self.processes.upsert(1.0, "init".into());
        Ok(self.processes.len())
    }
}

const EXPOSE: Expose<Ops> = expose!(Ops { processes: resource, "proc.count": tool });

fn main() {
    let _ = EXPOSE;
    let ops = Arc::new(Ops { processes: surface::Collection::new() });
    let client = OpsClient::direct(ops);
    let _ = async move {
        let _ = client.processes().get(&1.0).await;
    };
}
