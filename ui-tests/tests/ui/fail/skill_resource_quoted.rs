//! A member's key quoted, as a procedure's is: the map exposes it as a resource.
use surface::skill::Skill;
use surface::{Expose, expose, skill};
use surface_ui_tests::ops::Ops;

const EXPOSE: Expose<Ops> = expose!(Ops { load: resource });

const TRIAGE: Skill<Ops> = skill!(EXPOSE {
    name: "triage",
    description: "Read the load.",
    uses: ["load"],
    instructions: "Read the load.",
});

fn main() {
    let _ = TRIAGE;
}
