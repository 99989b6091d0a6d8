//! `bundle!` without `root`: the error is where `root` goes, not over the whole invocation.
use surface_ui_tests::tenant::TENANT;

fn main() {
    let _roster = surface::bundle! {
        siblings: {
            "a" => TENANT,
            "b" => TENANT,
        };
    };
}
