//! A sibling tool whose prefixed name is over 64 characters: one error, at the tool.
use surface::tool;
use surface_ui_tests::tenant::{TENANT, TenantClient};

/// Counts.
#[tool(read_only)]
async fn count_every_entry_of_this_tenant_that_is_still_running_now(
    client: &TenantClient,
) -> Result<u32, surface::Failure> {
    client.entries().get().await
}

fn main() {
    let _roster = surface::bundle! {
        siblings: { "tenant_a" => TENANT, tools: [CountEveryEntryOfThisTenantThatIsStillRunningNowTool] };
        root: [];
    };
}
