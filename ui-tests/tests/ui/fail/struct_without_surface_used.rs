//! `#[surface]` forgotten on the struct: rustc reports each member attribute and each use of the missing client itself (README: rustc's own errors); ours is one, at the impl block's `Ops`.
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use std::convert::Infallible;
use std::sync::Arc;
use surface::{Expose, expose, surface};

#[derive(Clone, Serialize, Deserialize, JsonSchema)]
pub struct Load {
    pub cpu: f64,
}

pub struct Ops {
    #[cell]
    pub load: Load,
    #[collection(key = u32)]
    pub processes: String,
    #[stream]
    pub log: String,
    #[event]
    pub saved: u32,
    #[cell]
    pub uptime: u64,
}

#[surface]
impl Ops {
    #[procedure("load.zero")]
    async fn zero(&self) -> Result<(), Infallible> {
        self.load.set(Load { cpu: 0.0 });
        Ok(())
    }
}

const EXPOSE: Expose<Ops> = expose!(Ops { load: resource, "load.zero": tool });

fn main() {
    let _ = EXPOSE;
    let ops = Arc::new(Ops {
        load: surface::Cell::new(Load { cpu: 0.0 }),
        processes: surface::Collection::new(),
        log: surface::Stream::new(),
        saved: surface::Event::new(),
        uptime: surface::Cell::new(0),
    });
    let client = OpsClient::direct(ops);
    let _ = async move {
        let _ = client.load().get().await;
        let _ = client.procedures().load().zero().await;
    };
}
