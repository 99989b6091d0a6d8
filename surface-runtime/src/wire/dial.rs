//! Dialing a served surface: the greeting checked against the surface dialled, the connection's
//! reader and writer started, and the entry points (a unix socket, a child's stdio).

use super::batches::write_batches;
use super::protocol::{Hello, MAX_FRAME, Reply, ReplyFrame, Request, WIRE_VERSION};
use crate::batch::BATCH;
use crate::failure::Failure;
use crate::surface::{Surface, SurfaceClient};
use crate::sync::lock;
use futures::StreamExt;
use std::collections::HashMap;
use std::path::Path;
use std::sync::atomic::AtomicU64;
use std::sync::{Arc, Mutex};
use tokio::io::{AsyncRead, AsyncWrite};
use tokio::sync::mpsc;
use tokio_util::codec::{FramedRead, LinesCodec};

use super::client::{CloseSignal, Inner, OwnedConnection, SocketDispatch, transport};
use super::dial_options::{DialOptions, spoken};

/// Opens a connection to a served `S` over `reader`/`writer`: waits for the greeting and
/// checks it names `S`. The returned signal fires when the transport goes away.
async fn connect<S, R, W>(
    reader: R,
    writer: W,
    options: &DialOptions,
) -> Result<(SocketDispatch, CloseSignal), Failure>
where
    S: Surface,
    R: AsyncRead + Send + Unpin + 'static,
    W: AsyncWrite + Send + Unpin + 'static,
{
    let closed = CloseSignal::new();
    let (lines_tx, mut lines_rx) = mpsc::unbounded_channel::<String>();
    let writer_closed = closed.clone();
    tokio::spawn(async move {
        let (mut writer, mut nothing) = (writer, ());
        let line = |line: String, batch: &mut Vec<u8>| {
            batch.extend_from_slice(line.as_bytes());
            batch.push(b'\n');
            0
        };
        tokio::select! {
            wrote = write_batches(&mut lines_rx, &mut writer, BATCH, line, &mut nothing) => {
                if wrote.is_err() {
                    writer_closed.close();
                }
            }
            _ = writer_closed.closed() => {}
        }
    });
    let inner = Arc::new(Inner {
        spec: &S::SPEC,
        lines: lines_tx,
        next_id: AtomicU64::new(1),
        pending: Mutex::new(HashMap::new()),
        watches: Mutex::new(HashMap::new()),
        closed: closed.clone(),
        call_timeout: options.call_timeout,
        watch_buffer: options.watch_buffer,
    });
    let mut frames = FramedRead::new(reader, LinesCodec::new_with_max_length(MAX_FRAME));
    let greeting = tokio::time::timeout(options.greeting_timeout, frames.next()).await;
    let hello: Hello = match greeting {
        Ok(Some(Ok(line))) => match serde_json::from_str::<ReplyFrame>(&line) {
            Ok(ReplyFrame {
                id: 0,
                reply: Reply::Ok(v),
            }) => serde_json::from_value(v)
                .map_err(|e| transport(false, format!("the served side's greeting did not decode: {e}")))?,
            // Refused in place of the greeting (a uid the daemon does not grant): its sentence.
            Ok(ReplyFrame {
                id: 0,
                reply: Reply::Err(refusal),
            }) => {
                closed.close();
                return Err(refusal);
            }
            _ => {
                return Err(transport(
                    false,
                    format!("the served side did not greet: {line:?}"),
                ));
            }
        },
        Ok(_) => {
            return Err(transport(
                false,
                "the served side closed the connection before greeting",
            ));
        }
        Err(_) => {
            closed.close();
            return Err(transport(
                false,
                format!(
                    "the served side did not greet within {}",
                    spoken(options.greeting_timeout)
                ),
            ));
        }
    };
    if hello.surface != S::NAME || hello.wire != WIRE_VERSION {
        closed.close();
        return Err(transport(
            false,
            format!(
                "the served side is {} (wire {}), not {} (wire {WIRE_VERSION})",
                hello.surface,
                hello.wire,
                S::NAME
            ),
        ));
    }
    let reader_inner = inner.clone();
    tokio::spawn(async move {
        while let Some(Ok(line)) = frames.next().await {
            let Ok(frame) = serde_json::from_str::<ReplyFrame>(&line) else {
                continue;
            };
            match frame.reply {
                Reply::Change(c) => {
                    let watches = lock(&reader_inner.watches);
                    if let Some(feed) = watches.get(&frame.id) {
                        feed.offer(c);
                    }
                }
                Reply::Progress(p) => {
                    // Advisory: a caller that has not taken the last few misses the next.
                    let pending = lock(&reader_inner.pending);
                    if let Some(inbox) = pending.get(&frame.id).and_then(|w| w.progress.as_ref()) {
                        inbox.offer(p);
                    }
                }
                reply => {
                    let waiter = lock(&reader_inner.pending).remove(&frame.id);
                    match waiter {
                        Some(waiter) => {
                            let _ = waiter.answer.send(reply);
                        }
                        // An open watch's final frame (the server shutting down): it ends.
                        None => {
                            lock(&reader_inner.watches).remove(&frame.id);
                        }
                    }
                }
            }
        }
        // The transport is gone: every waiter learns its outcome is unknown, every watch ends.
        reader_inner.closed.close();
        lock(&reader_inner.pending).clear();
        lock(&reader_inner.watches).clear();
    });
    let dispatch = SocketDispatch { inner };
    if let Some(scopes) = &options.scopes {
        let narrowed = dispatch
            .request(Request::Narrow {
                scopes: scopes.clone(),
            })
            .await;
        if let Err(f) = narrowed {
            closed.close();
            return Err(f);
        }
    }
    Ok((dispatch, closed))
}

