//! A `#[cfg]`-ed member is left out of the spec, the client and the dispatch when off.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use surface::surface;

#[derive(Clone, Serialize, Deserialize, JsonSchema)]
pub struct Load {
    pub cpu: f64,
}

#[surface]
pub struct Ops {
    #[cell]
    pub load: Load,
    #[cfg(any())]
    #[cell]
    pub never: Load,
    #[cfg(all())]
    #[stream]
    pub always: String,
}

#[surface]
impl Ops {}

fn main() {
    let names: Vec<_> = Ops::SPEC.members.iter().map(|m| m.name).collect();
    assert_eq!(names, ["load", "always"]);
    let ops = Ops {
        load: surface::Cell::new(Load { cpu: 0.0 }),
        always: surface::Stream::new(),
    };
    assert!(surface::SurfaceMembers::member(&ops, "never").is_none());
    assert!(surface::SurfaceMembers::member(&ops, "always").is_some());
}
