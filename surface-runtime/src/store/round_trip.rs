//! One round trip on the store's runtime, bounded by [`OP_TIMEOUT`]: started at once (so one
//! thread's commands reach Redis in the order it made them) and waited for on the caller's
//! thread ([`send`], [`Sent::answer`], [`wait`]), or awaited from another runtime ([`spawned`]).

use std::future::Future;
use std::time::Duration;

/// How long one store operation may take before the call it runs in fails (an update's wait
/// for its turn and its retries included): a Redis that hangs costs a call this long, never a hang.
pub const OP_TIMEOUT: Duration = Duration::from_secs(3);

/// What a request answers: a Redis answer, or nothing within [`OP_TIMEOUT`].
type Answer<T> = Result<redis::RedisResult<T>, tokio::time::error::Elapsed>;

/// A request on its way: its command is on the connection; its answer may still be to come.
pub(crate) enum Sent<T> {
    Answered(Answer<T>),
    Waiting {
        task: std::pin::Pin<Box<dyn Future<Output = Answer<T>> + Send>>,
        handle: tokio::runtime::Handle,
    },
}

impl<T> Sent<T> {
    /// Waits for the answer on this thread (bounded by [`OP_TIMEOUT`]), in `block_in_place`
    /// when this thread is a multi-thread runtime's worker. The answer wakes this thread
    /// itself: no task of the store's runtime stands between.
    pub(crate) fn answer(self) -> Result<T, String> {
        let got = match self {
            Sent::Answered(got) => got,
            Sent::Waiting { task, handle } => {
                let receive = move || {
                    let _inside = handle.enter();
                    futures::executor::block_on(task)
                };
                match tokio::runtime::Handle::try_current() {
                    Ok(h) if h.runtime_flavor() == tokio::runtime::RuntimeFlavor::MultiThread => {
                        tokio::task::block_in_place(receive)
                    }
                    _ => receive(),
                }
            }
        };
        said(got)
    }
}

/// A request's answer, a failure as the sentence that ends "the store is unreachable (…): ".
fn said<T>(got: Answer<T>) -> Result<T, String> {
    match got {
        Ok(Ok(v)) => Ok(v),
        Ok(Err(e)) => Err(e.to_string()),
        Err(_) => Err(format!("no answer within {} ms", OP_TIMEOUT.as_millis())),
    }
}

/// Starts `fut` in `handle`'s runtime context. It is polled once here, so its command is on
/// the connection before this thread starts another: one thread's requests reach Redis in the
/// order it made them (an update's successor builds on a swap still in flight).
pub(crate) fn send<T: Send + 'static>(
    handle: &tokio::runtime::Handle,
    fut: impl Future<Output = redis::RedisResult<T>> + Send + 'static,
) -> Sent<T> {
    let _inside = handle.enter();
    let mut task: std::pin::Pin<Box<dyn Future<Output = Answer<T>> + Send>> =
        Box::pin(tokio::time::timeout(OP_TIMEOUT, fut));
    // Pending, `answer` polls it again, with a waker that counts.
    match task
        .as_mut()
        .poll(&mut std::task::Context::from_waker(std::task::Waker::noop()))
    {
        std::task::Poll::Ready(got) => Sent::Answered(got),
        std::task::Poll::Pending => Sent::Waiting {
            task,
            handle: handle.clone(),
        },
    }
}

/// Runs `fut` on `handle`'s runtime and waits for its answer on this thread.
pub(crate) fn wait<T: Send + 'static>(
    handle: &tokio::runtime::Handle,
    fut: impl Future<Output = redis::RedisResult<T>> + Send + 'static,
) -> Result<T, String> {
    send(handle, fut).answer()
}

/// Runs `fut` on `handle`'s runtime (where the store's connection lives), started before this
/// returns, and waits for it without blocking the awaiting task; a failure is one sentence
/// naming `url`.
#[cfg(feature = "http")]
pub(crate) fn spawned<T: Send + 'static>(
    handle: &tokio::runtime::Handle,
    url: &str,
    fut: impl Future<Output = redis::RedisResult<T>> + Send + 'static,
) -> impl Future<Output = Result<T, String>> + Send + 'static {
    let task = handle.spawn(tokio::time::timeout(OP_TIMEOUT, fut));
    let url = url.to_owned();
    async move {
        match task.await {
            Ok(got) => said(got).map_err(|e| format!("the store is unreachable ({url}): {e}")),
            Err(e) => Err(format!("the store's task failed: {e}")),
        }
    }
}
