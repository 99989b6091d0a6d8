//! The authorization server's documents (metadata, key set, introspection answers), fetched
//! with hyper's HTTP/1 client — already in the tree for the server side, so no second HTTP
//! stack — every fetch bounded in size and time.

use base64::Engine as _;
use bytes::Bytes;
use http_body_util::{BodyExt, Full, Limited};
use hyper::{Method, Request, StatusCode, Uri};
use hyper_util::rt::TokioIo;
use serde_json::Value;
use std::time::Duration;

/// The largest document read from an authorization server (1 MiB); a larger one is refused.
pub const MAX_DOCUMENT: usize = 1024 * 1024;

/// How long one fetch from an authorization server may take, connection to last byte (5 s).
pub const FETCH_TIMEOUT: Duration = Duration::from_secs(5);

/// The issuer's authorization server metadata: RFC 8414's
/// `/.well-known/oauth-authorization-server` (inserted before the issuer's path), else OpenID's
/// `<issuer>/.well-known/openid-configuration`, whichever it serves. The document must name
/// `issuer` exactly (RFC 8414 §3.3), so a server cannot hand out another's keys.
pub(super) async fn issuer_metadata(issuer: &str) -> Result<Value, String> {
    let uri: Uri = issuer
        .parse()
        .map_err(|e| format!("the issuer {issuer} is not a URL: {e}"))?;
    let (Some(scheme), Some(authority)) = (uri.scheme_str(), uri.authority()) else {
        return Err(format!("the issuer {issuer} is not an absolute URL"));
    };
    let path = uri.path().trim_end_matches('/');
    let candidates = [
        format!("{scheme}://{authority}/.well-known/oauth-authorization-server{path}"),
        format!(
            "{}/.well-known/openid-configuration",
            issuer.trim_end_matches('/')
        ),
    ];
    let mut failures = Vec::new();
    for url in candidates {
        match get_json(&url).await {
            Ok(document) if document.get("issuer").and_then(Value::as_str) == Some(issuer) => {
                return Ok(document);
            }
            Ok(document) => failures.push(format!(
                "{url} names the issuer {} instead",
                document.get("issuer").unwrap_or(&Value::Null)
            )),
            Err(e) => failures.push(e),
        }
    }
    Err(format!(
        "no metadata for the issuer {issuer}: {}",
        failures.join("; ")
    ))
}

/// `GET url`, a JSON document.
pub(super) async fn get_json(url: &str) -> Result<Value, String> {
    fetch(url, Method::GET, None, None).await
}

/// `POST url` with a form body and HTTP Basic credentials, a JSON answer.
pub(super) async fn post_form(
    url: &str,
    form: &[(&str, &str)],
    basic: (&str, &str),
) -> Result<Value, String> {
    let body = form
        .iter()
        .map(|(k, v)| format!("{}={}", form_encode(k), form_encode(v)))
        .collect::<Vec<_>>()
        .join("&");
    // RFC 6749 §2.3.1: the client id and secret are form-encoded before they are joined.
    let credentials = format!("{}:{}", form_encode(basic.0), form_encode(basic.1));
    let basic = base64::engine::general_purpose::STANDARD.encode(credentials);
    fetch(url, Method::POST, Some(body), Some(basic)).await
}

async fn fetch(
    url: &str,
    method: Method,
    form: Option<String>,
    basic: Option<String>,
) -> Result<Value, String> {
    match tokio::time::timeout(FETCH_TIMEOUT, fetch_unbounded_in_time(url, method, form, basic)).await {
        Ok(answer) => answer,
        Err(_) => Err(format!(
            "{url} did not answer within {} s",
            FETCH_TIMEOUT.as_secs()
        )),
    }
}

async fn fetch_unbounded_in_time(
    url: &str,
    method: Method,
    form: Option<String>,
    basic: Option<String>,
) -> Result<Value, String> {
    let uri: Uri = url.parse().map_err(|e| format!("{url} is not a URL: {e}"))?;
    match uri.scheme_str() {
        Some("http") => {}
        Some(other) => {
            return Err(format!(
                "{url}: the {other} scheme is not supported (authorization servers are reached over http://; put a TLS-terminating proxy in front of a remote one)"
            ));
        }
        None => return Err(format!("{url} has no scheme")),
    }
    let authority = uri
        .authority()
        .ok_or_else(|| format!("{url} has no host"))?
        .clone();
    let port = authority.port_u16().unwrap_or(80);
    let host = authority.host().trim_start_matches('[').trim_end_matches(']');
    let stream = tokio::net::TcpStream::connect((host, port))
        .await
        .map_err(|e| format!("could not connect to {authority}: {e}"))?;
    let (mut sender, connection) = hyper::client::conn::http1::handshake(TokioIo::new(stream))
        .await
        .map_err(|e| format!("{authority}: {e}"))?;
    let driver = AbortOnDrop(tokio::spawn(async move {
        let _ = connection.await;
    }));
    let path = uri.path_and_query().map_or("/", |p| p.as_str());
    let mut request = Request::builder()
        .method(method)
        .uri(path)
        .header(hyper::header::HOST, authority.as_str())
        .header(hyper::header::ACCEPT, "application/json");
    if let Some(basic) = basic {
        request = request.header(hyper::header::AUTHORIZATION, format!("Basic {basic}"));
    }
    let body = match form {
        Some(form) => {
            request = request.header(hyper::header::CONTENT_TYPE, "application/x-www-form-urlencoded");
            Bytes::from(form)
        }
        None => Bytes::new(),
    };
    let request = request.body(Full::new(body)).map_err(|e| format!("{url}: {e}"))?;
    let response = sender
        .send_request(request)
        .await
        .map_err(|e| format!("{url}: {e}"))?;
    let status = response.status();
    let body = Limited::new(response.into_body(), MAX_DOCUMENT)
        .collect()
        .await
        .map_err(|e| {
            if e.is::<http_body_util::LengthLimitError>() {
                format!("{url} answered more than {MAX_DOCUMENT} bytes")
            } else {
                format!("{url}: {e}")
            }
        })?
        .to_bytes();
    drop(driver);
    if status != StatusCode::OK {
        return Err(format!("{url} answered {status}"));
    }
    serde_json::from_slice(&body).map_err(|e| format!("{url} did not answer JSON: {e}"))
}

/// Ends the connection's task with the fetch, however the fetch ends.
struct AbortOnDrop(tokio::task::JoinHandle<()>);

impl Drop for AbortOnDrop {
    fn drop(&mut self) {
        self.0.abort();
    }
}

/// `application/x-www-form-urlencoded` for one key or value.
fn form_encode(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for byte in text.bytes() {
        match byte {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'.' | b'_' | b'*' => out.push(byte as char),
            b' ' => out.push('+'),
            _ => out.push_str(&format!("%{byte:02X}")),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn forms_encode_reserved_bytes() {
        assert_eq!(form_encode("a b+c/d=é"), "a+b%2Bc%2Fd%3D%C3%A9");
        assert_eq!(form_encode("AZaz09-._*"), "AZaz09-._*");
    }

    #[tokio::test]
    async fn other_schemes_are_refused_before_connecting() {
        let e = get_json("https://auth.example/jwks").await.unwrap_err();
        assert!(e.contains("https scheme is not supported"), "{e}");
    }
}
