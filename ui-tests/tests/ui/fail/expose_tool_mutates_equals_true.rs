//! `tool(mutates = true)` in `expose!`: one error at it, saying the flag to write.
use surface::{Expose, expose};
use surface_ui_tests::ops::Ops;

const EXPOSE: Expose<Ops> = expose!(Ops { load: resource, "proc.kill": tool(mutates = true) });

fn main() {
    let _ = EXPOSE;
}
