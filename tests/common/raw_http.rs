//! One HTTP/1.1 exchange on a fresh TCP connection, written by hand: for tests that need to
//! send what no well-behaved client sends, or to see the raw SSE an answer comes in.

use serde_json::Value;
use std::net::SocketAddr;
use std::time::Duration;
use tokio::io::{AsyncReadExt, AsyncWriteExt};

/// Sends `method /mcp` with `headers` and `body` (`Connection: close`) and answers the whole
/// raw response (head and body), which must arrive within `within`.
pub async fn exchange(
    addr: SocketAddr,
    method: &str,
    headers: &[(&str, &str)],
    body: &str,
    within: Duration,
) -> String {
    exchange_at(addr, method, "/mcp", headers, body, within).await
}

/// [`exchange`] with a request target other than `/mcp`.
pub async fn exchange_at(
    addr: SocketAddr,
    method: &str,
    target: &str,
    headers: &[(&str, &str)],
    body: &str,
    within: Duration,
) -> String {
    let mut stream = tokio::net::TcpStream::connect(addr).await.unwrap();
    let mut head = format!(
        "{method} {target} HTTP/1.1\r\nHost: {addr}\r\nConnection: close\r\nContent-Length: {}\r\n",
        body.len()
    );
    for (name, value) in headers {
        head.push_str(&format!("{name}: {value}\r\n"));
    }
    head.push_str("\r\n");
    stream.write_all(head.as_bytes()).await.unwrap();
    stream.write_all(body.as_bytes()).await.unwrap();
    let mut raw = Vec::new();
    tokio::time::timeout(within, stream.read_to_end(&mut raw))
        .await
        .unwrap_or_else(|_| panic!("the server answers and closes within {within:?}"))
        .unwrap();
    String::from_utf8_lossy(&raw).into_owned()
}

/// `bin args…` as a child serving Streamable HTTP: the child (killed on drop) and the address
/// it reports on stderr (`… http://ADDR/mcp …`). The rest of its stderr is drained.
pub async fn spawn_serving(bin: &std::path::Path, args: &[&str]) -> (tokio::process::Child, SocketAddr) {
    spawn_serving_with(bin, args, &[]).await
}

/// [`spawn_serving`] with `env` set for the child.
pub async fn spawn_serving_with(
    bin: &std::path::Path,
    args: &[&str],
    env: &[(&str, &str)],
) -> (tokio::process::Child, SocketAddr) {
    use tokio::io::AsyncBufReadExt;
    let mut child = tokio::process::Command::new(bin)
        .args(args)
        .envs(env.iter().copied())
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .unwrap();
    let mut stderr = tokio::io::BufReader::new(child.stderr.take().unwrap()).lines();
    let addr = tokio::time::timeout(Duration::from_secs(60), async {
        while let Some(line) = stderr.next_line().await.unwrap() {
            if let Some(url) = line.split("http://").nth(1) {
                let url = url.split_whitespace().next().unwrap_or_default();
                return url.trim_end_matches("/mcp").parse().unwrap();
            }
        }
        panic!("{} exited without serving HTTP", bin.display());
    })
    .await
    .expect("the server reports its address");
    // Keep draining stderr so the child never blocks on it.
    tokio::spawn(async move { while let Ok(Some(_)) = stderr.next_line().await {} });
    (child, addr)
}

/// One answer: status, headers (lower-cased names), body.
#[derive(Debug)]
pub struct Answer {
    pub status: u16,
    pub headers: Vec<(String, String)>,
    pub body: String,
}

impl Answer {
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, v)| v.as_str())
    }

    /// The JSON-RPC message in the body: plain JSON, or the first SSE `data:` line.
    pub fn message(&self) -> Value {
        let text = self
            .body
            .lines()
            .find_map(|l| l.strip_prefix("data: ").filter(|d| d.starts_with('{')))
            .unwrap_or(&self.body);
        serde_json::from_str(text).unwrap_or_else(|e| panic!("not JSON ({e}): {self:?}"))
    }
}

