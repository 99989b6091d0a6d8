//! A procedure's key written bare: it is quoted.
use surface::skill::Skill;
use surface::{Expose, expose, skill};
use surface_ui_tests::ops::Ops;

const EXPOSE: Expose<Ops> = expose!(Ops { "proc.kill": tool(mutates) });

const TRIAGE: Skill<Ops> = skill!(EXPOSE {
    name: "triage",
    description: "Stop a process.",
    uses: [proc.kill],
    instructions: "Stop it.",
});

fn main() {
    let _ = TRIAGE;
}
