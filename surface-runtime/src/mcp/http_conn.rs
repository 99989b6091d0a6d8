//! One accepted HTTP connection's time bounds (feature `http`): how long a client may take to
//! send a request's head once it has started it ([`HttpOptions::header_read_timeout`]), and
//! how long a kept-alive connection may sit with no request at all
//! ([`HttpOptions::keep_alive_timeout`]). Past either, the connection is closed.
//!
//! hyper's own header-read timer starts when it waits for a head, so on a kept-alive
//! connection it counts the idle time between requests too; the two bounds are kept apart
//! here instead, around the socket: [`Timed`] reads through a deadline while no request is
//! being served (idle until the first byte of a head, then the header timeout), and
//! [`Active`] — held from the moment hyper hands over a request until its response body has
//! been sent whole — lifts it, so a long response (an SSE stream) is never cut.
//!
//! [`HttpOptions::header_read_timeout`]: super::HttpOptions::header_read_timeout
//! [`HttpOptions::keep_alive_timeout`]: super::HttpOptions::keep_alive_timeout

use crate::sync::lock;
use futures::task::AtomicWaker;
use hyper::body::{Body, Frame, SizeHint};
use std::io;
use std::pin::Pin;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll};
use std::time::Duration;
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio::time::{Instant, Sleep};

/// What the connection's socket and its requests share.
pub(super) struct Watch {
    /// Requests handed over whose response is not yet sent whole.
    active: AtomicUsize,
    /// Requests handed over so far: a new one ends the head being timed.
    started: AtomicU64,
    /// When the last response was sent whole (or the connection opened).
    idle_since: Mutex<Instant>,
    /// The socket's reader, woken when the connection turns idle so its deadline starts.
    reader: AtomicWaker,
}

impl Watch {
    pub(super) fn new() -> Arc<Watch> {
        Arc::new(Watch {
            active: AtomicUsize::new(0),
            started: AtomicU64::new(0),
            idle_since: Mutex::new(Instant::now()),
            reader: AtomicWaker::new(),
        })
    }

    /// A request was handed over: the connection is busy until the guard is dropped.
    pub(super) fn begin(self: &Arc<Watch>) -> Active {
        self.started.fetch_add(1, Ordering::Relaxed);
        self.active.fetch_add(1, Ordering::AcqRel);
        Active(self.clone())
    }
}

/// A request being served; dropped once its response body is sent whole (or abandoned).
pub(super) struct Active(Arc<Watch>);

impl Drop for Active {
    fn drop(&mut self) {
        if self.0.active.fetch_sub(1, Ordering::AcqRel) == 1 {
            *lock(&self.0.idle_since) = Instant::now();
            self.0.reader.wake();
        }
    }
}

/// A response body that keeps its request [`Active`] until it ends.
pub(super) struct Tracked<B> {
    pub(super) body: B,
    pub(super) active: Option<Active>,
}

impl<B: Body + Unpin> Body for Tracked<B> {
    type Data = B::Data;
    type Error = B::Error;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Self::Data>, Self::Error>>> {
        let polled = Pin::new(&mut self.body).poll_frame(cx);
        if matches!(polled, Poll::Ready(None)) {
            self.active = None;
        }
        polled
    }

    fn is_end_stream(&self) -> bool {
        self.body.is_end_stream()
    }

    fn size_hint(&self) -> SizeHint {
        self.body.size_hint()
    }
}

/// The socket, read through the connection's deadline while no request is being served.
pub(super) struct Timed<S> {
    io: S,
    watch: Arc<Watch>,
    header: Duration,
    idle: Duration,
    /// When the first byte of the head being read arrived.
    head_started: Option<Instant>,
    /// `watch.started` when `head_started` was set.
    seen: u64,
    sleep: Pin<Box<Sleep>>,
}

impl<S> Timed<S> {
    pub(super) fn new(io: S, watch: Arc<Watch>, header: Duration, idle: Duration) -> Self {
        Timed {
            io,
            watch,
            header,
            idle,
            head_started: None,
            seen: 0,
            sleep: Box::pin(tokio::time::sleep(idle)),
        }
    }
}

impl<S: AsyncRead + Unpin> AsyncRead for Timed<S> {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        let this = &mut *self;
        let started = this.watch.started.load(Ordering::Relaxed);
        if started != this.seen {
            // hyper handed the head over: the next one is timed afresh.
            this.seen = started;
            this.head_started = None;
        }
        let before = buf.filled().len();
        let polled = Pin::new(&mut this.io).poll_read(cx, buf);
        let idle = this.watch.active.load(Ordering::Acquire) == 0;
        match polled {
            Poll::Ready(Ok(())) => {
                if idle && buf.filled().len() > before && this.head_started.is_none() {
                    this.head_started = Some(Instant::now());
                }
                Poll::Ready(Ok(()))
            }
            Poll::Pending if idle => {
                this.watch.reader.register(cx.waker());
                let (deadline, what) = match this.head_started {
                    Some(at) => (
                        at + this.header,
                        "the request's head did not arrive within the header-read timeout",
                    ),
                    None => (
                        *lock(&this.watch.idle_since) + this.idle,
                        "the connection sat idle past the keep-alive timeout",
                    ),
                };
                this.sleep.as_mut().reset(deadline);
                match this.sleep.as_mut().poll(cx) {
                    Poll::Ready(()) => Poll::Ready(Err(io::Error::new(io::ErrorKind::TimedOut, what))),
                    Poll::Pending => Poll::Pending,
                }
            }
            Poll::Pending => {
                this.watch.reader.register(cx.waker());
                Poll::Pending
            }
            other => other,
        }
    }
}

impl<S: AsyncWrite + Unpin> AsyncWrite for Timed<S> {
    fn poll_write(mut self: Pin<&mut Self>, cx: &mut Context<'_>, buf: &[u8]) -> Poll<io::Result<usize>> {
        Pin::new(&mut self.io).poll_write(cx, buf)
    }

    fn poll_write_vectored(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[io::IoSlice<'_>],
    ) -> Poll<io::Result<usize>> {
        Pin::new(&mut self.io).poll_write_vectored(cx, bufs)
    }

    fn is_write_vectored(&self) -> bool {
        self.io.is_write_vectored()
    }

    fn poll_flush(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.io).poll_flush(cx)
    }

    fn poll_shutdown(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.io).poll_shutdown(cx)
    }
}
