//! The server side only needs the answer to be `Serialize`, but the generated typed client
//! decodes it, so a procedure's success type must be `Deserialize` too.

use schemars::JsonSchema;
use serde::Serialize;
use std::convert::Infallible;
use surface::surface;

#[surface]
pub struct Ops {
    #[cell]
    pub load: u32,
}

#[derive(Serialize, JsonSchema)]
pub struct Killed {
    pub ok: bool,
}

#[surface]
impl Ops {
    #[procedure("proc.kill")]
    async fn kill(&self, pid: u32) -> Result<Killed, Infallible> {
        Ok(Killed { ok: pid > 0 })
    }
}

fn main() {}
