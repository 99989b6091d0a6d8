//! Four unrelated mistakes: every one is reported by the same build.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use std::convert::Infallible;
use surface::{Expose, expose, surface, tool};

#[derive(Clone, Serialize, Deserialize, JsonSchema)]
pub struct Load {
    pub cpu: f64,
}

#[surface]
pub struct Ops {
    #[cell]
    pub load: Load,
    // Mistake 1: a collection without its key type.
    #[collection]
    pub processes: String,
}

#[surface]
impl Ops {
    // Mistake 2: no namespace.
    #[procedure("spawn")]
    async fn spawn(&self, name: String) -> Result<String, Infallible> {
        Ok(name)
    }

    #[procedure("proc.kill")]
    async fn kill(&self, pid: u32) -> Result<u32, Infallible> {
        Ok(pid)
    }
}

// Mistake 3: an unknown word in `#[tool]`.
/// Counts.
#[tool(readonly)]
async fn count(client: &OpsClient) -> Result<f64, surface::Failure> {
    Ok(client.load().get().await?.cpu)
}

// Mistake 4: a misspelt exposure word.
const EXPOSE: Expose<Ops> = expose!(Ops {
    load: resourse,
    "proc.kill": tool,
});

fn main() {}
