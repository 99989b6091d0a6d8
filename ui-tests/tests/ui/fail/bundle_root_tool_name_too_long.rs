//! A root tool whose own name is over 64 characters: one error, at the function's name
//! (`#[tool]`'s), not again at the tool in `root: [..]`.
use surface::mcp::BundleClient;
use surface::tool;
use surface_ui_tests::tenant::TENANT;

/// Counts.
#[tool(read_only)]
async fn count_every_entry_of_every_tenant_that_is_still_running_right_now_please(
    client: &BundleClient,
) -> Result<u32, surface::Failure> {
    let _ = client;
    Ok(1)
}

fn main() {
    let _roster = surface::bundle! {
        siblings: { "a" => TENANT };
        root: [CountEveryEntryOfEveryTenantThatIsStillRunningRightNowPleaseTool];
    };
}
