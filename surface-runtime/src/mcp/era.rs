//! Which era of the protocol a request is of: the one rule every path that answers the two
//! eras differently reads.

use super::handler_context::HandlerContext;
use rmcp::model::{ProtocolVersion, RequestMetaObject};
use rmcp::{Peer, RoleServer};

/// The `_meta` key a request names its protocol version under.
const VERSION_KEY: &str = "io.modelcontextprotocol/protocolVersion";

/// The protocol version `meta` names: rmcp's `RequestMetaObject::protocol_version`, read in
/// place (that decodes any JSON string into an owned one, and is asked several times a call).
pub(crate) fn named_version(meta: &RequestMetaObject) -> Option<&str> {
    meta.0.0.get(VERSION_KEY).and_then(serde_json::Value::as_str)
}

/// Whether `version` is of the 2026-07-28 era or later (ISO dates compare as strings).
pub(crate) fn is_modern(version: &str) -> bool {
    version >= ProtocolVersion::V_2026_07_28.as_str()
}

/// Whether `context`'s request is of the 2026-07-28 era (or later): its own `_meta` says so,
/// or the session was opened in it. rmcp's `RequestContext::protocol_version`, compared where
/// it lies rather than cloned out (it is asked on every call).
pub(crate) fn modern(context: &HandlerContext) -> bool {
    named_and_modern(context).1
}

/// The version `context`'s request names ([`named_version`]) and whether the request is
/// [`modern`]: both from one read, for a caller that needs both.
pub(crate) fn named_and_modern(context: &HandlerContext) -> (Option<&str>, bool) {
    named_and_modern_of(&context.meta, &context.peer)
}

/// [`modern`] for a request whose `_meta` is `meta`, of the session whose peer is `peer` (a
/// request rmcp's loop hands over as its own context).
pub(crate) fn modern_of(meta: &RequestMetaObject, peer: &Peer<RoleServer>) -> bool {
    named_and_modern_of(meta, peer).1
}

fn named_and_modern_of<'a>(meta: &'a RequestMetaObject, peer: &Peer<RoleServer>) -> (Option<&'a str>, bool) {
    let named = named_version(meta);
    let modern = match named {
        Some(version) => is_modern(version),
        None => peer
            .peer_info()
            .is_some_and(|info| is_modern(info.protocol_version.as_str())),
    };
    (named, modern)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_named_version_reads_as_rmcp_decodes_it() {
        for named in [
            serde_json::json!("2026-07-28"),
            serde_json::json!("2025-06-18"),
            serde_json::json!("not a date"),
            serde_json::json!(20260728),
            serde_json::json!(null),
            serde_json::json!({"v": 1}),
        ] {
            let mut meta = RequestMetaObject::default();
            meta.0.0.insert(VERSION_KEY.into(), named.clone());
            let decoded = meta.protocol_version();
            assert_eq!(
                named_version(&meta),
                decoded.as_ref().map(ProtocolVersion::as_str),
                "{named}"
            );
        }
        assert_eq!(named_version(&RequestMetaObject::default()), None);
    }
}
