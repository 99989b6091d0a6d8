//! A small MCP-over-Streamable-HTTP client for the HTTP load generators: one HTTP/1.1
//! keep-alive connection per simulated client (hyper's connection-level client, so nothing is
//! pooled or shared behind the harness's back), legacy sessions (`initialize`, then
//! `Mcp-Session-Id` on every request, answers in the `POST`'s response as SSE or JSON,
//! notifications on the standalone `GET` stream) and stateless 2026-07-28 requests
//! (`MCP-Protocol-Version`, `Mcp-Method`, `Mcp-Name` headers and the per-request `_meta`).
//!
//! Also: spawning a server under test on a free port, waiting for it, and reading its memory.

use bytes::Bytes;
use http_body_util::{BodyExt, Full};
use hyper::Request;
use hyper::body::Incoming;
use hyper::client::conn::http1;
use hyper_util::rt::TokioIo;
use serde_json::{Value, json};
use std::net::SocketAddr;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// The legacy protocol version the clients ask for (servers may answer an older one, which is
/// then what the session sends).
pub const LEGACY: &str = "2025-11-25";
/// The stateless era.
pub const MODERN: &str = "2026-07-28";

type Failure = Box<dyn std::error::Error + Send + Sync>;

/// One client: one connection, and (legacy) its session.
pub struct Client {
    sender: http1::SendRequest<Full<Bytes>>,
    host: String,
    path: String,
    /// The session id (legacy), or none (stateless).
    pub session: Option<String>,
    /// The protocol version this client sends.
    pub version: String,
    /// The `Authorization` header sent with every request, when the server requires a token:
    /// built once, as a client holding a token would, so that the generator does not charge
    /// each request for formatting and validating 700-odd bytes (see [`Client::set_bearer`]).
    authorization: Option<hyper::header::HeaderValue>,
    next: u64,
}

/// What one `POST` answered.
pub struct Answer {
    pub status: u16,
    pub session: Option<String>,
    /// The JSON-RPC messages in the body (one for JSON, every `data:` event for SSE).
    pub messages: Vec<Value>,
}

impl Answer {
    /// The message answering `id`.
    pub fn reply(&self, id: u64) -> Option<&Value> {
        self.messages.iter().find(|m| m["id"].as_u64() == Some(id))
    }
}

/// Opens one connection to `addr` (`TCP_NODELAY`, as every server under test sets it).
pub async fn connect(addr: SocketAddr, path: &str) -> Result<Client, Failure> {
    let tcp = tokio::net::TcpStream::connect(addr).await?;
    tcp.set_nodelay(true)?;
    let (sender, conn) = http1::handshake(TokioIo::new(tcp)).await?;
    tokio::spawn(async move {
        let _ = conn.await;
    });
    Ok(Client {
        sender,
        host: addr.to_string(),
        path: path.to_owned(),
        session: None,
        version: MODERN.to_owned(),
        authorization: None,
        next: 1,
    })
}

/// The JSON-RPC messages of an SSE body: every `data:` line's JSON (multi-line `data` joined).
pub fn sse_messages(body: &[u8]) -> Vec<Value> {
    let text = String::from_utf8_lossy(body);
    let mut out = Vec::new();
    let mut data = String::new();
    for line in text.split('\n') {
        let line = line.trim_end_matches('\r');
        if let Some(d) = line.strip_prefix("data:") {
            if !data.is_empty() {
                data.push('\n');
            }
            data.push_str(d.strip_prefix(' ').unwrap_or(d));
        } else if line.is_empty() && !data.is_empty() {
            if let Ok(v) = serde_json::from_str(&data) {
                out.push(v);
            }
            data.clear();
        }
    }
    if let Ok(v) = serde_json::from_str(&data) {
        out.push(v);
    }
    out
}

impl Client {
    fn request(&self, method: &str, accept: &str) -> hyper::http::request::Builder {
        let mut b = Request::builder()
            .method(method)
            .uri(&self.path)
            .header("Host", &self.host)
            .header("Accept", accept)
            .header("MCP-Protocol-Version", &self.version);
        if let Some(s) = &self.session {
            b = b.header("Mcp-Session-Id", s);
        }
        if let Some(authorization) = &self.authorization {
            // A clone of shared bytes, not a copy.
            b = b.header(hyper::header::AUTHORIZATION, authorization.clone());
        }
        b
    }

