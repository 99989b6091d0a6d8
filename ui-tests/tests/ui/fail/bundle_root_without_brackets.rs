//! `root: HereTool;` without its brackets: one error at the tool, with the list to write.
use surface_ui_tests::tenant::{HereTool, TENANT};

fn main() {
    let _ = (HereTool, TENANT);
    let _roster = surface::bundle! {
        siblings: { "a" => TENANT };
        root: HereTool;
    };
}
