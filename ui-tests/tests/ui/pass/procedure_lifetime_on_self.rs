//! A procedure that names its receiver's lifetime (`<'a>(&'a self)`) asks for no type to be
//! chosen: it is served and called like any other.
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
    #[procedure("stats.read")]
    async fn read<'a>(&'a self) -> Result<u32, Infallible> {
        let load: &'a surface::Cell<u32> = &self.load;
        Ok(load.get())
    }
}

const EXPOSE: Expose<Ops> = expose!(Ops { "stats.read": tool(read_only) });

fn main() {
    assert_eq!(EXPOSE.entries().len(), 1);
    let client = OpsClient::direct(Arc::new(Ops { load: surface::Cell::new(3) }));
    let runtime = tokio::runtime::Builder::new_current_thread().build().unwrap();
    assert_eq!(runtime.block_on(client.stats().read()).unwrap(), 3);
}
