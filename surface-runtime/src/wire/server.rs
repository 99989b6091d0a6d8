//! Serving a surface over the wire: a unix socket (many connections) or a pair of streams
//! such as a child's stdio (one connection).

use super::protocol::{Hello, MAX_FRAME, Reply, ReplyFrame, Request, RequestFrame, WIRE_VERSION};
use crate::expose::{ErasedExpose, Expose, Exposure};
use crate::failure::{Failure, FailureKind};
use crate::surface::Surface;
use futures::{SinkExt, StreamExt};
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use tokio::io::{AsyncRead, AsyncWrite};
use tokio::net::UnixListener;
use tokio::sync::mpsc;
use tokio::task::JoinHandle;
use tokio_util::codec::{FramedRead, FramedWrite, LinesCodec};

/// A surface served on a unix socket; dropping it (or [`WireServer::close`]) stops accepting
/// and removes the socket file.
pub struct WireServer {
    path: PathBuf,
    accept: JoinHandle<()>,
}

impl WireServer {
    /// The socket's path.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Stops accepting connections and removes the socket file.
    pub fn close(self) {}
}

impl Drop for WireServer {
    fn drop(&mut self) {
        self.accept.abort();
        let _ = std::fs::remove_file(&self.path);
    }
}

/// Serves `surface` through `expose` on a unix socket at `path` (a stale socket file is
/// replaced). Only what `expose` names is reachable; anything else answers as if it did not
/// exist.
///
/// ```no_run
/// # async fn f<S: surface_runtime::Surface>(surface: std::sync::Arc<S>, expose: surface_runtime::Expose<S>) {
/// let server = surface_runtime::wire::serve_unix_socket("/tmp/ops.sock", surface, expose).unwrap();
/// # drop(server);
/// # }
/// ```
pub fn serve_unix_socket<S: Surface>(
    path: impl AsRef<Path>,
    surface: Arc<S>,
    expose: Expose<S>,
) -> std::io::Result<WireServer> {
    let path = path.as_ref().to_owned();
    if path.exists() {
        std::fs::remove_file(&path)?;
    }
    let listener = UnixListener::bind(&path)?;
    let expose = expose.erase();
    let accept = tokio::spawn(async move {
        while let Ok((stream, _)) = listener.accept().await {
            let (r, w) = stream.into_split();
            tokio::spawn(serve_connection(surface.clone(), expose, r, w));
        }
    });
    Ok(WireServer { path, accept })
}

/// Serves `surface` on one connection made of `reader` and `writer` (e.g. this process's
/// stdin and stdout, for `ssh host app serve`), until the reader ends.
pub async fn serve_streams<S, R, W>(surface: Arc<S>, expose: Expose<S>, reader: R, writer: W)
where
    S: Surface,
    R: AsyncRead + Send + Unpin + 'static,
    W: AsyncWrite + Send + Unpin + 'static,
{
    serve_connection(surface, expose.erase(), reader, writer).await
}

fn hidden(surface: &str, what: &str, name: &str) -> Failure {
    // An unexposed name answers exactly like a name the surface never had.
    Failure::new(
        FailureKind::Unknown,
        format!("{surface} has no {what} \"{name}\""),
    )
}

