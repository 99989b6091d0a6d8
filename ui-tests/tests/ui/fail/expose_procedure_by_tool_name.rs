//! A procedure exposed by its tool name: at the key, with the quoted name to write.
use surface::{Expose, expose};
use surface_ui_tests::ops::Ops;

const EXPOSE: Expose<Ops> = expose!(Ops { load: resource, proc_kill: tool });

fn main() {
    let _ = EXPOSE;
}
