//! `tallyctl`: a static bundle (`bundle!`) served as a command line, with only the facade's
//! `cli` feature. `tallyctl count_up`, `tallyctl a_ops_run`, `tallyctl keys_list`, `tallyctl list`.

use std::convert::Infallible;
use std::sync::Arc;
use surface::bundle::{BundleClient, Roster};
use surface::cli::Cli;
use surface::prompt::PromptAnswer;
use surface::{Cell, Expose, Failure, View, expose, prompt, surface, tool};

/// The core: a tally.
#[surface]
pub struct Tally {
    /// How far it has counted.
    #[cell]
    pub count: u32,
}

#[surface]
impl Tally {
    /// Adds one and answers the new count.
    #[procedure("count.up")]
    async fn up(&self) -> Result<u32, Infallible> {
        Ok(self.count.update(|c| {
            *c += 1;
            *c
        }))
    }
}

/// One tenant, served as a sibling.
#[surface]
pub struct Tenant {
    /// The tenant's entries.
    #[cell]
    pub entries: u32,
}

#[surface]
impl Tenant {
    /// Answers the tenant's entries.
    #[procedure("ops.run")]
    async fn run(&self) -> Result<u32, Infallible> {
        Ok(self.entries.get())
    }
}

/// The roster's sibling keys.
#[tool(read_only)]
async fn keys_list(client: &BundleClient) -> Result<Vec<String>, Failure> {
    Ok(client.sibling_keys().map(str::to_owned).collect())
}

/// How to read the tally.
#[prompt]
async fn read_tally(client: &BundleClient) -> Result<PromptAnswer, Failure> {
    let tenants = client.sibling_keys().count();
    Ok(PromptAnswer::new().user_text(format!("Read count, then each of the {tenants} tenants.")))
}

/// The tally as a page (an MCP Apps view; a command line names it in `list --json`).
const PANEL: View = surface::view!("ui://tally/panel", "<!doctype html><p>tally</p>");

const TALLY: Expose<Tally> = expose!(Tally { count: resource, "count.up": tool(mutates) });
const TENANT: Expose<Tenant> = expose!(Tenant { entries: resource, "ops.run": tool(read_only) });

/// The static roster, its names checked at compile time.
fn roster() -> Roster {
    surface::bundle! {
        core: TALLY;
        siblings: { "a" => TENANT };
        root: [KeysListTool];
        views: [PANEL];
    }
}

/// The command over a fresh tally and tenant.
fn cli() -> Cli {
    let tally = Arc::new(Tally { count: Cell::new(0) });
    let tenant = Arc::new(Tenant {
        entries: Cell::new(7),
    });
    Cli::new("tallyctl", "0.1.0")
        .about("A tally and one tenant, as a command.")
        .roster(roster())
        .root_prompt(ReadTallyPrompt)
        .client(move || {
            BundleClient::with_core(TallyClient::direct(tally.clone()))
                .sibling("a", TenantClient::direct(tenant.clone()))
        })
}

fn main() -> std::process::ExitCode {
    cli().build().expect("the roster composes").main()
}

#[cfg(test)]
mod tests {
    use super::*;
    use surface::cli::exit;

    #[test]
    fn the_static_roster_is_the_command_tree() {
        let built = cli().build().expect("the roster composes");
        assert_eq!(built.tool_names(), ["count_up", "a_ops_run", "keys_list"]);
    }

    #[tokio::test]
    async fn its_tools_run_in_process() {
        let built = cli().build().expect("the roster composes");
        assert_eq!(built.run(["tallyctl", "count_up"]).await, exit::OK);
        assert_eq!(built.run(["tallyctl", "a_ops_run"]).await, exit::OK);
        assert_eq!(built.run(["tallyctl", "keys_list"]).await, exit::OK);
        assert_eq!(built.run(["tallyctl", "nothing"]).await, exit::USAGE);
    }
}
