//! A misspelled field: did you mean, and the fields there are.
use surface::skill::Skill;
use surface::{Expose, expose, skill};
use surface_ui_tests::ops::Ops;

const EXPOSE: Expose<Ops> = expose!(Ops { load: resource });

const TRIAGE: Skill<Ops> = skill!(EXPOSE {
    name: "triage",
    description: "Read the load.",
    uses: [load],
    instructions: "Read the load.",
    licence: "MIT",
});

fn main() {
    let _ = TRIAGE;
}