/// Sends one request on a fresh connection (`Connection: close`) and reads the whole answer.
pub async fn http(addr: SocketAddr, method: &str, headers: &[(&str, &str)], body: &str) -> Answer {
    http_at(addr, method, "/mcp", headers, body).await
}

/// [`http`] with a request target other than `/mcp`.
pub async fn http_at(
    addr: SocketAddr,
    method: &str,
    target: &str,
    headers: &[(&str, &str)],
    body: &str,
) -> Answer {
    let raw = exchange_at(addr, method, target, headers, body, Duration::from_secs(10)).await;
    let (head, body) = raw.split_once("\r\n\r\n").unwrap_or((&raw, ""));
    let mut lines = head.lines();
    let status = lines.next().unwrap().split(' ').nth(1).unwrap().parse().unwrap();
    let headers = lines
        .filter_map(|l| l.split_once(':'))
        .map(|(n, v)| (n.trim().to_ascii_lowercase(), v.trim().to_owned()))
        .collect::<Vec<_>>();
    let body = if headers
        .iter()
        .any(|(n, v)| n == "transfer-encoding" && v == "chunked")
    {
        dechunk(body)
    } else {
        body.to_owned()
    };
    Answer {
        status,
        headers,
        body,
    }
}

fn dechunk(mut body: &str) -> String {
    let mut out = String::new();
    while let Some((size, rest)) = body.split_once("\r\n") {
        let Ok(n) = usize::from_str_radix(size.trim(), 16) else {
            break;
        };
        if n == 0 || rest.len() < n {
            break;
        }
        out.push_str(&rest[..n]);
        body = rest[n..].trim_start_matches("\r\n");
    }
    out
}

/// Opens a legacy (2025-11-25) session at `/mcp` and says `notifications/initialized`:
/// its `Mcp-Session-Id`.
pub async fn legacy_session(addr: SocketAddr) -> String {
    legacy_open(addr).await.0
}

/// [`legacy_session`], with the `initialize` answer's `result`.
pub async fn legacy_open(addr: SocketAddr) -> (String, Value) {
    let init = serde_json::json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
        "protocolVersion": "2025-11-25", "capabilities": {},
        "clientInfo": {"name": "raw", "version": "0"}}});
    let answer = http(addr, "POST", &[JSON, ACCEPT], &init.to_string()).await;
    assert_eq!(answer.status, 200, "{answer:?}");
    let session = answer
        .header("mcp-session-id")
        .expect("a stateful session")
        .to_owned();
    let initialized = serde_json::json!({"jsonrpc": "2.0", "method": "notifications/initialized"});
    let result = answer.message()["result"].clone();
    let answer = legacy_post(addr, &session, &initialized).await;
    assert_eq!(answer.status, 202, "{answer:?}");
    (session, result)
}

/// `message` posted to `/mcp` in the legacy `session`.
pub async fn legacy_post(addr: SocketAddr, session: &str, message: &Value) -> Answer {
    let headers = [
        JSON,
        ACCEPT,
        ("Mcp-Session-Id", session),
        ("MCP-Protocol-Version", "2025-11-25"),
    ];
    http(addr, "POST", &headers, &message.to_string()).await
}

const JSON: (&str, &str) = ("Content-Type", "application/json");
const ACCEPT: (&str, &str) = ("Accept", "application/json, text/event-stream");

/// A 2026-07-28 request (`params` with its `_meta` already) as one `POST`, with the headers
/// SEP-2243 asks for (`Mcp-Method`, and `Mcp-Name` when the body names a tool or a task): the
/// JSON-RPC answer.
pub async fn modern(addr: SocketAddr, method: &str, params: Value) -> Value {
    let name = params["name"]
        .as_str()
        .or(params["taskId"].as_str())
        .map(str::to_owned);
    let body = serde_json::json!({"jsonrpc": "2.0", "id": 1, "method": method, "params": params});
    let mut headers = vec![
        ("Content-Type", "application/json"),
        ("Accept", "application/json, text/event-stream"),
        ("MCP-Protocol-Version", "2026-07-28"),
        ("Mcp-Method", method),
    ];
    if let Some(name) = &name {
        headers.push(("Mcp-Name", name));
    }
    http(addr, "POST", &headers, &body.to_string()).await.message()
}

