//! A call's future raced against its cancellation, built as one flat future.
//!
//! An `async fn` that takes a future and awaits it keeps the future twice in its state (the
//! argument, then the awaited copy), and every wrapper of the call path doubled the size of
//! what rmcp's dispatch moves per request; a hand-written future holds it once.

use pin_project_lite::pin_project;
use std::future::Future;
use std::pin::Pin;
use std::task::{Context, Poll};
use tokio_util::sync::{CancellationToken, WaitForCancellationFuture};

use crate::failure::{Failure, FailureKind};

/// Runs `call` until it ends or `ct` is cancelled (`notifications/cancelled`, or the client
/// going away): then the call's future is dropped where it waits, so what it would do after
/// that await never happens. That await is the point of no return: whatever ran before it
/// stays done, and a call already handed to a dialled daemon runs there to its end. A
/// cancelled call's answer is never written, so the failure here is for nobody.
pub(crate) fn until_cancelled<T>(
    ct: &CancellationToken,
    call: impl Future<Output = Result<T, Failure>>,
) -> impl Future<Output = Result<T, Failure>> {
    use futures::FutureExt;
    unless_cancelled(ct, call).map(|answer| {
        answer.unwrap_or_else(|| Err(Failure::new(FailureKind::Error, "the call was cancelled")))
    })
}

pin_project! {
    /// [`unless_cancelled`]'s future.
    pub(crate) struct UnlessCancelled<'a, F> {
        #[pin]
        cancelled: WaitForCancellationFuture<'a>,
        #[pin]
        fut: F,
    }
}

/// `fut`'s output, or `None` once `ct` is cancelled (`fut` dropped with this future). Biased to
/// the cancel: a call that would end in the same poll as its cancel is cancelled (tokio-util's
/// `run_until_cancelled` favours the future).
pub(crate) fn unless_cancelled<F: Future>(ct: &CancellationToken, fut: F) -> UnlessCancelled<'_, F> {
    UnlessCancelled {
        cancelled: ct.cancelled(),
        fut,
    }
}

impl<F: Future> Future for UnlessCancelled<'_, F> {
    type Output = Option<F::Output>;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        let this = self.project();
        if this.cancelled.poll(cx).is_ready() {
            return Poll::Ready(None);
        }
        this.fut.poll(cx).map(Some)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn the_future_answers_until_the_token_is_cancelled_and_the_cancel_wins_a_tie() {
        let ct = CancellationToken::new();
        assert_eq!(unless_cancelled(&ct, async { 7 }).await, Some(7));
        ct.cancel();
        assert_eq!(unless_cancelled(&ct, async { 7 }).await, None);
    }

    #[tokio::test]
    async fn a_pending_future_is_dropped_when_the_token_is_cancelled() {
        let ct = CancellationToken::new();
        let canceller = ct.clone();
        tokio::spawn(async move { canceller.cancel() });
        assert_eq!(unless_cancelled(&ct, std::future::pending::<()>()).await, None);
    }
}
