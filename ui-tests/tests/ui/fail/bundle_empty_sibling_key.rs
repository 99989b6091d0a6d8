//! An empty sibling key: it becomes a URI segment and a tool-name prefix.
use surface_ui_tests::tenant::{HereTool, TENANT};

fn main() {
    let _roster = surface::bundle! {
        siblings: { "" => TENANT, tools: [HereTool] };
        root: [];
    };
}
