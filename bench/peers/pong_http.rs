//! The HTTP round trip's floor: a server that parses nothing it does not have to. It reads a
//! request's head and body off a bare tokio `TcpStream` (on the same `#[tokio::main]` runtime
//! as the servers under test), finds the JSON-RPC `id` and `method` by searching the bytes, and
//! writes a canned answer of the HTTP floor's size and shape (`load_sample`'s, whatever tool
//! is called). No hyper, no JSON parser, no tool: not a server anyone should run. Through
//! `httpload` it shows what the loopback round trip, the runtime's wake-ups and the load
//! generator alone cost, so a ratio against rmcp at one client can be read against what no
//! server could beat here.
//!
//! `pong-http ADDR`

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

/// `load_sample`'s result as the HTTP floor answers it (same bytes, same length).
const SAMPLE: &str = r#"{"content":[{"text":"{\n  \"cpu\": 0.0,\n  \"procs\": 2\n}","type":"text"}],"isError":false,"structuredContent":{"cpu":0.0,"procs":2}}"#;
const INITIALIZED: &str = r#"{"protocolVersion":"2025-11-25","capabilities":{"tools":{}},"serverInfo":{"name":"ops","version":"0.1.0"}}"#;

fn find(haystack: &[u8], needle: &[u8]) -> Option<usize> {
    haystack.windows(needle.len()).position(|w| w == needle)
}

/// The value of header `name` (lower case) in `head`, if present.
fn header<'a>(head: &'a [u8], name: &[u8]) -> Option<&'a [u8]> {
    head.split(|&b| b == b'\n').find_map(|line| {
        let colon = line.iter().position(|&b| b == b':')?;
        line[..colon]
            .eq_ignore_ascii_case(name)
            .then(|| line[colon + 1..].trim_ascii())
    })
}

/// The JSON value after `"key":` in `body`, up to the next `,` or `}` (a number or a string,
/// as the load generator writes them).
fn field<'a>(body: &'a [u8], key: &[u8]) -> Option<&'a [u8]> {
    let at = find(body, key)? + key.len();
    let rest = body[at..]
        .trim_ascii_start()
        .strip_prefix(b":")?
        .trim_ascii_start();
    let end = if rest.first() == Some(&b'"') {
        1 + rest[1..].iter().position(|&b| b == b'"')? + 1
    } else {
        rest.iter().position(|&b| b == b',' || b == b'}')?
    };
    Some(&rest[..end])
}

fn respond(out: &mut Vec<u8>, status: &str, extra: &str, body: &[u8]) {
    out.extend_from_slice(b"HTTP/1.1 ");
    out.extend_from_slice(status.as_bytes());
    out.extend_from_slice(b"\r\ncontent-type: application/json\r\n");
    out.extend_from_slice(extra.as_bytes());
    out.extend_from_slice(format!("content-length: {}\r\n\r\n", body.len()).as_bytes());
    out.extend_from_slice(body);
}

async fn serve(mut tcp: TcpStream, sessions: Arc<AtomicU64>) -> std::io::Result<()> {
    let mut buf = Vec::with_capacity(8192);
    let mut out = Vec::with_capacity(1024);
    loop {
        // One request: the head, then as many body bytes as it says.
        let head_end = loop {
            if let Some(at) = find(&buf, b"\r\n\r\n") {
                break at + 4;
            }
            let mut chunk = [0u8; 4096];
            let n = tcp.read(&mut chunk).await?;
            if n == 0 {
                return Ok(());
            }
            buf.extend_from_slice(&chunk[..n]);
        };
        let length: usize = header(&buf[..head_end], b"content-length")
            .and_then(|v| std::str::from_utf8(v).ok()?.parse().ok())
            .unwrap_or(0);
        while buf.len() < head_end + length {
            let mut chunk = [0u8; 4096];
            let n = tcp.read(&mut chunk).await?;
            if n == 0 {
                return Ok(());
            }
            buf.extend_from_slice(&chunk[..n]);
        }
        let head = &buf[..head_end];
        let body = &buf[head_end..head_end + length];
        out.clear();
        if head.starts_with(b"GET ") {
            // The standalone stream: open, and silent, until the client goes.
            tcp.write_all(
                b"HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\ntransfer-encoding: chunked\r\n\r\n",
            )
            .await?;
            let mut sink = [0u8; 256];
            while tcp.read(&mut sink).await? > 0 {}
            return Ok(());
        } else if head.starts_with(b"DELETE ") {
            respond(&mut out, "200 OK", "", b"");
        } else {
            match field(body, b"\"id\"") {
                // A notification.
                None => respond(&mut out, "202 Accepted", "", b""),
                Some(id) => {
                    let initialize = field(body, b"\"method\"") == Some(b"\"initialize\"");
                    let (result, extra) = if initialize {
                        let n = sessions.fetch_add(1, Ordering::Relaxed);
                        (INITIALIZED, format!("mcp-session-id: {n}\r\n"))
                    } else {
                        (SAMPLE, String::new())
                    };
                    let mut json = Vec::with_capacity(256);
                    json.extend_from_slice(b"{\"jsonrpc\":\"2.0\",\"id\":");
                    json.extend_from_slice(id);
                    json.extend_from_slice(b",\"result\":");
                    json.extend_from_slice(result.as_bytes());
                    json.push(b'}');
                    respond(&mut out, "200 OK", &extra, &json);
                }
            }
        }
        buf.drain(..head_end + length);
        tcp.write_all(&out).await?;
    }
}

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let addr = std::env::args().nth(1).ok_or("usage: pong-http ADDR")?;
    let listener = tokio::net::TcpListener::bind(&addr).await?;
    let sessions = Arc::new(AtomicU64::new(1));
    loop {
        let (tcp, _) = listener.accept().await?;
        let _ = tcp.set_nodelay(true);
        tokio::spawn(serve(tcp, sessions.clone()));
    }
}
