//! The Streamable HTTP face under a broken or hostile client: raw HTTP/1.1 over real TCP,
//! against the ops example as a child process and against `serve_http` in this process
//! (`SURFACE_TEST_OPS=/path/to/ops` picks another build of the example).

mod common;

#[allow(dead_code)]
#[path = "../examples/ops.rs"]
mod ops;

use common::raw_http::{Answer, http};
use serde_json::{Value, json};
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;
use surface::mcp::HttpOptions;

const JSON: (&str, &str) = ("Content-Type", "application/json");
const ACCEPT: (&str, &str) = ("Accept", "application/json, text/event-stream");

/// A legacy `initialize`: the answer (with its `Mcp-Session-Id`).
async fn initialize(addr: SocketAddr) -> Answer {
    let body = json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-11-25", "capabilities": {},
        "clientInfo": {"name": "hardening", "version": "0"}}});
    http(addr, "POST", &[JSON, ACCEPT], &body.to_string()).await
}

async fn session(addr: SocketAddr) -> String {
    let answer = initialize(addr).await;
    assert_eq!(answer.status, 200, "{answer:?}");
    answer
        .header("mcp-session-id")
        .expect("a stateful session")
        .to_owned()
}

async fn list_tools(addr: SocketAddr, session: &str) -> Answer {
    let body = json!({"jsonrpc": "2.0", "id": 2, "method": "tools/list", "params": {}});
    http(
        addr,
        "POST",
        &[
            JSON,
            ACCEPT,
            ("Mcp-Session-Id", session),
            ("MCP-Protocol-Version", "2025-11-25"),
        ],
        &body.to_string(),
    )
    .await
}

async fn delete(addr: SocketAddr, session: &str) -> Answer {
    http(
        addr,
        "DELETE",
        &[
            ("Mcp-Session-Id", session),
            ("MCP-Protocol-Version", "2025-11-25"),
        ],
        "",
    )
    .await
}

