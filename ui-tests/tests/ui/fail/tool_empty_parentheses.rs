//! `tool()`: the error names the words that go in the parentheses.
use surface::{Expose, expose};
use surface_ui_tests::ops::Ops;

const EXPOSE: Expose<Ops> = expose!(Ops { load: resource, "proc.kill": tool() });

fn main() {
    let _ = EXPOSE;
}
