//! A `bundle!` whose expose map is a `let` value: the roster is checked at compile time, so
//! the map must be a constant; the error is at the value and says to make it a `const`.
use surface_ui_tests::tenant::TENANT;

fn main() {
    let tenant = TENANT;
    let _roster = surface::bundle! {
        siblings: { "a" => tenant };
        root: [];
    };
}
