//! A procedure taking its input by reference: at the `&Kill`, saying to take it by value; the client keeps the method.
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use std::convert::Infallible;
use std::sync::Arc;
use surface::{Expose, expose, surface};

#[derive(Serialize, Deserialize, JsonSchema)]
pub struct Kill {
    pub pid: u32,
}

#[surface]
pub struct Ops {
    #[cell]
    pub load: u32,
}

#[surface]
impl Ops {
    #[procedure("proc.kill")]
    async fn kill(&self, input: &Kill) -> Result<u32, Infallible> {
        Ok(input.pid)
    }
}

const EXPOSE: Expose<Ops> = expose!(Ops { "proc.kill": tool });

fn main() {
    let _ = EXPOSE;
    let ops = Arc::new(Ops { load: surface::Cell::new(1) });
    let client = OpsClient::direct(ops);
    let _ = async move {
        let _ = client.proc().kill(Kill { pid: 1 }).await;
    };
}
