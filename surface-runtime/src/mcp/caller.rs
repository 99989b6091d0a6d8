//! Who makes a request: the principal a face identified for it (an authenticated HTTP
//! request's), read from the request's extensions.

use rmcp::model::Extensions;
use std::sync::Arc;

/// The principal in a set of extensions (rmcp's or HTTP's, two types): shared, as the HTTP
/// face's authentication puts it (one per verified token, never copied per request), or plain,
/// as a mounted service's own layer may.
macro_rules! shared_principal {
    ($extensions:expr) => {
        $extensions
            .get::<Arc<crate::Principal>>()
            .cloned()
            .or_else(|| $extensions.get::<crate::Principal>().cloned().map(Arc::new))
    };
}

/// The caller a face identified for this request (an authenticated HTTP request's), if any: put
/// in the request's `extensions` by the direct path, or in its HTTP parts on rmcp's.
pub(crate) fn principal(extensions: &Extensions) -> Option<Arc<crate::Principal>> {
    let direct = shared_principal!(extensions);
    #[cfg(feature = "http")]
    let direct = direct.or_else(|| {
        extensions
            .get::<hyper::http::request::Parts>()
            .and_then(|parts| shared_principal!(parts.extensions))
    });
    direct
}
