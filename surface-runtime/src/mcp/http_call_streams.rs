//! The own event stream of a call the HTTP bypass answers in a legacy session whose client can
//! be asked something (it declared `elicitation`, `sampling` or `roots`).
//!
//! rmcp's session worker sends a request the server makes during a call on that call's SSE
//! stream when the request is marked with the call's id (`OriginatingRequestId`, SEP-2260) and
//! the worker holds the call's stream. A call the bypass answers has no stream in the worker, so
//! the session's transport ([`Diverting`]) hands such a request to the bypass instead, through
//! [`CallStreams`]. The bypass then answers the `POST` as an event stream, the request first and
//! the call's answer last ([`streamed`]), or as plain JSON when the call asks nothing, which is
//! the usual case. The host's answer comes back as a `POST` like any other and reaches the
//! session's peer through rmcp, which hands it to the waiting ask.
//!
//! A request that finds no open stream (the host went away, or the stream's small queue is
//! full) goes to the worker as before, which sends it on the standalone `GET` stream: nothing is
//! lost.

use super::http_response::Response;
use crate::sync::lock;
use bytes::Bytes;
use http_body_util::{BodyExt, StreamBody};
use hyper::body::Frame;
use rmcp::RoleServer;
use rmcp::model::{GetExtensions, RequestId, ServerJsonRpcMessage};
use rmcp::service::{OriginatingRequestId, RxJsonRpcMessage, TxJsonRpcMessage};
use rmcp::transport::Transport;
use rmcp::transport::streamable_http_server::session::SessionId;
use std::collections::HashMap;
use std::convert::Infallible;
use std::future::Future;
use std::sync::{Arc, Mutex};
use tokio::sync::mpsc;
use tokio::sync::mpsc::error::TrySendError;
use tokio_util::sync::CancellationToken;

/// How many of one call's requests, or events of its answer, may wait for the host to read
/// them; a request past it goes to the standalone stream.
const QUEUED: usize = 8;

/// One of a call's requests to its host, boxed: a channel allocates its first block of slots
/// when it is made, and every call of an askable session makes one (of 376-byte messages,
/// 12 KiB; of boxes, 256 bytes), though most never ask.
type Asked = Box<ServerJsonRpcMessage>;

/// The calls answered by the bypass that are waiting for their requests, by session and id.
#[derive(Default)]
pub(crate) struct CallStreams {
    open: Mutex<HashMap<(SessionId, RequestId), mpsc::Sender<Asked>>>,
}

/// One call's requests to its host, while the call runs; closed when dropped.
pub(crate) struct CallStream {
    streams: Arc<CallStreams>,
    key: (SessionId, RequestId),
    sender: mpsc::Sender<Asked>,
    requests: mpsc::Receiver<Asked>,
}

impl CallStreams {
    /// Opens the stream of the call `call` in `session`, replacing any stream of the same call.
    pub(crate) fn open(self: &Arc<Self>, session: SessionId, call: RequestId) -> CallStream {
        let (sender, requests) = mpsc::channel(QUEUED);
        let key = (session, call);
        lock(&self.open).insert(key.clone(), sender.clone());
        CallStream {
            streams: self.clone(),
            key,
            sender,
            requests,
        }
    }

    /// Hands `message` to the stream of the call it was sent from, if that stream is open and
    /// has room; otherwise gives it back.
    fn divert(&self, session: &SessionId, message: ServerJsonRpcMessage) -> Option<ServerJsonRpcMessage> {
        let ServerJsonRpcMessage::Request(request) = &message else {
            return Some(message);
        };
        let Some(origin) = request.request.extensions().get::<OriginatingRequestId>() else {
            return Some(message);
        };
        let sender = lock(&self.open)
            .get(&(session.clone(), origin.0.clone()))
            .cloned();
        let Some(sender) = sender else {
            return Some(message);
        };
        match sender.try_send(Box::new(message)) {
            Ok(()) => None,
            Err(TrySendError::Full(message) | TrySendError::Closed(message)) => Some(*message),
        }
    }
}

impl CallStream {
    /// The call's next request to its host.
    pub(crate) async fn next(&mut self) -> Option<ServerJsonRpcMessage> {
        self.requests.recv().await.map(|asked| *asked)
    }
}

impl Drop for CallStream {
    fn drop(&mut self) {
        let mut open = lock(&self.streams.open);
        // Only this stream's own entry: a later call may have taken the id again.
        if open.get(&self.key).is_some_and(|s| s.same_channel(&self.sender)) {
            open.remove(&self.key);
        }
    }
}

/// A legacy session's transport to rmcp's worker, handing the requests of calls answered by
/// the bypass to those calls' streams.
pub(crate) struct Diverting<T> {
    inner: T,
    session: SessionId,
    streams: Arc<CallStreams>,
}

impl<T> Diverting<T> {
    pub(crate) fn new(inner: T, session: SessionId, streams: Arc<CallStreams>) -> Self {
        Diverting {
            inner,
            session,
            streams,
        }
    }
}

impl<T: Transport<RoleServer>> Transport<RoleServer> for Diverting<T> {
    type Error = T::Error;

