//! Graceful shutdown of the HTTP face (the rule is `crate::drain`'s): when an HTTP call is
//! answered.
//!
//! Every `POST` but a `subscriptions/listen` is a call in flight from when it arrives until its
//! response body has been written whole (a legacy call answered over SSE included). Draining
//! refuses new requests with `503`, waits until no call is in flight or the drain timeout has
//! passed, and says which; the caller then ends the sessions and their streams.

use crate::drain::Flight;
use bytes::Bytes;
use http_body_util::BodyExt;
use http_body_util::combinators::BoxBody;
use hyper::body::{Body, Frame, SizeHint};
use std::convert::Infallible;
use std::pin::Pin;
use std::task::{Context, Poll};

/// `response`'s body, holding `flight` until it has been written whole (or dropped).
pub(super) fn hold(
    response: super::http_response::Response,
    flight: Flight,
) -> super::http_response::Response {
    response.map(|body| {
        Held {
            body,
            _flight: flight,
        }
        .boxed()
    })
}

struct Held {
    body: BoxBody<Bytes, Infallible>,
    _flight: Flight,
}

impl Body for Held {
    type Data = Bytes;
    type Error = Infallible;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, Infallible>>> {
        Pin::new(&mut self.body).poll_frame(cx)
    }

    fn is_end_stream(&self) -> bool {
        self.body.is_end_stream()
    }

    fn size_hint(&self) -> SizeHint {
        self.body.size_hint()
    }
}
