//! A skill naming a member its expose map does not expose as a resource: the closest one.
use surface::skill::Skill;
use surface::{Expose, expose, skill};
use surface_ui_tests::ops::Ops;

const EXPOSE: Expose<Ops> = expose!(Ops { load: resource, "proc.kill": tool(mutates) });

const TRIAGE: Skill<Ops> = skill!(EXPOSE {
    name: "triage",
    description: "Find the process to stop.",
    uses: [lod, "proc.kill"],
    instructions: "Read the load, then stop the busiest process.",
});

fn main() {
    let _ = TRIAGE;
}
