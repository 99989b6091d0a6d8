//! `expose!` with nothing in it: the error says the form to write.
use surface::{Expose, expose};
use surface_ui_tests::ops::Ops;

const EXPOSE: Expose<Ops> = expose!();

fn main() {
    let _ = EXPOSE;
}
