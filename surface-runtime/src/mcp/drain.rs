//! Graceful shutdown of the HTTP face: which requests are still owed an answer, and waiting
//! for them within a bound.
//!
//! Every `POST` but a `subscriptions/listen` is a call in flight from when it arrives until its
//! response body has been written whole (a legacy call answered over SSE included). Draining
//! refuses new requests with `503`, waits until no call is in flight or the drain timeout has
//! passed, and says which; the caller then ends the sessions and their streams.

use bytes::Bytes;
use http_body_util::BodyExt;
use http_body_util::combinators::BoxBody;
use hyper::body::{Body, Frame, SizeHint};
use std::convert::Infallible;
use std::pin::Pin;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::task::{Context, Poll};
use std::time::Duration;
use tokio::sync::Notify;

/// The calls one HTTP endpoint owes an answer.
#[derive(Default)]
pub(super) struct Drain {
    draining: AtomicBool,
    in_flight: AtomicUsize,
    idle: Notify,
}

impl Drain {
    /// Whether new requests are refused.
    pub(super) fn draining(&self) -> bool {
        self.draining.load(Ordering::Acquire)
    }

    /// Counts one call until the returned guard drops.
    pub(super) fn flight(self: &Arc<Self>) -> Flight {
        self.in_flight.fetch_add(1, Ordering::AcqRel);
        Flight(self.clone())
    }

    /// Refuses new requests from now on and waits until every call in flight is answered, at
    /// most `timeout`. Answers whether they all were.
    pub(super) async fn drain(&self, timeout: Duration) -> bool {
        self.draining.store(true, Ordering::Release);
        tokio::time::timeout(timeout, async {
            loop {
                let idle = self.idle.notified();
                if self.in_flight.load(Ordering::Acquire) == 0 {
                    return;
                }
                idle.await;
            }
        })
        .await
        .is_ok()
    }
}

/// One call in flight.
pub(super) struct Flight(Arc<Drain>);

impl Drop for Flight {
    fn drop(&mut self) {
        if self.0.in_flight.fetch_sub(1, Ordering::AcqRel) == 1 {
            self.0.idle.notify_waiters();
        }
    }
}

/// `response`'s body, holding `flight` until it has been written whole (or dropped).
pub(super) fn hold(response: super::http::Response, flight: Flight) -> super::http::Response {
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

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn a_drain_waits_for_the_last_flight_and_no_longer() {
        let drain = Arc::new(Drain::default());
        assert!(drain.drain(Duration::from_millis(1)).await, "nothing in flight");
        let flight = drain.flight();
        assert!(
            !drain.drain(Duration::from_millis(20)).await,
            "one call still in flight"
        );
        assert!(drain.draining());
        let later = tokio::spawn({
            let drain = drain.clone();
            async move { drain.drain(Duration::from_secs(5)).await }
        });
        tokio::time::sleep(Duration::from_millis(20)).await;
        drop(flight);
        assert!(later.await.unwrap(), "answered once the flight landed");
    }
}
