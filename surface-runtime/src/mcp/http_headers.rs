//! The checks of a `POST`'s headers the HTTP bypass makes before it answers one itself: the
//! ones rmcp's service would make (DNS rebinding through `Host`, a browser's `Origin`, the
//! media types of `Accept`, SEP-2243's `Mcp-Method` / `Mcp-Name`), each judged conservatively —
//! a request these pass, rmcp would pass too; anything unusual goes to rmcp, which answers it.

use hyper::header::HeaderName;
use rmcp::model::ClientRequest;

/// The checks of one endpoint: its allowed hosts.
pub(crate) struct HeaderChecks {
    hosts: Vec<AllowedHost>,
}

/// A host allowed in `Host`: a name, and a port when the entry names one.
struct AllowedHost {
    host: String,
    port: Option<u16>,
}

impl HeaderChecks {
    /// The checks of an endpoint served with `config`.
    pub(crate) fn new(config: &rmcp::transport::StreamableHttpServerConfig) -> HeaderChecks {
        let hosts = config
            .allowed_hosts
            .iter()
            .filter_map(|h| {
                let h = h.trim();
                if h.is_empty() {
                    return None;
                }
                Some(match hyper::http::uri::Authority::try_from(h) {
                    Ok(a) => AllowedHost {
                        host: normalize(a.host()),
                        port: a.port_u16(),
                    },
                    Err(_) => AllowedHost {
                        host: normalize(h),
                        port: None,
                    },
                })
            })
            .collect();
        HeaderChecks { hosts }
    }

    /// The DNS-rebinding and media-type checks rmcp makes first, judged conservatively: a
    /// request this passes, rmcp would pass too.
    pub(crate) fn pass(&self, headers: &hyper::HeaderMap) -> bool {
        if headers.contains_key(hyper::header::ORIGIN) {
            return false;
        }
        let Some(Ok(host)) = single(headers, &hyper::header::HOST) else {
            return false;
        };
        let Some((host, port)) = split_authority(host) else {
            return false;
        };
        let allowed = self.hosts.is_empty()
            || self
                .hosts
                .iter()
                .any(|a| a.host.eq_ignore_ascii_case(host) && a.port.is_none_or(|p| port == Some(p)));
        if !allowed {
            return false;
        }
        let (mut json, mut sse) = (false, false);
        for value in headers.get_all(hyper::header::ACCEPT) {
            // What clients send, judged without splitting it.
            if value
                .as_bytes()
                .eq_ignore_ascii_case(b"application/json, text/event-stream")
            {
                (json, sse) = (true, true);
                continue;
            }
            let Ok(value) = value.to_str() else { return false };
            if value.contains('"') {
                return false;
            }
            for entry in value.split(',') {
                // An entry with parameters (a quality of 0, say) is not counted: rmcp decides.
                let entry = entry.trim();
                json |= entry.eq_ignore_ascii_case("application/json");
                sse |= entry.eq_ignore_ascii_case("text/event-stream");
            }
        }
        json && sse
    }
}

/// SEP-2243: `Mcp-Method` names the body's method and `Mcp-Name` its tool, prompt or URI,
/// each exactly once and spelled plainly (rmcp answers anything else, right or wrong).
pub(crate) fn standard_headers_match(headers: &hyper::HeaderMap, request: &ClientRequest) -> bool {
    if single(headers, &MCP_METHOD) != Some(Ok(request.method())) {
        return false;
    }
    let name = match request {
        ClientRequest::CallToolRequest(r) => Some(r.params.name.as_ref()),
        ClientRequest::GetPromptRequest(r) => Some(r.params.name.as_str()),
        ClientRequest::ReadResourceRequest(r) => Some(r.params.uri.as_str()),
        _ => None,
    };
    match name {
        Some(name) => !name.starts_with("=?") && single(headers, &MCP_NAME) == Some(Ok(name)),
        None => true,
    }
}

/// The one value of header `name`: `None` when absent, `Err` when repeated or not text.
pub(crate) fn single<'a>(headers: &'a hyper::HeaderMap, name: &HeaderName) -> Option<Result<&'a str, ()>> {
    let mut values = headers.get_all(name).iter();
    let first = values.next()?;
    if values.next().is_some() {
        return Some(Err(()));
    }
    Some(first.to_str().map_err(|_| ()))
}

pub(crate) const MCP_PROTOCOL_VERSION: HeaderName = HeaderName::from_static("mcp-protocol-version");
const MCP_METHOD: HeaderName = HeaderName::from_static("mcp-method");
const MCP_NAME: HeaderName = HeaderName::from_static("mcp-name");

/// `host[:port]` or `[v6]:port`, strictly: a host allowed by name with digits for a port is an
/// authority rmcp's parse accepts too; anything unusual is `None` (and goes to rmcp).
fn split_authority(value: &str) -> Option<(&str, Option<u16>)> {
    let (host, port) = match value.strip_prefix('[') {
        Some(rest) => rest.split_once(']')?,
        None => match value.rfind(':') {
            Some(i) => value.split_at(i),
            None => (value, ""),
        },
    };
    if port.is_empty() {
        return Some((host, None));
    }
    let digits = port.strip_prefix(':')?;
    if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    Some((host, Some(digits.parse().ok()?)))
}

fn normalize(host: &str) -> String {
    host.trim_matches('[').trim_matches(']').to_ascii_lowercase()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn authorities_split_strictly() {
        assert_eq!(split_authority("localhost"), Some(("localhost", None)));
        assert_eq!(split_authority("127.0.0.1:8080"), Some(("127.0.0.1", Some(8080))));
        assert_eq!(split_authority("[::1]:80"), Some(("::1", Some(80))));
        assert_eq!(split_authority("[::1]"), Some(("::1", None)));
        for odd in [
            "localhost:",
            "localhost:x",
            "localhost:99999",
            "[::1",
            "[::1]x",
            "a:b:c",
        ] {
            assert_eq!(split_authority(odd), None, "{odd}");
        }
    }

    #[test]
    fn accept_must_name_both_media_types_plainly() {
        let checks = HeaderChecks::new(&rmcp::transport::StreamableHttpServerConfig::default());
        let pass = |accept: &[&str], origin: bool| {
            let mut headers = hyper::HeaderMap::new();
            headers.insert(hyper::header::HOST, "localhost:8080".parse().unwrap());
            for a in accept {
                headers.append(hyper::header::ACCEPT, a.parse().unwrap());
            }
            if origin {
                headers.insert(hyper::header::ORIGIN, "http://localhost".parse().unwrap());
            }
            checks.pass(&headers)
        };
        assert!(pass(&["application/json, text/event-stream"], false));
        assert!(pass(&["Application/JSON, Text/Event-Stream"], false));
        assert!(pass(&["text/event-stream , application/json"], false));
        assert!(pass(&["application/json", "text/event-stream"], false));
        assert!(!pass(&["application/json, text/event-stream"], true));
        assert!(!pass(&["application/json"], false));
        assert!(!pass(&["application/json;q=0, text/event-stream"], false));
        assert!(!pass(&["application/json, text/event-stream", "\"x\""], false));
        assert!(!pass(&[], false));
    }
}
