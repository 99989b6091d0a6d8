//! `key = resource`: the error is at the `=` and says `:`.
use surface::{Expose, expose};
use surface_ui_tests::ops::Ops;

const EXPOSE: Expose<Ops> = expose!(Ops { load = resource });

fn main() {
    let _ = EXPOSE;
}