/// `ops --http 127.0.0.1:0` as a child: the child and the address it reports.
async fn ops_http() -> (tokio::process::Child, SocketAddr) {
    common::raw_http::spawn_serving(&common::ops_binary(), &["--http", "127.0.0.1:0"]).await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn deleting_a_session_that_is_not_there_answers_404() {
    let (_child, addr) = ops_http().await;
    let id = session(addr).await;
    assert_eq!(list_tools(addr, &id).await.status, 200);
    let first = delete(addr, &id).await;
    assert_eq!(first.status, 200, "{first:?}");
    let again = delete(addr, &id).await;
    assert_eq!(again.status, 404, "an already-deleted session: {again:?}");
    assert_eq!(list_tools(addr, &id).await.status, 404, "as POST answers");
    let never = delete(addr, "no-such-session").await;
    assert_eq!(never.status, 404, "an unknown session: {never:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_body_that_is_not_json_rpc_answers_400_with_a_jsonrpc_error() {
    let (_child, addr) = ops_http().await;
    let truncated = http(
        addr,
        "POST",
        &[JSON, ACCEPT],
        r#"{"jsonrpc":"2.0","id":1,"method":"#,
    )
    .await;
    assert_eq!(truncated.status, 400, "{truncated:?}");
    let error = truncated.message();
    assert_eq!(error["error"]["code"], -32700, "{error}");
    assert_eq!(error["id"], Value::Null, "{error}");

    let not_a_message = http(addr, "POST", &[JSON, ACCEPT], r#"{"id":7,"hello":true}"#).await;
    assert_eq!(not_a_message.status, 400, "{not_a_message:?}");
    let error = not_a_message.message();
    assert_eq!(error["error"]["code"], -32600, "{error}");
    assert_eq!(error["id"], 7, "{error}");

    // The checks that come first keep their answers: a wrong Content-Type is still 415.
    let wrong_type = http(addr, "POST", &[("Content-Type", "text/plain"), ACCEPT], "{").await;
    assert_eq!(wrong_type.status, 415, "{wrong_type:?}");
    // And a good request on the same server still works.
    assert_eq!(initialize(addr).await.status, 200);
}

/// The ops MCP server over HTTP in this process, with `options` bound to a free port.
async fn serve(options: HttpOptions) -> (surface::mcp::HttpServer, SocketAddr) {
    let served = ops::mcp_server(Arc::new(ops::Ops::new())).start().unwrap();
    let server = served.serve_http(options).await.unwrap();
    let addr = server.local_addr();
    (server, addr)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sessions_are_capped_and_a_full_server_says_so() {
    let (_server, addr) = serve(HttpOptions::loopback(0).max_sessions(2)).await;
    let a = session(addr).await;
    let _b = session(addr).await;
    let full = initialize(addr).await;
    assert_eq!(full.status, 503, "{full:?}");
    let error = full.message();
    assert_eq!(error["error"]["code"], -32000, "{error}");
    let message = error["error"]["message"].as_str().unwrap();
    assert!(message.contains("already holds 2 sessions"), "{message}");
    // Stateless (2026-07-28) requests never count against the cap.
    let discover = http(
        addr,
        "POST",
        &[JSON, ACCEPT, ("MCP-Protocol-Version", "2026-07-28")],
        &json!({"jsonrpc": "2.0", "id": 3, "method": "server/discover", "params": {}}).to_string(),
    )
    .await;
    assert_ne!(discover.status, 503, "{discover:?}");
    // Ending one makes room.
    assert_eq!(delete(addr, &a).await.status, 200);
    assert_eq!(initialize(addr).await.status, 200);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_idle_session_expires_and_frees_its_place() {
    let options = HttpOptions::loopback(0)
        .max_sessions(1)
        .session_idle_timeout(Some(Duration::from_secs(2)));
    let (_server, addr) = serve(options).await;
    let id = session(addr).await;
    assert_eq!(initialize(addr).await.status, 503, "the one place is taken");
    tokio::time::sleep(Duration::from_secs(4)).await;
    assert_eq!(list_tools(addr, &id).await.status, 404, "the idle session ended");
    assert_eq!(initialize(addr).await.status, 200, "its place is free again");
}

/// `HttpOptions::max_body` is honoured below its default: a body over it answers `413`, a
/// body under it is served.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_lower_body_limit_is_honoured() {
    let (_server, addr) = serve(HttpOptions::loopback(0).max_body(1024)).await;
    let padded = json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-11-25", "capabilities": {"experimental": {"pad": "x".repeat(2048)}},
        "clientInfo": {"name": "hardening", "version": "0"}}});
    let refused = http(addr, "POST", &[JSON, ACCEPT], &padded.to_string()).await;
    assert_eq!(refused.status, 413, "{refused:?}");
    assert!(refused.body.contains("1024 bytes"), "{refused:?}");
    assert_eq!(initialize(addr).await.status, 200);
}

/// A complete keep-alive `ping` request (stateless 2026-07-28, so it needs no session).
fn ping_request(addr: SocketAddr) -> String {
    let body = json!({"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": {"_meta": {
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": {},
        "io.modelcontextprotocol/clientInfo": {"name": "hardening", "version": "0"}}}})
    .to_string();
    format!(
        "POST /mcp HTTP/1.1\r\nHost: {addr}\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\nMCP-Protocol-Version: 2026-07-28\r\nMcp-Method: tools/list\r\nContent-Length: {}\r\n\r\n{body}",
        body.len()
    )
}

/// Reads from `stream` until a whole response head has arrived, or `within` passes; answers
/// what was read (empty when the server closed or said nothing).
async fn read_head(stream: &mut tokio::net::TcpStream, within: Duration) -> String {
    use tokio::io::AsyncReadExt;
    let mut got = Vec::new();
    let _ = tokio::time::timeout(within, async {
        let mut buf = [0u8; 4096];
        loop {
            match stream.read(&mut buf).await {
                Ok(0) | Err(_) => return,
                Ok(n) => got.extend_from_slice(&buf[..n]),
            }
            if got.windows(4).any(|w| w == b"\r\n\r\n") {
                return;
            }
        }
    })
    .await;
    String::from_utf8_lossy(&got).into_owned()
}

/// Whether the server closes `stream` (a read ends; what is left of an answer is skipped)
/// within `within`.
async fn closed_within(stream: &mut tokio::net::TcpStream, within: Duration) -> bool {
    use tokio::io::AsyncReadExt;
    let mut buf = [0u8; 4096];
    tokio::time::timeout(within, async {
        while let Ok(n @ 1..) = stream.read(&mut buf).await {
            let _ = n;
        }
    })
    .await
    .is_ok()
}

/// `max_connections(N)`: N open connections are served; connection N+1 is accepted by the
/// kernel but not served until one of the N closes, and then it is.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn connections_are_capped_and_the_next_waits_for_a_free_place() {
    use tokio::io::AsyncWriteExt;
    const N: usize = 4;
    let (_server, addr) = serve(HttpOptions::loopback(0).max_connections(N)).await;
    let mut held = Vec::new();
    for _ in 0..N {
        let mut stream = tokio::net::TcpStream::connect(addr).await.unwrap();
        stream.write_all(ping_request(addr).as_bytes()).await.unwrap();
        let head = read_head(&mut stream, Duration::from_secs(10)).await;
        assert!(head.starts_with("HTTP/1.1 200"), "{head:?}");
        held.push(stream);
    }
    let mut next = tokio::net::TcpStream::connect(addr).await.unwrap();
    next.write_all(ping_request(addr).as_bytes()).await.unwrap();
    let waiting = read_head(&mut next, Duration::from_millis(1500)).await;
    assert_eq!(waiting, "", "connection N+1 was served while N were open");
    drop(held.pop());
    let head = read_head(&mut next, Duration::from_secs(10)).await;
    assert!(
        head.starts_with("HTTP/1.1 200"),
        "served once a place was free: {head:?}"
    );
}

