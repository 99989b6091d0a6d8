//! A misspelled verb: the error suggests the whole key, `"proc.kill"`.
use surface::{Expose, expose};
use surface_ui_tests::ops::Ops;

const EXPOSE: Expose<Ops> = expose!(Ops { "proc.kil": tool });

fn main() {
    let _ = EXPOSE;
}