/// Dials a surface served on a unix socket ([`super::serve_unix_socket`]).
///
/// ```no_run
/// # async fn f<S: surface_runtime::Surface>() -> Result<(), surface_runtime::Failure> {
/// let connection = surface_runtime::wire::dial_unix_socket::<S>("/tmp/ops.sock").await?;
/// let on_close = connection.on_close();
/// # Ok(()) }
/// ```
pub async fn dial_unix_socket<S: Surface>(
    path: impl AsRef<Path>,
) -> Result<OwnedConnection<S::Client>, Failure> {
    dial_unix_socket_with::<S>(path, &DialOptions::default()).await
}

/// [`dial_unix_socket`] with explicit timeouts.
///
/// ```no_run
/// # async fn f<S: surface_runtime::Surface>() -> Result<(), surface_runtime::Failure> {
/// use surface_runtime::wire::{DialOptions, dial_unix_socket_with};
/// let options = DialOptions::default().call_timeout(std::time::Duration::from_secs(5));
/// let connection = dial_unix_socket_with::<S>("/tmp/ops.sock", &options).await?;
/// # Ok(()) }
/// ```
pub async fn dial_unix_socket_with<S: Surface>(
    path: impl AsRef<Path>,
    options: &DialOptions,
) -> Result<OwnedConnection<S::Client>, Failure> {
    let path = path.as_ref();
    let stream = tokio::net::UnixStream::connect(path)
        .await
        .map_err(|e| transport(false, format!("could not dial {}: {e}", path.display())))?;
    let (r, w) = stream.into_split();
    let (dispatch, closed) = connect::<S, _, _>(r, w, options).await?;
    let signal = closed.clone();
    let dispatch = Arc::new(dispatch);
    Ok(OwnedConnection {
        client: S::Client::from_dispatch(dispatch.clone()),
        dispose: Box::new(move || signal.close()),
        closed,
        dispatch,
    })
}

/// Spawns `command` (e.g. `ssh host app serve`) and dials the surface it serves on its stdio.
/// Disposing the connection kills the child.
pub async fn dial_child<S: Surface>(
    command: tokio::process::Command,
) -> Result<OwnedConnection<S::Client>, Failure> {
    dial_child_with::<S>(command, &DialOptions::default()).await
}

/// [`dial_child`] with explicit timeouts.
pub async fn dial_child_with<S: Surface>(
    mut command: tokio::process::Command,
    options: &DialOptions,
) -> Result<OwnedConnection<S::Client>, Failure> {
    let mut child = command
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .map_err(|e| transport(false, format!("could not start the served process: {e}")))?;
    let stdin = child.stdin.take().expect("piped");
    let stdout = child.stdout.take().expect("piped");
    let (dispatch, closed) = connect::<S, _, _>(stdout, stdin, options).await?;
    let child = Arc::new(Mutex::new(Some(child)));
    let reaper = child.clone();
    let exit = closed.clone();
    tokio::spawn(async move {
        exit.closed().await;
        if let Some(mut c) = lock(&reaper).take() {
            let _ = c.start_kill();
        }
    });
    let signal = closed.clone();
    let dispatch = Arc::new(dispatch);
    Ok(OwnedConnection {
        client: S::Client::from_dispatch(dispatch.clone()),
        dispose: Box::new(move || {
            signal.close();
            if let Some(mut c) = lock(&child).take() {
                let _ = c.start_kill();
            }
        }),
        closed,
        dispatch,
    })
}
