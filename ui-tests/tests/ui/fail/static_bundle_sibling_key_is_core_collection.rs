use std::convert::Infallible;
use surface::{Expose, expose, surface};

#[surface]
pub struct Core {
    #[collection(key = String)]
    pub rows: String,
}

#[surface]
impl Core {}

#[surface]
pub struct Tenant {
    #[cell]
    pub entries: u32,
}

#[surface]
impl Tenant {
    #[procedure("ops.run")]
    async fn run(&self) -> Result<u32, Infallible> {
        Ok(1)
    }
}

const CORE: Expose<Core> = expose!(Core { rows: resource });
const TENANT: Expose<Tenant> = expose!(Tenant { entries: resource });

fn main() {
    let _roster = surface::bundle! {
        core: CORE;
        siblings: { "rows" => TENANT };
        root: [];
    };
}
