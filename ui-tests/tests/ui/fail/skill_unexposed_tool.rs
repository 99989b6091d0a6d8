//! A skill naming a procedure its surface declares but the expose map does not expose: the
//! skill can only use what agents can reach.
use surface::skill::Skill;
use surface::{Expose, expose, skill};
use surface_ui_tests::ops::Ops;

const EXPOSE: Expose<Ops> = expose!(Ops { load: resource });

const TRIAGE: Skill<Ops> = skill!(EXPOSE {
    name: "triage",
    description: "Find the process to stop.",
    uses: [load, "proc.kill"],
    instructions: "Read the load, then stop the busiest process.",
});

fn main() {
    let _ = TRIAGE;
}
