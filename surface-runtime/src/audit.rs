//! The audit trail (`McpServer::audit` on the MCP face, `WireOptions::audit` on the wire
//! face): one structured `tracing` event per mutating call — who, which tool, how it ended,
//! how long it took — at `info` under the target [`AUDIT_TARGET`], so a subscriber can route
//! it apart from the rest. Off by default; arguments only when asked for.

use crate::Principal;
use crate::failure::Failure;
use std::time::Instant;

/// The `tracing` target of audit events: filter on it (`surface::audit=info`) to keep them.
pub const AUDIT_TARGET: &str = "surface::audit";

/// Which calls leave an audit event (`McpServer::audit`, `WireOptions::audit`; default
/// [`Audit::Off`]).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Audit {
    /// No events.
    #[default]
    Off,
    /// One event per call of a mutating tool (`tool(mutates)`, `#[tool(mutates)]`): subject,
    /// tool, outcome, duration. No arguments.
    Mutations,
    /// As [`Mutations`](Audit::Mutations), with the call's arguments as JSON (they may hold
    /// what your logs must not: opt in knowingly).
    MutationsWithArguments,
}

/// One audited call, from its start.
pub(crate) struct Audited {
    started: Instant,
    arguments: Option<String>,
}

impl Audited {
    /// Starts auditing a call of a tool that `mutates`, if `audit` asks for it.
    pub(crate) fn start(audit: Audit, mutates: bool, arguments: impl FnOnce() -> String) -> Option<Audited> {
        if audit == Audit::Off || !mutates {
            return None;
        }
        Some(Audited {
            started: Instant::now(),
            arguments: (audit == Audit::MutationsWithArguments).then(arguments),
        })
    }

    /// The event for a call that answered: `ok`, or `failed: <why>`.
    pub(crate) fn answered<T>(self, principal: Option<&Principal>, tool: &str, answer: &Result<T, Failure>) {
        let outcome = match answer {
            Ok(_) => "ok".to_owned(),
            Err(failure) => format!("failed: {}", failure.message),
        };
        self.end(principal, tool, &outcome);
    }

    /// The event: `outcome` is `ok`, `failed: <why>` or `interrupted`.
    pub(crate) fn end(self, principal: Option<&Principal>, tool: &str, outcome: &str) {
        let duration_ms = self.started.elapsed().as_secs_f64() * 1000.0;
        let (issuer, subject) = principal.map_or(("", "-"), |p| (p.issuer(), p.subject()));
        // An absent `arguments` (None) is not recorded at all.
        tracing::info!(
            target: AUDIT_TARGET,
            subject,
            issuer,
            tool,
            outcome,
            duration_ms,
            arguments = self.arguments.as_deref(),
            "call"
        );
    }
}