async fn serve_connection<S, R, W>(surface: Arc<S>, expose: ErasedExpose, reader: R, writer: W)
where
    S: Surface,
    R: AsyncRead + Send + Unpin + 'static,
    W: AsyncWrite + Send + Unpin + 'static,
{
    let (tx, mut rx) = mpsc::channel::<ReplyFrame>(1024);
    let mut sink = FramedWrite::new(writer, LinesCodec::new_with_max_length(MAX_FRAME));
    let writer_task = tokio::spawn(async move {
        while let Some(frame) = rx.recv().await {
            let Ok(line) = serde_json::to_string(&frame) else {
                continue;
            };
            // Feed what is queued, flush once: one write for a burst of replies.
            if sink.feed(line).await.is_err() {
                return;
            }
            while let Ok(frame) = rx.try_recv() {
                let Ok(line) = serde_json::to_string(&frame) else {
                    continue;
                };
                if sink.feed(line).await.is_err() {
                    return;
                }
            }
            if SinkExt::<String>::flush(&mut sink).await.is_err() {
                return;
            }
        }
    });
    let hello = Hello {
        surface: S::NAME.to_owned(),
        wire: WIRE_VERSION,
    };
    let greeting = serde_json::to_value(hello).expect("a greeting serializes");
    if tx
        .send(ReplyFrame {
            id: 0,
            reply: Reply::Ok(greeting),
        })
        .await
        .is_err()
    {
        return;
    }

    let watches: Arc<Mutex<HashMap<u64, JoinHandle<()>>>> = Arc::default();
    let mut lines = FramedRead::new(reader, LinesCodec::new_with_max_length(MAX_FRAME));
    while let Some(Ok(line)) = lines.next().await {
        let frame: RequestFrame = match serde_json::from_str(&line) {
            Ok(f) => f,
            Err(e) => {
                let f = Failure::new(
                    FailureKind::InvalidInput { field: String::new() },
                    format!("bad frame: {e}"),
                );
                let id = serde_json::from_str::<serde_json::Value>(&line)
                    .ok()
                    .and_then(|v| v.get("id").and_then(|i| i.as_u64()))
                    .unwrap_or(0);
                let _ = tx
                    .send(ReplyFrame {
                        id,
                        reply: Reply::Err(f),
                    })
                    .await;
                continue;
            }
        };
        let id = frame.id;
        if matches!(frame.request, Request::Watch { .. } | Request::Unwatch { .. }) {
            // In order: a watch is open before any request read after it runs, so a change
            // caused by a later call is never missed.
            if let Some(reply) = handle(&surface, expose, frame, &tx, &watches).await {
                let _ = tx.send(ReplyFrame { id, reply }).await;
            }
            continue;
        }
        let (surface, tx, watches) = (surface.clone(), tx.clone(), watches.clone());
        tokio::spawn(async move {
            if let Some(reply) = handle(&surface, expose, frame, &tx, &watches).await {
                let _ = tx.send(ReplyFrame { id, reply }).await;
            }
        });
    }
    for (_, w) in watches
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
        .drain()
    {
        w.abort();
    }
    drop(tx);
    let _ = writer_task.await;
}

async fn handle<S: Surface>(
    surface: &Arc<S>,
    expose: ErasedExpose,
    frame: RequestFrame,
    tx: &mpsc::Sender<ReplyFrame>,
    watches: &Arc<Mutex<HashMap<u64, JoinHandle<()>>>>,
) -> Option<Reply> {
    let resource = |member: &str| {
        let visible = expose.get(member) == Some(Exposure::Resource);
        surface
            .member(member)
            .filter(|_| visible)
            .ok_or_else(|| hidden(S::NAME, "member", member))
    };
    let result = match frame.request {
        Request::Read { member } => resource(&member).map(|m| m.read()),
        Request::ReadItem { member, item } => resource(&member).and_then(|m| m.read_item(&item)),
        Request::Call { procedure, input } => {
            if matches!(expose.get(&procedure), Some(Exposure::Tool { .. })) {
                surface.call(&procedure, input).await
            } else {
                Err(hidden(S::NAME, "procedure", &procedure))
            }
        }
        Request::Watch { member } => match resource(&member) {
            Ok(m) => {
                let mut changes = m.changes();
                let (tx, id) = (tx.clone(), frame.id);
                // Acknowledge before any change can be sent on this id.
                let _ = tx
                    .send(ReplyFrame {
                        id,
                        reply: Reply::Ok(serde_json::Value::Null),
                    })
                    .await;
                let task = tokio::spawn(async move {
                    while let Some(change) = changes.next().await {
                        if tx
                            .send(ReplyFrame {
                                id,
                                reply: Reply::Change(change),
                            })
                            .await
                            .is_err()
                        {
                            return;
                        }
                    }
                });
                watches
                    .lock()
                    .unwrap_or_else(std::sync::PoisonError::into_inner)
                    .insert(id, task);
                return None;
            }
            Err(f) => Err(f),
        },
        Request::Unwatch { watch } => {
            if let Some(task) = watches
                .lock()
                .unwrap_or_else(std::sync::PoisonError::into_inner)
                .remove(&watch)
            {
                task.abort();
            }
            Ok(serde_json::Value::Null)
        }
    };
    Some(match result {
        Ok(v) => Reply::Ok(v),
        Err(f) => Reply::Err(f),
    })
}
