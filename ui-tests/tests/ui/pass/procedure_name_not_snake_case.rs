//! A procedure named `"Type.Get"` is valid and its generated client methods raise no
//! `non_snake_case` warnings.
#![deny(warnings)]

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
    #[procedure("Type.Get")]
    async fn get(&self) -> Result<u32, Infallible> {
        Ok(self.load.get())
    }
}

const EXPOSE: Expose<Ops> = expose!(Ops { "Type.Get": tool(read_only) });

fn main() {
    assert_eq!(EXPOSE.entries().len(), 1);
    let client = OpsClient::direct(Arc::new(Ops { load: surface::Cell::new(3) }));
    let runtime = tokio::runtime::Builder::new_current_thread().build().unwrap();
    assert_eq!(runtime.block_on(client.Type().Get()).unwrap(), 3);
}
