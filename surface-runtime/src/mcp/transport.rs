//! The stdio transport `serve_stdio` hands rmcp's service loop instead of an
//! `(AsyncRead, AsyncWrite)` pair (measured in BENCHMARKS.md, where it was prototyped as
//! `bench/peers/fast_transport.rs`). Three changes against rmcp's `AsyncRwTransport`:
//!
//! - method-first parsing: peek at `method`, and parse a `tools/call` line straight into
//!   `JsonRpcRequest<CallToolRequest>` (rmcp's own deserializer, `_meta` and all) instead of
//!   through the 22-variant untagged `ClientRequest`, which fails 13 variants first, each
//!   building a formatted serde error; every other line takes rmcp's generic parse;
//! - batched writes: `send` serializes on the caller's task and queues the bytes; one writer
//!   task writes everything queued with one `write` (a `writev`-free, single syscall batch);
//! - bounded in flight: `receive` takes a permit per request and each answer gives one back,
//!   so a client that pipelines thousands of calls cannot make the server buffer them all.

use rmcp::RoleServer;
use rmcp::model::{
    CallToolRequest, ClientJsonRpcMessage, ClientRequest, JsonRpcMessage, JsonRpcRequest,
    ServerJsonRpcMessage,
};
use rmcp::transport::Transport;
use serde::Deserialize;
use std::borrow::Cow;
use std::io;
use std::sync::Arc;
use tokio::io::{AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt};
use tokio::sync::{Semaphore, mpsc};

const IN_FLIGHT: usize = 512;
const BATCH: usize = 256 * 1024;

/// `receive` is cancel-safe (rmcp's loop selects on it): bytes read stay in `buf`, and a
/// parsed message waiting for its permit stays in `pending`.
pub(crate) struct FastTransport<R> {
    reader: R,
    buf: Vec<u8>,
    start: usize,
    pending: Option<ClientJsonRpcMessage>,
    tx: mpsc::Sender<Vec<u8>>,
    permits: Arc<Semaphore>,
}

impl<R: AsyncRead + Send + Unpin + 'static> FastTransport<R> {
    pub(crate) fn new<W: AsyncWrite + Send + Unpin + 'static>(reader: R, writer: W) -> Self {
        let (tx, rx) = mpsc::channel(IN_FLIGHT * 2);
        tokio::spawn(write_batches(rx, writer));
        FastTransport {
            reader,
            buf: Vec::with_capacity(64 * 1024),
            start: 0,
            pending: None,
            tx,
            permits: Arc::new(Semaphore::new(IN_FLIGHT)),
        }
    }
}

async fn write_batches<W: AsyncWrite + Unpin>(mut rx: mpsc::Receiver<Vec<u8>>, mut out: W) {
    let mut batch = Vec::with_capacity(BATCH);
    while let Some(first) = rx.recv().await {
        batch.clear();
        batch.extend_from_slice(&first);
        while batch.len() < BATCH {
            match rx.try_recv() {
                Ok(more) => batch.extend_from_slice(&more),
                Err(_) => break,
            }
        }
        if out.write_all(&batch).await.is_err() || out.flush().await.is_err() {
            return;
        }
    }
}

#[derive(Deserialize)]
struct Peek<'a> {
    #[serde(borrow, default)]
    method: Option<Cow<'a, str>>,
}

fn parse(line: &[u8]) -> Option<ClientJsonRpcMessage> {
    let peek = serde_json::from_slice::<Peek>(line).ok()?;
    if peek.method.as_deref() == Some("tools/call")
        && let Ok(r) = serde_json::from_slice::<JsonRpcRequest<CallToolRequest>>(line)
    {
        return Some(JsonRpcMessage::request(ClientRequest::from(r.request), r.id));
    }
    serde_json::from_slice::<ClientJsonRpcMessage>(line).ok()
}

impl<R: AsyncRead + Send + Unpin + 'static> Transport<RoleServer> for FastTransport<R> {
    type Error = io::Error;

    fn send(
        &mut self,
        item: ServerJsonRpcMessage,
    ) -> impl Future<Output = Result<(), io::Error>> + Send + 'static {
        let answer = matches!(item, JsonRpcMessage::Response(_) | JsonRpcMessage::Error(_));
        let bytes = serde_json::to_vec(&item).map_err(io::Error::other);
        let tx = self.tx.clone();
        let permits = self.permits.clone();
        async move {
            let mut bytes = bytes?;
            bytes.push(b'\n');
            tx.send(bytes)
                .await
                .map_err(|_| io::Error::from(io::ErrorKind::BrokenPipe))?;
            if answer {
                permits.add_permits(1);
            }
            Ok(())
        }
    }

    async fn receive(&mut self) -> Option<ClientJsonRpcMessage> {
        loop {
            if self.pending.is_none() {
                let Some(end) = self.buf[self.start..].iter().position(|&b| b == b'\n') else {
                    // Compact, then read more (read_buf is cancel-safe).
                    self.buf.drain(..self.start);
                    self.start = 0;
                    self.buf.reserve(64 * 1024);
                    if self.reader.read_buf(&mut self.buf).await.ok()? == 0 {
                        return None;
                    }
                    continue;
                };
                let line = &self.buf[self.start..self.start + end];
                self.pending = parse(line.trim_ascii());
                self.start += end + 1;
                if self.pending.is_none() {
                    continue;
                }
            }
            match self.pending.as_ref()? {
                JsonRpcMessage::Request(_) => self.permits.acquire().await.ok()?.forget(),
                // A cancelled request is never answered: give its permit back.
                JsonRpcMessage::Notification(n)
                    if matches!(
                        n.notification,
                        rmcp::model::ClientNotification::CancelledNotification(_)
                    ) =>
                {
                    self.permits.add_permits(1)
                }
                _ => {}
            }
            return self.pending.take();
        }
    }

    async fn close(&mut self) -> Result<(), io::Error> {
        Ok(())
    }
}
