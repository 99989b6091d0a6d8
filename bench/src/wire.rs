//! A raw JSON-RPC line client over an in-process duplex: what both sides of an in-process
//! comparison are driven with, so the client costs the same for each.

use rmcp::ServiceExt;
use serde::Deserialize;
use surface::mcp::{Connection, ServedMcp};
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader, DuplexStream, ReadHalf, WriteHalf};

const DUPLEX: usize = 1 << 20;

pub struct Wire {
    w: WriteHalf<DuplexStream>,
    r: BufReader<ReadHalf<DuplexStream>>,
    pub line: String,
    next: u64,
}

#[derive(Deserialize)]
struct Id {
    #[serde(default)]
    id: Option<u64>,
}

impl Wire {
    fn new(io: DuplexStream) -> Wire {
        let (r, w) = tokio::io::split(io);
        Wire {
            w,
            r: BufReader::with_capacity(DUPLEX, r),
            line: String::new(),
            next: 1,
        }
    }

    /// Writes one request (params as JSON text) without waiting; answers its id.
    pub async fn send(&mut self, method: &str, params: &str) -> u64 {
        let id = self.next;
        self.next += 1;
        let line =
            format!("{{\"jsonrpc\":\"2.0\",\"id\":{id},\"method\":\"{method}\",\"params\":{params}}}\n");
        self.w.write_all(line.as_bytes()).await.expect("the server reads");
        id
    }

    pub async fn notify(&mut self, method: &str) {
        let line = format!("{{\"jsonrpc\":\"2.0\",\"method\":\"{method}\"}}\n");
        self.w.write_all(line.as_bytes()).await.expect("the server reads");
    }

    /// The next answer (notifications are skipped); its id. The line stays in `self.line`.
    pub async fn answer(&mut self) -> u64 {
        loop {
            self.line.clear();
            let n = self.r.read_line(&mut self.line).await.expect("the server writes");
            assert!(n > 0, "the server closed the connection");
            if let Ok(Id { id: Some(id) }) = serde_json::from_str::<Id>(&self.line) {
                return id;
            }
        }
    }

    /// The next line, whatever it is (in `self.line`); false at the end of the connection.
    pub async fn next_line(&mut self) -> bool {
        self.line.clear();
        matches!(self.r.read_line(&mut self.line).await, Ok(n) if n > 0)
    }

    /// Reads until the server closes the connection; answers how many notifications came.
    pub async fn drain(mut self) -> usize {
        let mut notifications = 0;
        loop {
            self.line.clear();
            match self.r.read_line(&mut self.line).await {
                Ok(0) | Err(_) => return notifications,
                Ok(_) => notifications += self.line.contains("\"method\":\"notifications/") as usize,
            }
        }
    }

    /// One request and its answer.
    pub async fn call(&mut self, method: &str, params: &str) -> &str {
        let id = self.send(method, params).await;
        let got = self.answer().await;
        assert_eq!(got, id, "answers arrive in order when one is in flight");
        assert!(
            self.line.contains("\"result\"") && !self.line.contains("\"isError\":true"),
            "{method} failed: {}",
            self.line
        );
        &self.line
    }

    async fn initialize(&mut self) {
        self.call(
            "initialize",
            r#"{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"bench","version":"0"}}"#,
        )
        .await;
        self.notify("notifications/initialized").await;
    }
}

/// A connection to a served surface, initialized (legacy era).
pub async fn open_surface(served: &ServedMcp) -> (Wire, Connection) {
    let (client, server) = tokio::io::duplex(DUPLEX);
    let (sr, sw) = tokio::io::split(server);
    let served = served.clone();
    let opening = tokio::spawn(async move { served.serve(sr, sw).await.expect("the connection opens") });
    let mut wire = Wire::new(client);
    wire.initialize().await;
    (wire, opening.await.expect("serve does not panic"))
}

/// A connection to a hand-written rmcp handler, initialized (legacy era).
pub async fn open_handler<H: rmcp::ServerHandler>(
    handler: H,
) -> (Wire, rmcp::service::RunningService<rmcp::RoleServer, H>) {
    let (client, server) = tokio::io::duplex(DUPLEX);
    let opening = tokio::spawn(async move { handler.serve(server).await.expect("the connection opens") });
    let mut wire = Wire::new(client);
    wire.initialize().await;
    (wire, opening.await.expect("serve does not panic"))
}
