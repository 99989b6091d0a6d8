//! Two `#[surface]` impl blocks for one surface: rustc reports the duplicate items itself (README: rustc's own errors).
use std::convert::Infallible;
use std::sync::Arc;
use surface::{Expose, expose, surface};

#[surface]
pub struct Ops {
    #[cell]
    pub load: u32,
}

#[surface]
impl Ops {
    #[procedure("load.zero")]
    async fn zero(&self) -> Result<(), Infallible> {
        self.load.set(0);
        Ok(())
    }
}

#[surface]
impl Ops {
    #[procedure("load.one")]
    async fn one(&self) -> Result<(), Infallible> {
        self.load.set(1);
        Ok(())
    }
}

const EXPOSE: Expose<Ops> = expose!(Ops { load: resource, "load.zero": tool, "load.one": tool });

fn main() {
    let _ = EXPOSE;
    let ops = Arc::new(Ops { load: surface::Cell::new(1) });
    let client = OpsClient::direct(ops);
    let _ = async move {
        let _ = client.procedures().load().zero().await;
        let _ = client.procedures().load().one().await;
    };
}
