//! A skill naming a tool its expose map does not expose (a typo): one error at the key, with
//! the closest tool the map exposes.
use surface::skill::Skill;
use surface::{Expose, expose, skill};
use surface_ui_tests::ops::Ops;

const EXPOSE: Expose<Ops> = expose!(Ops { load: resource, "proc.kill": tool(mutates) });

const TRIAGE: Skill<Ops> = skill!(EXPOSE {
    name: "triage",
    description: "Find the process to stop.",
    uses: [load, "proc.kil"],
    instructions: "Read the load, then stop the busiest process.",
});

fn main() {
    let _ = TRIAGE;
}
