//! The contract: the whole MCP face of a server as a checked-in JSON manifest, and a gate that
//! fails on breaking changes to it.
//!
//! A user's agents and prompts depend on tool names, input schemas and resource URIs.
//! [`Manifest::of`] captures what a served bundle advertises now — every tool (name, title,
//! description, input and output schemas, annotations), resource and resource template, exactly
//! as `tools/list`, `resources/list` and `resources/templates/list` answer — and
//! [`Manifest::compare`] sorts the differences from a checked-in manifest into
//! [`Changes::breaking`] and [`Changes::additive`]:
//!
//! | breaking (fails the check) | additive (printed) |
//! |---|---|
//! | a tool, resource or template removed (or renamed) | a tool, resource or template added |
//! | a required input field added, or an optional one made required | an optional input field added, a required one made optional |
//! | an input field removed | |
//! | a field's type narrowed (`number` → `integer`, a type or enum value dropped, a bound tightened, a variant removed, an object closed) | a type widened, an enum value added, a bound loosened, a variant added |
//! | a read-only tool turned mutating (`readOnlyHint` true → false) or made destructive | a mutating tool made read-only; a title or description changed |
//! | a resource's MIME type changed | |
//! | an exposure's scope narrowed (one added, or changed to one fewer callers hold, or a broader scope no longer implying it) | a scope dropped or widened |
//!
//! Each tool, resource and template records the scope a caller needs (`"scope": "ops.read"`,
//! absent when it needs none), and `scopes` records each declared scope with the broader
//! ones implying it, so a change of hierarchy is judged too.
//!
//! [`check`] is the gate for `cargo test`; [`command`] is the `check` / `write` command line
//! a small bin or example wraps (this repository's: `cargo run --example contract -- check`).
//! The manifest holds no server version and no instructions: they change without breaking
//! anything an agent relies on. (surface serves no prompts yet; when it does, they join it.)
//!
//! ```
//! use serde_json::json;
//! use surface_runtime::mcp::contract::Manifest;
//!
//! let old = Manifest::from_json(&json!({
//!     "tools": { "proc_kill": {
//!         "inputSchema": { "type": "object", "properties": { "pid": { "type": "integer" } }, "required": ["pid"] },
//!         "annotations": { "readOnlyHint": false }
//!     } },
//!     "resources": {}, "templates": {}
//! }).to_string()).unwrap();
//! let mut new = old.clone();
//! new.tools.get_mut("proc_kill").unwrap()["inputSchema"]["properties"]["signal"] = json!({ "type": "string" });
//! new.tools.get_mut("proc_kill").unwrap()["inputSchema"]["required"] = json!(["pid", "signal"]);
//! let changes = Manifest::compare(&old, &new);
//! assert_eq!(changes.breaking, ["tool \"proc_kill\": required input field `signal` was added"]);
//! ```

//!
//! One concern a file: [`Manifest`] and its comparison (`manifest.rs`), a tool's input schemas
//! compared node by node (`schemas.rs`), what changed (`changes.rs`), the gate (`gate.rs`).

mod changes;
mod gate;
mod manifest;
mod schemas;

pub use changes::{Changes, ContractError};
pub use gate::{check, command};
pub use manifest::{FORMAT, Manifest};
