//! A skill declared over one surface's expose map, typed as another's: a mismatch at the map.
use surface::skill::Skill;
use surface::{Expose, expose, skill};
use surface_ui_tests::ops::Ops;
use surface_ui_tests::tenant::Tenant;

const EXPOSE: Expose<Ops> = expose!(Ops { load: resource });

const TRIAGE: Skill<Tenant> = skill!(EXPOSE {
    name: "triage",
    description: "Read the load.",
    uses: [load],
    instructions: "Read the load.",
});

fn main() {
    let _ = TRIAGE;
}
