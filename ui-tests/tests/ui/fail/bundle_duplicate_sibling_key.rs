//! The same sibling key twice: the later would replace the earlier and its tools vanish.
use surface_ui_tests::tenant::{HereTool, TENANT};

fn main() {
    let _roster = surface::bundle! {
        siblings: { "a" => TENANT, tools: [HereTool], "a" => TENANT };
        root: [];
    };
}
