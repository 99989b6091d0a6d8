use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use std::convert::Infallible;
use surface::{Expose, expose, surface};

#[derive(Clone, Serialize, Deserialize, JsonSchema)]
pub struct Load {
    pub cpu: f64,
}

#[surface]
pub struct Ops {
    #[cell]
    pub load: Load,
}

#[surface]
impl Ops {
    #[procedure("proc.spawn")]
    async fn spawn(&self, name: String) -> Result<String, Infallible> {
        Ok(name)
    }
}

const EXPOSE: Expose<Ops> = expose!(Ops {
    "proc.spawn": tool(mutates, tsak),
});

fn main() {}
