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
        ct: &'a CancellationToken,
        // Polled (which registers a waiter with the token) only once `fut` has waited: most
        // calls end in their first poll, and registering and removing a waiter that never
        // fires was most of this future's cost.
        #[pin]
        cancelled: WaitForCancellationFuture<'a>,
        armed: bool,
        #[pin]
        fut: F,
    }
}

/// `fut`'s output, or `None` once `ct` is cancelled (`fut` dropped with this future). Biased to
/// the cancel: a call that would end in the same poll as its cancel is cancelled (tokio-util's
/// `run_until_cancelled` favours the future).
pub(crate) fn unless_cancelled<F: Future>(ct: &CancellationToken, fut: F) -> UnlessCancelled<'_, F> {
    UnlessCancelled {
        ct,
        cancelled: ct.cancelled(),
        armed: false,
        fut,
    }
}

impl<F: Future> Future for UnlessCancelled<'_, F> {
    type Output = Option<F::Output>;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        let mut this = self.project();
        if *this.armed {
            if this.cancelled.as_mut().poll(cx).is_ready() {
                return Poll::Ready(None);
            }
        } else if this.ct.is_cancelled() {
            return Poll::Ready(None);
        }
        let Poll::Ready(answer) = this.fut.poll(cx) else {
            // Waiting: from now on the cancel wakes this future. A cancel that came during the
            // poll is seen here, and wins as it would have at the next poll.
            *this.armed = true;
            return match this.cancelled.poll(cx) {
                Poll::Ready(()) => Poll::Ready(None),
                Poll::Pending => Poll::Pending,
            };
        };
        Poll::Ready(Some(answer))
    }
}

/// Cancels `call` (a call's own token) when `connection` already is: the state a child token
/// of `connection` would be born in, without making the child; [`following`] links the two
/// once the call waits.
pub(crate) fn inherit_cancel(call: &CancellationToken, connection: &CancellationToken) {
    if connection.is_cancelled() {
        call.cancel();
    }
}

/// `answer`, with `call` (its call's own token) cancelled once `connection` is: the link a child
/// token makes, made only for a call that waits. A call that ends in its first poll never
/// needs it, and a child token costs a lock of the connection's token's tree as it is made and
/// again as it is dropped (bench/NOTES.md).
pub(crate) async fn following<T>(
    answer: impl Future<Output = T>,
    call: &CancellationToken,
    connection: &CancellationToken,
) -> T {
    let mut answer = std::pin::pin!(answer);
    tokio::select! {
        biased;
        answer = &mut answer => return answer,
        () = connection.cancelled() => call.cancel(),
    }
    answer.await
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_call_of_a_cancelled_connection_is_born_cancelled() {
        let (call, connection) = (CancellationToken::new(), CancellationToken::new());
        inherit_cancel(&call, &connection);
        assert!(!call.is_cancelled());
        connection.cancel();
        inherit_cancel(&call, &connection);
        assert!(call.is_cancelled());
    }

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

    #[tokio::test]
    async fn a_future_that_waited_is_dropped_when_the_token_is_cancelled_later() {
        let ct = CancellationToken::new();
        let canceller = ct.clone();
        let waited = unless_cancelled(&ct, async {
            tokio::task::yield_now().await;
            std::future::pending::<()>().await
        });
        tokio::spawn(async move {
            tokio::task::yield_now().await;
            tokio::task::yield_now().await;
            canceller.cancel()
        });
        let ended = tokio::time::timeout(std::time::Duration::from_secs(10), waited).await;
        assert_eq!(ended.expect("the cancel ends the wait"), None);
    }

    #[tokio::test]
    async fn a_future_that_waited_answers_when_the_token_stays() {
        let ct = CancellationToken::new();
        let answer = unless_cancelled(&ct, async {
            tokio::task::yield_now().await;
            5
        });
        assert_eq!(answer.await, Some(5));
    }

    #[tokio::test]
    async fn a_following_call_is_cancelled_with_its_connection_and_still_answers() {
        let (call, connection) = (CancellationToken::new(), CancellationToken::new());
        let canceller = connection.clone();
        tokio::spawn(async move {
            tokio::task::yield_now().await;
            canceller.cancel()
        });
        // The call ends only once its own token is cancelled, answering how it ended.
        let waits = async {
            call.cancelled().await;
            "cancelled"
        };
        let answer = tokio::time::timeout(
            std::time::Duration::from_secs(10),
            following(waits, &call, &connection),
        )
        .await;
        assert_eq!(
            answer.expect("the connection's cancel reaches the call"),
            "cancelled"
        );
        assert!(call.is_cancelled());
    }

    #[tokio::test]
    async fn a_following_call_that_ends_leaves_its_connection_and_token_alone() {
        let (call, connection) = (CancellationToken::new(), CancellationToken::new());
        let answer = following(
            async {
                tokio::task::yield_now().await;
                3
            },
            &call,
            &connection,
        );
        assert_eq!(answer.await, 3);
        assert!(!call.is_cancelled() && !connection.is_cancelled());
    }
}
