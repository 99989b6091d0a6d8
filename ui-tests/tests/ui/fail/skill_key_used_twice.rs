//! A key listed twice in `uses`.
use surface::skill::Skill;
use surface::{Expose, expose, skill};
use surface_ui_tests::ops::Ops;

const EXPOSE: Expose<Ops> = expose!(Ops { load: resource });

const TRIAGE: Skill<Ops> = skill!(EXPOSE {
    name: "triage",
    description: "Read the load.",
    uses: [load, load],
    instructions: "Read the load.",
});

fn main() {
    let _ = TRIAGE;
}
