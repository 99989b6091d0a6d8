//! A sibling key written as an identifier: the error says to quote it.
use surface_ui_tests::tenant::TENANT;

fn main() {
    let _roster = surface::bundle! {
        siblings: { "a" => TENANT, b => TENANT };
        root: [];
    };
}
