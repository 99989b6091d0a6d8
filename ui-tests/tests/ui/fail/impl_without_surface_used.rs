//! `#[surface]` forgotten on the impl block, the surface used: rustc reports each `#[procedure]` and the client call itself (README: rustc's own errors); ours are at the struct's `#[surface]` and at `expose!`'s `Ops`.
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

impl Ops {
    #[procedure("load.zero")]
    async fn zero(&self) -> Result<(), Infallible> {
        self.load.set(Load { cpu: 0.0 });
        Ok(())
    }

    #[procedure("load.one")]
    async fn one(&self) -> Result<(), Infallible> {
        self.load.set(Load { cpu: 1.0 });
        Ok(())
    }
}

const EXPOSE: Expose<Ops> = expose!(Ops { load: resource, "load.zero": tool });

fn main() {
    let _ = EXPOSE;
    let ops = Arc::new(Ops { load: surface::Cell::new(Load { cpu: 0.0 }) });
    let client = OpsClient::direct(ops);
    let _ = async move {
        let _ = client.load().get().await;
        let _ = client.procedures().load().zero().await;
    };
}
