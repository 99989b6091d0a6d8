//! Which era of the protocol a request is of: the one rule every path that answers the two
//! eras differently reads.

use rmcp::RoleServer;
use rmcp::model::ProtocolVersion;
use rmcp::service::RequestContext;

/// Whether `context`'s request is of the 2026-07-28 era (or later): its own `_meta` says so,
/// or the session was opened in it. rmcp's `RequestContext::protocol_version`, compared where
/// it lies rather than cloned out (it is asked on every call).
pub(crate) fn modern(context: &RequestContext<RoleServer>) -> bool {
    let modern = |v: &ProtocolVersion| v.as_str() >= ProtocolVersion::V_2026_07_28.as_str();
    match context.meta.protocol_version() {
        Some(version) => modern(&version),
        None => context
            .peer
            .peer_info()
            .is_some_and(|info| modern(&info.protocol_version)),
    }
}
