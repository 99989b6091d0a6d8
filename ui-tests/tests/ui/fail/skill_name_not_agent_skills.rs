//! A name outside the Agent Skills rules (lowercase letters, digits, single hyphens): the
//! error says the rule and the name to write.
use surface::skill::Skill;
use surface::{Expose, expose, skill};
use surface_ui_tests::ops::Ops;

const EXPOSE: Expose<Ops> = expose!(Ops { load: resource });

const TRIAGE: Skill<Ops> = skill!(EXPOSE {
    name: "Load_Check",
    description: "Read the load.",
    uses: [load],
    instructions: "Read the load.",
});

fn main() {
    let _ = TRIAGE;
}
