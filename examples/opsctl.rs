//! The ops surface as a command: the argv face, built from the same tool table and expose map
//! `examples/ops.rs` serves over MCP.
//!
//! In-process (a fresh ops surface in this process):
//!
//! ```sh
//! cargo run --example opsctl -- list
//! cargo run --example opsctl -- get load
//! cargo run --example opsctl -- proc_kill --pid 2
//! ```
//!
//! Against a daemon (`cargo run --example ops -- --socket /tmp/ops.sock` in another shell):
//!
//! ```sh
//! cargo run --example opsctl -- --socket /tmp/ops.sock proc_kill --pid 2
//! cargo run --example opsctl -- --socket /tmp/ops.sock watch processes
//! ```
//!
//! `--scope SCOPE[,SCOPE]` (`ops.read`, `ops.admin`) narrows what one invocation reaches: `list`
//! shows only that, anything else is refused (exit 1, one sentence) before it is dialled, and
//! the daemon is dialled with those scopes, so it refuses the rest as well:
//!
//! ```sh
//! cargo run --example opsctl -- --scope ops.read proc_kill --pid 2   # refused, exit 1
//! ```

// The surface is declared once, in the MCP example; this command reuses it whole.
#[allow(dead_code)]
#[path = "ops.rs"]
mod ops;

use ops::{CountTool, Ops, OpsClient, ProcessesViewTool};
use std::process::ExitCode;
use std::sync::Arc;
use surface::StaticTool;
use surface::bundle::{BundleClient, OwnedBundle};
use surface::cli::Cli;

// The bespoke tools' names are static: a name taken by a reader command is a compile error here.
const _: () = surface::cli::assert_tool_names(&[CountTool::NAME, ProcessesViewTool::NAME]);

fn main() -> ExitCode {
    let cli = Cli::new("opsctl", env!("CARGO_PKG_VERSION"))
        .about("The ops surface as a command: in-process, or dialled to `ops --socket PATH` with --socket.")
        .core(ops::core())
        // Built when a command first needs it: never for --help, list or completions.
        .client(|| BundleClient::with_core(OpsClient::direct(Arc::new(Ops::new()))))
        // Dialled with the invocation's scopes (`--scope ops.read`): the daemon refuses the rest too.
        .dial_with(|path, options| async move {
            let (client, dispose, _) = surface::wire::dial_unix_socket_with::<Ops>(&path, &options)
                .await?
                .into_parts();
            Ok(OwnedBundle::new(BundleClient::with_core(client)).dispose(dispose))
        })
        .build();
    match cli {
        Ok(cli) => cli.main(),
        Err(refused) => {
            eprintln!("{refused}");
            ExitCode::from(surface::cli::exit::USAGE)
        }
    }
}