    /// Sends `token` as a bearer token with every request from now on (none: no header).
    pub fn set_bearer(&mut self, token: Option<&str>) {
        self.authorization = token.map(|token| {
            hyper::header::HeaderValue::try_from(format!("Bearer {token}"))
                .expect("a token is a valid header value")
        });
    }

    async fn send(&mut self, req: Request<Full<Bytes>>) -> Result<hyper::Response<Incoming>, Failure> {
        self.sender.ready().await?;
        Ok(self.sender.send_request(req).await?)
    }

    /// `POST`s one JSON-RPC message and reads the whole answer.
    pub async fn post(&mut self, body: &Value, extra: &[(&str, &str)]) -> Result<Answer, Failure> {
        let mut b = self
            .request("POST", "application/json, text/event-stream")
            .header("Content-Type", "application/json");
        for (k, v) in extra {
            b = b.header(*k, *v);
        }
        let req = b.body(Full::new(Bytes::from(serde_json::to_vec(body)?)))?;
        let resp = self.send(req).await?;
        let status = resp.status().as_u16();
        let session = resp
            .headers()
            .get("mcp-session-id")
            .and_then(|v| v.to_str().ok())
            .map(str::to_owned);
        let sse = resp
            .headers()
            .get("content-type")
            .and_then(|v| v.to_str().ok())
            .is_some_and(|c| c.starts_with("text/event-stream"));
        let bytes = resp.into_body().collect().await?.to_bytes();
        let messages = if sse {
            sse_messages(&bytes)
        } else if bytes.is_empty() {
            Vec::new()
        } else {
            vec![serde_json::from_slice(&bytes)?]
        };
        Ok(Answer {
            status,
            session,
            messages,
        })
    }

    fn id(&mut self) -> u64 {
        self.next += 1;
        self.next
    }

    /// Opens a legacy session: `initialize` (the version the server answers is kept) and
    /// `notifications/initialized`.
    pub async fn initialize(&mut self) -> Result<(), Failure> {
        self.initialize_declaring(json!({})).await
    }

    /// [`initialize`](Self::initialize) for a client that declares `capabilities` (say
    /// `elicitation`, which lets a call ask it something).
    pub async fn initialize_declaring(&mut self, capabilities: Value) -> Result<(), Failure> {
        self.version = LEGACY.to_owned();
        let id = self.id();
        let init = json!({"jsonrpc": "2.0", "id": id, "method": "initialize", "params": {
            "protocolVersion": LEGACY, "capabilities": capabilities,
            "clientInfo": {"name": "surface-bench", "version": "0"}}});
        let answer = self.post(&init, &[]).await?;
        let reply = answer
            .reply(id)
            .ok_or_else(|| format!("initialize: status {}, no answer", answer.status))?;
        if let Some(v) = reply["result"]["protocolVersion"].as_str() {
            self.version = v.to_owned();
        }
        self.session = Some(answer.session.ok_or("initialize: no Mcp-Session-Id")?);
        let done = json!({"jsonrpc": "2.0", "method": "notifications/initialized"});
        let answer = self.post(&done, &[]).await?;
        if !(200..300).contains(&answer.status) {
            return Err(format!("notifications/initialized: status {}", answer.status).into());
        }
        Ok(())
    }

    /// One request in this client's era; the result, or an error naming what came back.
    pub async fn call(&mut self, method: &str, params: Value, name: Option<&str>) -> Result<Value, Failure> {
        let id = self.id();
        let mut params = params;
        let stateless = self.session.is_none();
        if stateless {
            params["_meta"] = json!({
                "io.modelcontextprotocol/protocolVersion": MODERN,
                "io.modelcontextprotocol/clientCapabilities": {},
                "io.modelcontextprotocol/clientInfo": {"name": "surface-bench", "version": "0"},
            });
        }
        let body = json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params});
        let mut headers = Vec::new();
        if stateless {
            headers.push(("Mcp-Method", method));
            if let Some(n) = name {
                headers.push(("Mcp-Name", n));
            }
        }
        let answer = self.post(&body, &headers).await?;
        match answer.reply(id) {
            Some(m) if m.get("result").is_some() => Ok(m["result"].clone()),
            Some(m) => Err(format!("{method}: {m}").into()),
            None => Err(format!("{method}: status {}, no answer", answer.status).into()),
        }
    }

    /// `tools/call name args`; an `isError` result is a failure.
    pub async fn call_tool(&mut self, name: &str, args: Value) -> Result<Value, Failure> {
        let result = self
            .call("tools/call", json!({"name": name, "arguments": args}), Some(name))
            .await?;
        if result["isError"] == json!(true) {
            return Err(format!("{name}: {result}").into());
        }
        Ok(result)
    }

    /// Ends the legacy session (`DELETE`).
    pub async fn delete(&mut self) -> Result<(), Failure> {
        if self.session.is_some() {
            let req = self
                .request("DELETE", "application/json, text/event-stream")
                .body(Full::new(Bytes::new()))?;
            let resp = self.send(req).await?;
            let _ = resp.into_body().collect().await;
        }
        Ok(())
    }

    /// Opens the session's standalone `GET` SSE stream on this connection (which it then
    /// occupies): the body, once the server answered 200.
    pub async fn listen(&mut self) -> Result<Incoming, Failure> {
        let req = self
            .request("GET", "text/event-stream")
            .body(Full::new(Bytes::new()))?;
        let resp = self.send(req).await?;
        if resp.status() != 200 {
            return Err(format!("GET stream: status {}", resp.status()).into());
        }
        Ok(resp.into_body())
    }
}

