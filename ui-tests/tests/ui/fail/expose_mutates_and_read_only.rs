//! `tool(mutates, read_only)`: the error says one of them.
use surface::{Expose, expose};
use surface_ui_tests::ops::Ops;

const EXPOSE: Expose<Ops> = expose!(Ops { load: resource, "proc.kill": tool(mutates, read_only) });

fn main() {
    let _ = EXPOSE;
}
