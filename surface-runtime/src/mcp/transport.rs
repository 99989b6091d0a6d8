//! A stdio transport for rmcp's service loop — what `surface-runtime`'s `serve_stdio` hands
//! rmcp instead of an `(AsyncRead, AsyncWrite)` pair (see BENCHMARKS.md). Three changes against
//! rmcp's `AsyncRwTransport`, and its wire behaviour kept:
//!
//! - method-first parsing: peek at `method`, and parse a `tools/call` line straight into
//!   `JsonRpcRequest<CallToolRequest>` (rmcp's own deserializer, `_meta` and all) instead of
//!   through the 22-variant untagged `ClientRequest`, which fails 13 variants first, each
//!   building a formatted serde error; every other line takes rmcp's generic parse;
//! - batched writes: `send` serializes on the caller's task and queues the bytes; one writer
//!   task writes everything queued with one `write_all`;
//! - bounded in flight: `receive` takes a permit per request and each answer gives one back,
//!   so a client that pipelines thousands of calls cannot make the server buffer them all.
//!
//! Kept from `AsyncRwTransport`: a UTF-8 BOM and a trailing CR are stripped, empty lines
//! skipped, input that is not JSON ignored, JSON that is not a JSON-RPC message answered with
//! -32600 `Invalid request` (`id: null`) unless it carries no `id` (rmcp also drops the
//! non-standard notifications; this drops every unparsable notification), lines over 16 MiB
//! dropped. And `close` waits for the writer: rmcp drains the answers of in-flight requests at
//! EOF through `send` and then calls `close`, so a writer still behind a slow reader must finish
//! before the process may exit (a no-op `close` lost 80 % of 2,000 answers piped to a slow
//! reader).

use rmcp::RoleServer;
use rmcp::model::{
    CallToolRequest, ClientJsonRpcMessage, ClientNotification, ClientRequest, ErrorData, JsonRpcMessage,
    JsonRpcRequest, ServerJsonRpcMessage,
};
use rmcp::transport::Transport;
use serde::Deserialize;
use serde_json::value::RawValue;
use std::borrow::Cow;
use std::io;
use std::sync::Arc;
use std::time::Duration;
use tokio::io::{AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt};
use tokio::sync::{Semaphore, mpsc};
use tokio::task::JoinHandle;

const IN_FLIGHT: usize = 512;
const BATCH: usize = 256 * 1024;
const MAX_LINE: usize = 16 * 1024 * 1024;
/// How long `close` waits for queued answers to reach a reader (rmcp's own EOF drain is 5 s).
const CLOSE_WAIT: Duration = Duration::from_secs(5);
const UTF8_BOM: &[u8] = b"\xEF\xBB\xBF";

/// `receive` is cancel-safe (rmcp's loop selects on it): bytes read stay in `buf`, a parsed
/// message waiting for its permit stays in `pending`, an owed -32600 stays in `invalid`.
pub(crate) struct FastTransport<R> {
    reader: R,
    buf: Vec<u8>,
    start: usize,
    /// Dropping the rest of an oversized line.
    skipping: bool,
    pending: Option<ClientJsonRpcMessage>,
    invalid: bool,
    tx: Option<mpsc::Sender<Vec<u8>>>,
    writer: Option<JoinHandle<()>>,
    permits: Arc<Semaphore>,
}

impl<R: AsyncRead + Send + Unpin + 'static> FastTransport<R> {
    pub(crate) fn new<W: AsyncWrite + Send + Unpin + 'static>(reader: R, writer: W) -> Self {
        let (tx, rx) = mpsc::channel(IN_FLIGHT * 2);
        FastTransport {
            reader,
            buf: Vec::with_capacity(64 * 1024),
            start: 0,
            skipping: false,
            pending: None,
            invalid: false,
            tx: Some(tx),
            writer: Some(tokio::spawn(write_batches(rx, writer))),
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
    #[serde(borrow, default)]
    id: Option<&'a RawValue>,
}

#[allow(clippy::large_enum_variant)] // a transient return value
enum Parsed {
    Message(ClientJsonRpcMessage),
    /// Not JSON, or a notification that did not parse: nothing to answer.
    Ignore,
    /// JSON with an `id` that is no JSON-RPC message: -32600.
    Invalid,
}

fn syntax(e: &serde_json::Error) -> bool {
    matches!(
        e.classify(),
        serde_json::error::Category::Syntax | serde_json::error::Category::Eof
    )
}

