//! Graceful shutdown, one rule for every face: stop taking new work (refused with a sentence
//! saying the server is shutting down, where the face can still answer), answer every call already taken, end the
//! long-lived streams with their final event, flush, and give up waiting after a drain
//! timeout ([`DEFAULT_DRAIN_TIMEOUT`] unless the face's options say otherwise).
//!
//! One counter (`Drain`, inside the crate) counts the calls a face owes an answer and waits for them within the timeout.
//! Streamable HTTP (`mcp/http.rs`) and the wire face (`wire/server.rs`) count with it; the
//! stdio transport (`mcp/transport.rs`) already tracks every request it owes an answer (its
//! end of input waits on the same table), so it bounds that wait by the same timeout.

#[cfg(any(feature = "wire", feature = "http"))]
use std::sync::Arc;
#[cfg(any(feature = "wire", feature = "http"))]
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::time::Duration;
#[cfg(any(feature = "wire", feature = "http"))]
use tokio::sync::Notify;

/// How long a graceful shutdown waits for the calls in flight by default: 10 seconds, on
/// every face (`HttpOptions::drain_timeout`, `McpServer::drain_timeout`,
/// `WireOptions::drain_timeout`).
pub const DEFAULT_DRAIN_TIMEOUT: Duration = Duration::from_secs(10);

/// What a request arriving during a graceful shutdown is answered, on every face that can
/// still answer one.
pub(crate) const REFUSAL: &str =
    "this server is shutting down — retry on another instance or after it restarts";

/// The calls one server owes an answer (the faces that count them: HTTP and the wire face).
#[cfg(any(feature = "wire", feature = "http"))]
#[derive(Default)]
pub(crate) struct Drain {
    draining: AtomicBool,
    in_flight: AtomicUsize,
    idle: Notify,
}

#[cfg(any(feature = "wire", feature = "http"))]
impl Drain {
    /// Whether new requests are refused.
    pub(crate) fn draining(&self) -> bool {
        self.draining.load(Ordering::Acquire)
    }

    /// Counts one call until the returned guard drops.
    pub(crate) fn flight(self: &Arc<Self>) -> Flight {
        self.in_flight.fetch_add(1, Ordering::AcqRel);
        Flight(self.clone())
    }

    /// Refuses new requests from now on.
    pub(crate) fn refuse_new(&self) {
        self.draining.store(true, Ordering::Release);
    }

    /// Refuses new requests from now on and waits until every call in flight is answered, at
    /// most `timeout`. Answers whether they all were.
    pub(crate) async fn drain(&self, timeout: Duration) -> bool {
        self.refuse_new();
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
#[cfg(any(feature = "wire", feature = "http"))]
pub(crate) struct Flight(Arc<Drain>);

#[cfg(any(feature = "wire", feature = "http"))]
impl Drop for Flight {
    fn drop(&mut self) {
        if self.0.in_flight.fetch_sub(1, Ordering::AcqRel) == 1 {
            self.0.idle.notify_waiters();
        }
    }
}

#[cfg(all(test, any(feature = "wire", feature = "http")))]
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
