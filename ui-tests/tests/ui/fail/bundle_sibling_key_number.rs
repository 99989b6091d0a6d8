//! A sibling key written as a number: one error at it, saying to quote it.
use surface_ui_tests::tenant::TENANT;

fn main() {
    let _roster = surface::bundle! {
        siblings: { "a" => TENANT, 2 => TENANT };
        root: [];
    };
}
