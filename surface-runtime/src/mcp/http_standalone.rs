//! The HTTP face's half of `standalone.rs`: a legacy session's `GET` stream as rmcp answers it,
//! with the session's chunks of `updated` events spliced in between rmcp's own events.

use super::http_response::Response;
use super::session::SessionState;
use super::standalone::Attach;
use bytes::Bytes;
use http_body_util::BodyExt;
use http_body_util::combinators::BoxBody;
use hyper::body::{Body, Frame, SizeHint};
use std::convert::Infallible;
use std::pin::Pin;
use std::task::{Context, Poll};
use tokio::sync::mpsc;

/// rmcp's answer to a `GET` of the session `state`: its event stream, attached as the session's
/// standalone stream unless another is (then, or when rmcp refused, as rmcp answered).
pub(super) fn splice(response: Response, state: &SessionState) -> Response {
    let is_stream = response
        .headers()
        .get(hyper::header::CONTENT_TYPE)
        .is_some_and(|t| t.as_bytes().starts_with(b"text/event-stream"));
    if response.status() != hyper::StatusCode::OK || !is_stream {
        return response;
    }
    match state.subscriptions.standalone().attach() {
        Attach::Shadow => response,
        Attach::Taken { chunks, reannounce } => {
            if reannounce {
                state.subscriptions.reannounce();
            }
            response.map(|events| {
                Spliced {
                    events,
                    chunks: Some(chunks),
                }
                .boxed()
            })
        }
    }
}

/// rmcp's events, and between them the session's chunks. rmcp frames each event whole, so a
/// chunk never lands inside one.
struct Spliced {
    events: BoxBody<Bytes, Infallible>,
    /// None once the session lets go of this stream (it stalled; a newer stream attaches only
    /// after this one ended).
    chunks: Option<mpsc::Receiver<String>>,
}

impl Body for Spliced {
    type Data = Bytes;
    type Error = Infallible;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, Infallible>>> {
        let this = &mut *self;
        // rmcp's stream ending (the session closed, the server draining) ends the response.
        if let Poll::Ready(frame) = Pin::new(&mut this.events).poll_frame(cx) {
            return Poll::Ready(frame);
        }
        if let Some(chunks) = &mut this.chunks {
            match chunks.poll_recv(cx) {
                Poll::Ready(Some(chunk)) => return Poll::Ready(Some(Ok(Frame::data(Bytes::from(chunk))))),
                Poll::Ready(None) => this.chunks = None,
                Poll::Pending => {}
            }
        }
        Poll::Pending
    }

    fn is_end_stream(&self) -> bool {
        self.events.is_end_stream()
    }

    fn size_hint(&self) -> SizeHint {
        SizeHint::default()
    }
}
