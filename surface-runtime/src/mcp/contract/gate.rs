//! The gate: [`check`] for `cargo test`, [`command`] for a small `check` / `write` bin.

use super::changes::{Changes, ContractError};
use super::manifest::Manifest;
use crate::mcp::ServedMcp;
use std::path::Path;

/// Compares the face `served` advertises now with the manifest at `path`: `Ok` with every
/// (additive) change when nothing breaks, or the breaking changes. For `cargo test`:
///
/// ```no_run
/// # fn served() -> surface_runtime::mcp::ServedMcp { unimplemented!() }
/// let changes = surface_runtime::mcp::contract::check(&served(), "examples/ops.contract.json".as_ref())
///     .unwrap_or_else(|e| panic!("{e}"));
/// print!("{changes}"); // additive changes are printed, not failed on
/// ```
pub fn check(served: &ServedMcp, path: &Path) -> Result<Changes, ContractError> {
    let manifest = Manifest::read(path).map_err(ContractError::Manifest)?;
    let changes = Manifest::compare(&manifest, &Manifest::of(served));
    if changes.breaking.is_empty() {
        Ok(changes)
    } else {
        Err(ContractError::Breaking(changes))
    }
}

/// The `check` / `write` command line of a contract bin: `check [PATH]` compares the live face
/// with the manifest (default `default_path`) and fails on a breaking change, printing additive
/// ones; `write [PATH]` writes the manifest. Answers the text to print and whether it
/// succeeded. A bin is three lines:
///
/// ```no_run
/// # fn served() -> surface_runtime::mcp::ServedMcp { unimplemented!() }
/// let (ok, text) = surface_runtime::mcp::contract::command(&served(), std::env::args().skip(1), "ops.contract.json".as_ref());
/// print!("{text}");
/// std::process::exit(if ok { 0 } else { 1 });
/// ```
pub fn command(
    served: &ServedMcp,
    args: impl IntoIterator<Item = String>,
    default_path: &Path,
) -> (bool, String) {
    let args: Vec<String> = args.into_iter().collect();
    let path = args.get(1).map_or(default_path, |p| Path::new(p.as_str()));
    match args.first().map(String::as_str) {
        Some("write") => match Manifest::of(served).write(path) {
            Ok(()) => (true, format!("surface-contract: wrote {}\n", path.display())),
            Err(e) => (false, format!("surface-contract: {e}\n")),
        },
        Some("check") => match check(served, path) {
            Ok(changes) if changes.is_empty() => (
                true,
                format!("surface-contract: the live face matches {}\n", path.display()),
            ),
            Ok(changes) => (
                true,
                format!(
                    "{changes}surface-contract: no breaking change against {} ({} additive; `write` to record them)\n",
                    path.display(),
                    changes.additive.len()
                ),
            ),
            Err(e) => (false, format!("{e}\n")),
        },
        _ => (
            false,
            format!(
                "usage: contract check|write [PATH]   (PATH defaults to {})\n",
                default_path.display()
            ),
        ),
    }
}