fn parse(line: &[u8]) -> Parsed {
    let line = line.strip_prefix(UTF8_BOM).unwrap_or(line);
    let peek = match serde_json::from_slice::<Peek>(line) {
        Ok(p) => p,
        Err(e) if syntax(&e) => return Parsed::Ignore,
        Err(_) => return Parsed::Invalid, // JSON, but not an object
    };
    if peek.method.as_deref() == Some("tools/call")
        && let Ok(r) = serde_json::from_slice::<JsonRpcRequest<CallToolRequest>>(line)
    {
        return Parsed::Message(JsonRpcMessage::request(ClientRequest::from(r.request), r.id));
    }
    match serde_json::from_slice::<ClientJsonRpcMessage>(line) {
        Ok(m) => Parsed::Message(m),
        Err(e) if syntax(&e) || peek.id.is_none() => Parsed::Ignore,
        Err(_) => Parsed::Invalid,
    }
}

fn frame(item: &ServerJsonRpcMessage) -> io::Result<Vec<u8>> {
    let mut bytes = serde_json::to_vec(item).map_err(io::Error::other)?;
    bytes.push(b'\n');
    Ok(bytes)
}

fn closed() -> io::Error {
    io::Error::from(io::ErrorKind::BrokenPipe)
}

impl<R: AsyncRead + Send + Unpin + 'static> Transport<RoleServer> for FastTransport<R> {
    type Error = io::Error;

    fn send(
        &mut self,
        item: ServerJsonRpcMessage,
    ) -> impl Future<Output = Result<(), io::Error>> + Send + 'static {
        let answer = matches!(item, JsonRpcMessage::Response(_) | JsonRpcMessage::Error(_));
        let bytes = frame(&item);
        let tx = self.tx.clone();
        let permits = self.permits.clone();
        async move {
            tx.ok_or_else(closed)?.send(bytes?).await.map_err(|_| closed())?;
            if answer {
                permits.add_permits(1);
            }
            Ok(())
        }
    }

    async fn receive(&mut self) -> Option<ClientJsonRpcMessage> {
        loop {
            if self.invalid {
                let error = JsonRpcMessage::error(ErrorData::invalid_request("Invalid request", None), None);
                // mpsc `send` is cancel-safe: cancelled, nothing was sent and the flag stays.
                self.tx.as_ref()?.send(frame(&error).ok()?).await.ok()?;
                self.invalid = false;
            }
            if self.pending.is_none() {
                let Some(end) = self.buf[self.start..].iter().position(|&b| b == b'\n') else {
                    self.buf.drain(..self.start);
                    self.start = 0;
                    if self.buf.len() > MAX_LINE {
                        // Too long: drop it and everything up to its newline.
                        self.buf.clear();
                        self.skipping = true;
                    }
                    self.buf.reserve(64 * 1024);
                    // read_buf is cancel-safe: bytes read are in `buf`, or nothing was read.
                    if self.reader.read_buf(&mut self.buf).await.ok()? == 0 {
                        return None;
                    }
                    continue;
                };
                let line = &self.buf[self.start..self.start + end];
                self.start += end + 1;
                if std::mem::take(&mut self.skipping) {
                    continue;
                }
                let line = line.strip_suffix(b"\r").unwrap_or(line);
                if line.trim_ascii().is_empty() {
                    continue;
                }
                match parse(line) {
                    Parsed::Message(m) => self.pending = Some(m),
                    Parsed::Ignore => continue,
                    Parsed::Invalid => {
                        self.invalid = true;
                        continue;
                    }
                }
            }
            match self.pending.as_ref()? {
                JsonRpcMessage::Request(_) => self.permits.acquire().await.ok()?.forget(),
                // rmcp drops the answer of a cancelled request: give its permit back.
                JsonRpcMessage::Notification(n)
                    if matches!(n.notification, ClientNotification::CancelledNotification(_)) =>
                {
                    self.permits.add_permits(1)
                }
                _ => {}
            }
            return self.pending.take();
        }
    }

    /// Stops taking answers and waits until the writer has written every queued one.
    async fn close(&mut self) -> Result<(), io::Error> {
        drop(self.tx.take());
        if let Some(mut writer) = self.writer.take()
            && tokio::time::timeout(CLOSE_WAIT, &mut writer).await.is_err()
        {
            writer.abort();
        }
        Ok(())
    }
}
