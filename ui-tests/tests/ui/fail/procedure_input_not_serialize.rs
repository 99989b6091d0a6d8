//! The server side only needs the input to be `Deserialize`, but the generated typed client
//! encodes it, so a procedure's input must be `Serialize` too.

use schemars::JsonSchema;
use serde::Deserialize;
use std::convert::Infallible;
use surface::surface;

#[surface]
pub struct Ops {
    #[cell]
    pub load: u32,
}

#[derive(Deserialize, JsonSchema)]
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
