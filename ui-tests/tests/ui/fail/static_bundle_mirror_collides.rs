//! A root tool named like the mirror `resource(mirror)` gives sibling `a`'s cell `entries`.
use surface::mcp::BundleClient;
use surface::{Expose, expose, tool};
use surface_ui_tests::tenant::Tenant;

const MIRRORED: Expose<Tenant> = expose!(Tenant { entries: resource(mirror) });

/// Collides with sibling `a`'s `entries_get`.
#[tool(read_only)]
async fn a_entries_get(_client: &BundleClient) -> Result<u32, surface::Failure> {
    Ok(0)
}

fn main() {
    let _roster = surface::bundle! {
        siblings: { "a" => MIRRORED };
        root: [AEntriesGetTool];
    };
}
