use schemars::JsonSchema;
use serde::Serialize;
use std::convert::Infallible;
use surface::surface;

#[surface]
pub struct Ops {
    #[cell]
    pub load: u32,
}

/// Derives `Serialize` instead of `Deserialize`.
#[derive(Serialize, JsonSchema)]
pub struct Kill {
    pub pid: u32,
}

#[surface]
impl Ops {
    #[procedure("proc.kill")]
    async fn kill(&self, input: Kill) -> Result<u32, Infallible> {
        Ok(input.pid)
    }
}

fn main() {}
