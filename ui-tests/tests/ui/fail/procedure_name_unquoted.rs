//! An unquoted procedure name: one error saying the quoted one; the expose key and client resolve.
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use std::convert::Infallible;
use std::sync::Arc;
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
    #[procedure(load.zero)]
    async fn zero(&self) -> Result<(), Infallible> {
        Ok(())
    }
}

const EXPOSE: Expose<Ops> = expose!(Ops { "load.zero": tool });

fn main() {
    let _ = EXPOSE;
    let ops = Arc::new(Ops { load: surface::Cell::new(Load { cpu: 0.0 }) });
    let client = OpsClient::direct(ops);
    let _ = async move {
        client.procedures().load().zero().await.unwrap();
    };
}