/// `header_read_timeout`: a client sending its head a byte at a time is closed once the
/// timeout has passed since its first byte; one that sends its head in time is served.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_slow_head_is_closed_at_the_header_read_timeout() {
    use tokio::io::AsyncWriteExt;
    let options = HttpOptions::loopback(0)
        .header_read_timeout(Duration::from_secs(1))
        .keep_alive_timeout(Duration::from_secs(30));
    let (_server, addr) = serve(options).await;
    let request = ping_request(addr);
    let mut slow = Vec::new();
    for _ in 0..3 {
        let mut stream = tokio::net::TcpStream::connect(addr).await.unwrap();
        stream.write_all(b"P").await.unwrap();
        slow.push(stream);
    }
    let started = std::time::Instant::now();
    // A byte every 200 ms: never the whole head within the second.
    let mut sent = 1;
    while started.elapsed() < Duration::from_millis(800) {
        tokio::time::sleep(Duration::from_millis(200)).await;
        for stream in &mut slow {
            let _ = stream.write_all(&request.as_bytes()[sent..sent + 1]).await;
        }
        sent += 1;
    }
    for stream in &mut slow {
        assert!(
            closed_within(stream, Duration::from_secs(3)).await,
            "a slow head outlived the header-read timeout"
        );
    }
    assert!(started.elapsed() < Duration::from_secs(4));
    let mut prompt = tokio::net::TcpStream::connect(addr).await.unwrap();
    tokio::time::sleep(Duration::from_millis(300)).await;
    prompt.write_all(request.as_bytes()).await.unwrap();
    let head = read_head(&mut prompt, Duration::from_secs(10)).await;
    assert!(head.starts_with("HTTP/1.1 200"), "{head:?}");
}

/// `keep_alive_timeout`: a kept-alive connection with no request for longer than the timeout
/// is closed; one whose next request comes in time is served again. A fresh connection that
/// never sends a byte is closed the same way.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_idle_connection_is_closed_at_the_keep_alive_timeout() {
    use tokio::io::AsyncWriteExt;
    let options = HttpOptions::loopback(0)
        .header_read_timeout(Duration::from_secs(30))
        .keep_alive_timeout(Duration::from_secs(1));
    let (_server, addr) = serve(options).await;
    let request = ping_request(addr);
    let mut busy = tokio::net::TcpStream::connect(addr).await.unwrap();
    let mut idle = tokio::net::TcpStream::connect(addr).await.unwrap();
    let silent = tokio::net::TcpStream::connect(addr).await.unwrap();
    for stream in [&mut busy, &mut idle] {
        stream.write_all(request.as_bytes()).await.unwrap();
        let head = read_head(stream, Duration::from_secs(10)).await;
        assert!(head.starts_with("HTTP/1.1 200"), "{head:?}");
    }
    // Drain the rest of each first answer, then keep one connection busy twice a second.
    for _ in 0..4 {
        tokio::time::sleep(Duration::from_millis(500)).await;
        busy.write_all(request.as_bytes()).await.unwrap();
        let head = read_head(&mut busy, Duration::from_secs(10)).await;
        assert!(
            head.contains("HTTP/1.1 200"),
            "a kept-alive connection in use is served: {head:?}"
        );
    }
    assert!(
        closed_within(&mut idle, Duration::from_secs(2)).await,
        "an idle kept-alive connection outlived the keep-alive timeout"
    );
    let mut silent = silent;
    assert!(closed_within(&mut silent, Duration::from_secs(2)).await);
}