/// One 2026-07-28 `subscriptions/listen` POST of `body` to `addr`'s `/mcp`, read as its SSE
/// events arrive.
pub struct Listen {
    tcp: tokio::net::TcpStream,
    raw: String,
    seen: usize,
}

impl Listen {
    pub async fn open(addr: SocketAddr, body: &Value) -> Listen {
        let headers = [
            ("Content-Type", "application/json"),
            ("Accept", "application/json, text/event-stream"),
            ("MCP-Protocol-Version", "2026-07-28"),
            ("Mcp-Method", "subscriptions/listen"),
        ];
        Listen::post(addr, &headers, body).await
    }

    /// Any POST of `body` with `headers` to `addr`'s `/mcp`, read as its SSE events arrive.
    pub async fn post(addr: SocketAddr, headers: &[(&str, &str)], body: &Value) -> Listen {
        let body = body.to_string();
        let mut tcp = tokio::net::TcpStream::connect(addr).await.unwrap();
        let mut head = format!("POST /mcp HTTP/1.1\r\nHost: {addr}\r\n");
        for (name, value) in headers {
            head.push_str(&format!("{name}: {value}\r\n"));
        }
        head.push_str(&format!("Content-Length: {}\r\n\r\n", body.len()));
        tcp.write_all(head.as_bytes()).await.unwrap();
        tcp.write_all(body.as_bytes()).await.unwrap();
        Listen {
            tcp,
            raw: String::new(),
            seen: 0,
        }
    }

    /// The standalone `GET` stream of the legacy `session` at `addr`'s `/mcp`, resuming after
    /// `last` (`Last-Event-ID`) when given.
    #[allow(dead_code)] // not every test binary opens one
    pub async fn standalone(addr: SocketAddr, session: &str, last: Option<&str>) -> Listen {
        let mut tcp = tokio::net::TcpStream::connect(addr).await.unwrap();
        let resume = last.map_or(String::new(), |id| format!("Last-Event-ID: {id}\r\n"));
        let head = format!(
            "GET /mcp HTTP/1.1\r\nHost: {addr}\r\nAccept: text/event-stream\r\nMcp-Session-Id: {session}\r\nMCP-Protocol-Version: 2025-11-25\r\n{resume}\r\n"
        );
        tcp.write_all(head.as_bytes()).await.unwrap();
        Listen {
            tcp,
            raw: String::new(),
            seen: 0,
        }
    }

    /// The response's head and what was read of its body so far.
    pub fn raw(&self) -> &str {
        &self.raw
    }

    /// The next JSON-RPC message of the stream (each SSE event is one `data:` line; a priming
    /// event, whose `data` is empty, is none).
    pub async fn next(&mut self) -> Value {
        self.next_within(Duration::from_secs(20))
            .await
            .expect("an event in time")
    }

    /// The next JSON-RPC message of the stream, if one arrives within `within`.
    pub async fn next_within(&mut self, within: Duration) -> Option<Value> {
        let deadline = tokio::time::Instant::now() + within;
        loop {
            // A priming event's `data` is empty: it carries no message.
            let lines: Vec<&str> = self
                .raw
                .lines()
                .filter(|l| l.starts_with("data: ") && l.len() > "data: ".len())
                .collect();
            let complete = lines
                .get(self.seen)
                .and_then(|l| serde_json::from_str::<Value>(&l["data: ".len()..]).ok());
            if let Some(message) = complete {
                self.seen += 1;
                return Some(message);
            }
            let mut buf = [0u8; 4096];
            let n = match tokio::time::timeout_at(deadline, self.tcp.read(&mut buf)).await {
                Ok(read) => read.unwrap(),
                Err(_) => return None,
            };
            assert!(n > 0, "the stream ended: {}", self.raw);
            self.raw.push_str(&String::from_utf8_lossy(&buf[..n]));
        }
    }
}
