//! A tool over `TenantClient` handed to a core that serves `Ops`: it would be listed, then
//! fail when called.
use surface::{Expose, expose, surface};
use surface_ui_tests::tenant::{HereTool, TENANT};

#[surface]
pub struct Ops {
    #[cell]
    pub load: u32,
}

#[surface]
impl Ops {}

const OPS: Expose<Ops> = expose!(Ops { load: resource });

fn main() {
    let _roster = surface::bundle! {
        core: OPS, tools: [HereTool];
        siblings: { "a" => TENANT };
        root: [];
    };
}