/// A server under test: a child process serving HTTP on a free loopback port.
pub struct Server {
    pub child: Child,
    pub addr: SocketAddr,
    /// The bearer token every client of this server sends, when it requires one.
    pub bearer: Option<String>,
}

impl Server {
    /// Spawns `argv` with `{addr}` / `{port}` replaced by a free loopback address, pinned to
    /// `cpu` when given, and waits until it accepts connections.
    pub fn spawn(argv: &[String], cpu: Option<usize>) -> Result<Server, Failure> {
        let port = std::net::TcpListener::bind("127.0.0.1:0")?.local_addr()?.port();
        let addr: SocketAddr = ([127, 0, 0, 1], port).into();
        let argv: Vec<String> = argv
            .iter()
            .map(|a| {
                a.replace("{addr}", &addr.to_string())
                    .replace("{port}", &port.to_string())
            })
            .collect();
        let mut cmd = Command::new(&argv[0]);
        cmd.args(&argv[1..])
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null());
        if let Some(cpu) = cpu {
            use std::os::unix::process::CommandExt;
            // SAFETY: only sched_setaffinity, async-signal-safe, between fork and exec.
            unsafe {
                cmd.pre_exec(move || {
                    pin(cpu);
                    Ok(())
                });
            }
        }
        let child = cmd.spawn()?;
        let mut server = Server {
            child,
            addr,
            bearer: None,
        };
        let deadline = Instant::now() + Duration::from_secs(60);
        while std::net::TcpStream::connect(addr).is_err() {
            if Instant::now() > deadline || server.child.try_wait()?.is_some() {
                let _ = server.child.kill();
                return Err(format!("{argv:?} did not serve at {addr}").into());
            }
            std::thread::sleep(Duration::from_millis(50));
        }
        Ok(server)
    }

    /// Resident memory now and at its peak (KiB), from `/proc`.
    pub fn rss_kib(&self) -> (u64, u64) {
        memory(&self.child.id().to_string())
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Resident memory now and at its peak (`VmRSS`, `VmHWM`, KiB) of process `pid` (`self` for
/// this one), from `/proc`.
pub fn memory(pid: &str) -> (u64, u64) {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap_or_default();
    let field = |name: &str| {
        status
            .lines()
            .find_map(|l| l.strip_prefix(name))
            .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
            .unwrap_or(0)
    };
    (field("VmRSS:"), field("VmHWM:"))
}

/// Pins the calling thread (or, before exec, the process) to one CPU, when there is more than one.
pub fn pin(cpu: usize) {
    // SAFETY: a zeroed cpu_set_t is valid; CPU_SET writes within it.
    unsafe {
        let mut set: libc::cpu_set_t = std::mem::zeroed();
        libc::CPU_SET(cpu, &mut set);
        libc::sched_setaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &set);
    }
}

/// The value at quantile `q` of sorted `v`.
pub fn quantile(v: &[f64], q: f64) -> f64 {
    if v.is_empty() {
        return f64::NAN;
    }
    v[((v.len() - 1) as f64 * q).round() as usize]
}

/// The median of `v` (NaN when empty).
pub fn median(mut v: Vec<f64>) -> f64 {
    v.retain(|x| x.is_finite());
    v.sort_by(|a, b| a.partial_cmp(b).unwrap());
    quantile(&v, 0.5)
}