    fn send(
        &mut self,
        item: TxJsonRpcMessage<RoleServer>,
    ) -> impl Future<Output = Result<(), Self::Error>> + Send + 'static {
        let forward = self
            .streams
            .divert(&self.session, item)
            .map(|item| self.inner.send(item));
        async move {
            match forward {
                Some(sent) => sent.await,
                None => Ok(()),
            }
        }
    }

    fn receive(&mut self) -> impl Future<Output = Option<RxJsonRpcMessage<RoleServer>>> + Send {
        self.inner.receive()
    }

    fn close(&mut self) -> impl Future<Output = Result<(), Self::Error>> + Send {
        self.inner.close()
    }
}

/// The `POST`'s answer as an event stream: `first` (a request the call made), the call's
/// further requests as they come, then `answer`. The stream ends without an answer when `ct`
/// is cancelled; `held` is dropped when the call ends, whether or not the host still reads.
pub(crate) fn streamed(
    first: ServerJsonRpcMessage,
    mut stream: CallStream,
    answer: impl Future<Output = ServerJsonRpcMessage> + Send + 'static,
    ct: CancellationToken,
    held: impl Send + 'static,
) -> Response {
    let (events, mut read) = mpsc::channel::<Bytes>(QUEUED);
    tokio::spawn(async move {
        let _held = held;
        let emit = |message: &ServerJsonRpcMessage| {
            let (events, ct) = (events.clone(), ct.clone());
            let event = event(message);
            async move {
                // A host that stopped reading holds nothing up past the call's end.
                tokio::select! {
                    _ = ct.cancelled() => {}
                    _ = events.send(event) => {}
                }
            }
        };
        emit(&first).await;
        let mut answer = std::pin::pin!(answer);
        loop {
            tokio::select! {
                biased;
                _ = ct.cancelled() => break,
                Some(request) = stream.next() => emit(&request).await,
                answer = &mut answer => {
                    emit(&answer).await;
                    break;
                }
            }
        }
    });
    let frames = futures::stream::poll_fn(move |cx| {
        read.poll_recv(cx)
            .map(|event| event.map(|e| Ok::<_, Infallible>(Frame::data(e))))
    });
    hyper::Response::builder()
        .status(hyper::StatusCode::OK)
        .header(hyper::header::CONTENT_TYPE, "text/event-stream")
        .header(hyper::header::CACHE_CONTROL, "no-cache")
        .body(StreamBody::new(frames).boxed())
        .expect("an event stream is a valid response")
}

/// One SSE event carrying `message`.
fn event(message: &ServerJsonRpcMessage) -> Bytes {
    let mut event = b"data: ".to_vec();
    super::encode::write_message(message, &mut event).expect("a server message serializes");
    event.extend_from_slice(b"\n\n");
    Bytes::from(event)
}

#[cfg(test)]
mod tests {
    use super::*;
    use rmcp::model::{PingRequest, ServerRequest};

    fn asked_from(origin: Option<i64>) -> ServerJsonRpcMessage {
        let mut request = ServerRequest::PingRequest(PingRequest::default());
        if let Some(origin) = origin {
            request
                .extensions_mut()
                .insert(OriginatingRequestId(RequestId::Number(origin)));
        }
        ServerJsonRpcMessage::request(request, RequestId::Number(100))
    }

    /// A request of an open call goes to that call's stream; one of another call, of another
    /// session, or unmarked is given back for the worker; a closed stream takes nothing more.
    #[tokio::test]
    async fn a_request_goes_to_its_own_call_s_stream_or_back() {
        let streams = Arc::new(CallStreams::default());
        let session: SessionId = Arc::from("s");
        let mut stream = streams.open(session.clone(), RequestId::Number(7));
        assert!(streams.divert(&session, asked_from(Some(7))).is_none());
        assert!(stream.next().await.is_some());
        assert!(streams.divert(&session, asked_from(Some(8))).is_some());
        assert!(streams.divert(&Arc::from("t"), asked_from(Some(7))).is_some());
        assert!(streams.divert(&session, asked_from(None)).is_some());
        drop(stream);
        assert!(streams.divert(&session, asked_from(Some(7))).is_some());
        assert!(lock(&streams.open).is_empty());
    }

    /// A full stream gives the request back rather than wait: the worker sends it elsewhere.
    #[test]
    fn a_full_stream_gives_the_request_back() {
        let streams = Arc::new(CallStreams::default());
        let session: SessionId = Arc::from("s");
        let _stream = streams.open(session.clone(), RequestId::Number(7));
        for _ in 0..QUEUED {
            assert!(streams.divert(&session, asked_from(Some(7))).is_none());
        }
        assert!(streams.divert(&session, asked_from(Some(7))).is_some());
    }

    /// The stream of a call closed after its id was opened again leaves the new one alone.
    #[test]
    fn an_old_stream_closing_leaves_the_new_one_open() {
        let streams = Arc::new(CallStreams::default());
        let session: SessionId = Arc::from("s");
        let old = streams.open(session.clone(), RequestId::Number(7));
        let _new = streams.open(session.clone(), RequestId::Number(7));
        drop(old);
        assert!(streams.divert(&session, asked_from(Some(7))).is_none());
    }
}
