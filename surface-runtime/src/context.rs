//! The call context: what a running tool or procedure may tell the one host that asked — progress
//! and log messages — what it may ask that host (a form, a model's message, its roots: see
//! [`crate::ask`]), and the cancellation signal of its request.
//!
//! A bespoke tool takes it in place of the cancellation token (`ctx: ToolContext` as its last
//! argument). Anything else a call runs (a procedure, a helper deep below) reaches the same handle
//! with [`ToolContext::current`], which is face-neutral: on the MCP face progress goes out as
//! `notifications/progress` against the request's progress token (nothing when the host gave
//! none) and log messages as `notifications/message` at or above the session's
//! `logging/setLevel` (a 2026-07-28 request: at or above the `logLevel` of its own `_meta`, none
//! without one); with no face listening (a direct call, a test) both go nowhere and every ask
//! answers `AskError::Unsupported`.
//!
//! **Cancellation.** When the host cancels a `tools/call` on the MCP face
//! (`notifications/cancelled`, or its HTTP request going away), the cancellation signal fires
//! and the call's future is dropped at the await it is waiting on: nothing after that await runs.
//! That await is the point of no return. What the call did before it stays done (a member it
//! already wrote keeps the value; an [`crate::Counter`] it already advanced stays advanced), and
//! a call already sent to a dialled daemon over the wire face runs there to its end. So a
//! procedure whose effect must not happen once cancelled awaits its slow part before it writes.
//!
//! ```
//! use surface_runtime::context::{LogLevel, ToolContext};
//! # async fn work() {
//! let ctx = ToolContext::current();
//! ctx.progress(1.0, Some(3.0)).await;
//! ctx.log(LogLevel::Info, "step one done").await;
//! assert!(!ctx.is_cancelled());
//! # }
//! # tokio::runtime::Builder::new_current_thread().build().unwrap().block_on(work());
//! ```

use crate::Principal;
use crate::ask::{Answer, Ask, AskError, Asking, ElicitForm, Elicitation, Root, Sample, Sampled};
use crate::tool::CancellationToken;
use futures::future::BoxFuture;
use serde_json::Value;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

/// How severe a log message is (RFC 5424, as MCP's `logging` names them), least first.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum LogLevel {
    /// Detail for debugging.
    Debug,
    /// What happens.
    Info,
    /// Normal but significant.
    Notice,
    /// Something may be wrong.
    Warning,
    /// Something failed.
    Error,
    /// A component failed.
    Critical,
    /// Act now.
    Alert,
    /// Unusable.
    Emergency,
}

/// Where a call's progress and log messages go; each face implements it for the session
/// that made the request.
pub trait Reporter: Send + Sync {
    /// `progress` of `total` (when known) done, with an optional message.
    fn progress(&self, progress: f64, total: Option<f64>, message: Option<String>) -> BoxFuture<'_, ()>;
    /// A log message from `logger` (when named).
    fn log(&self, level: LogLevel, logger: Option<String>, data: Value) -> BoxFuture<'_, ()>;
    /// Asks the host `ask` under `key` (see [`crate::ask`]). A face that cannot ask answers
    /// `Unsupported`, which is what this default does.
    fn ask(&self, key: String, ask: Ask) -> BoxFuture<'_, Result<Answer, AskError>> {
        let _ = key;
        Box::pin(async move {
            Err(AskError::Unsupported {
                capability: ask.capability(),
            })
        })
    }
    /// Asks the host `ask` under `key` before the call becomes a task
    /// ([`Asking::before_task`](crate::ask::Asking::before_task)); a face without tasks asks as
    /// [`Reporter::ask`] does, which is what this default does.
    fn ask_before_task(&self, key: String, ask: Ask) -> BoxFuture<'_, Result<Answer, AskError>> {
        self.ask(key, ask)
    }
    /// Tells the host the out-of-band step of the URL elicitation `id` finished
    /// (`notifications/elicitation/complete`). A face that cannot answers `Unsupported`, which
    /// is what this default does.
    fn elicitation_complete(&self, id: String) -> BoxFuture<'_, Result<(), AskError>> {
        let _ = id;
        Box::pin(async {
            Err(AskError::Unsupported {
                capability: crate::ask::URL_ELICITATION,
            })
        })
    }
}

/// A running call's handle on its requester: progress, logging, questions for the host
/// ([`crate::ask`]), cancellation. Cheap to clone; clones share one call.
#[derive(Clone, Default)]
pub struct ToolContext {
    cancel: CancellationToken,
    /// Where the call reports, with its ask counts; none when it reports nowhere (then it
    /// cannot ask either, so nothing needs counting).
    reporter: Option<Arc<Reporting<dyn Reporter>>>,
    /// Who called, when the face identified them.
    principal: Option<Arc<Principal>>,
}

/// What the clones of one call's context share, in one allocation: its reporter, and how many
/// asks of each kind (elicit, sample, roots, elicit-url) it made (their default keys).
struct Reporting<R: ?Sized> {
    asked: [AtomicUsize; 4],
    reporter: R,
}

impl<R: ?Sized> std::ops::Deref for Reporting<R> {
    type Target = R;
    fn deref(&self) -> &R {
        &self.reporter
    }
}

/// A reporter given as an `Arc` ([`ToolContext::new`]), reported to through it.
struct Shared(Arc<dyn Reporter>);

impl Reporter for Shared {
    fn progress(&self, progress: f64, total: Option<f64>, message: Option<String>) -> BoxFuture<'_, ()> {
        self.0.progress(progress, total, message)
    }
    fn log(&self, level: LogLevel, logger: Option<String>, data: Value) -> BoxFuture<'_, ()> {
        self.0.log(level, logger, data)
    }
    fn ask(&self, key: String, ask: Ask) -> BoxFuture<'_, Result<Answer, AskError>> {
        self.0.ask(key, ask)
    }
    fn ask_before_task(&self, key: String, ask: Ask) -> BoxFuture<'_, Result<Answer, AskError>> {
        self.0.ask_before_task(key, ask)
    }
    fn elicitation_complete(&self, id: String) -> BoxFuture<'_, Result<(), AskError>> {
        self.0.elicitation_complete(id)
    }
}

tokio::task_local! {
    static CURRENT: ToolContext;
}

impl ToolContext {
    /// A context reporting to `reporter`, cancelled by `cancel`.
    pub fn new(cancel: CancellationToken, reporter: Option<Arc<dyn Reporter>>) -> Self {
        match reporter {
            Some(reporter) => ToolContext::reporting_to(cancel, Shared(reporter)),
            None => ToolContext {
                cancel,
                ..ToolContext::default()
            },
        }
    }

    /// A context reporting to `reporter`, held with the call's ask counts in one allocation
    /// (a face's per-call reporter: one allocation fewer per call than [`ToolContext::new`]).
    pub(crate) fn reporting_to(cancel: CancellationToken, reporter: impl Reporter + 'static) -> Self {
        let reporting: Arc<Reporting<dyn Reporter>> = Arc::new(Reporting {
            asked: Default::default(),
            reporter,
        });
        ToolContext {
            cancel,
            reporter: Some(reporting),
            principal: None,
        }
    }

    /// The same context, calling on behalf of `principal` (a face sets it when it identified
    /// the caller).
    pub fn with_principal(mut self, principal: Option<Arc<Principal>>) -> Self {
        self.principal = principal;
        self
    }

    /// Who is calling, when the face identified them: on Streamable HTTP with authentication
    /// (`HttpOptions::auth`), the verified token's subject, scopes and claims, for the tool's
    /// own decisions (which rows it may see, say). `None` on a face that identifies nobody.
    ///
    /// ```
    /// use std::sync::Arc;
    /// use surface_runtime::Principal;
    /// use surface_runtime::context::ToolContext;
    /// let ctx = ToolContext::default()
    ///     .with_principal(Some(Arc::new(Principal::new("https://auth.example", "alice"))));
    /// assert_eq!(ctx.principal().map(Principal::subject), Some("alice"));
    /// assert!(ToolContext::default().principal().is_none());
    /// ```
    pub fn principal(&self) -> Option<&Principal> {
        self.principal.as_deref()
    }

    /// The context of the call running on this task (a face sets it with [`ToolContext::scope`]);
    /// outside any call, one that reports nowhere and is never cancelled.
    pub fn current() -> ToolContext {
        CURRENT.try_with(Clone::clone).unwrap_or_default()
    }

    /// Runs `fut` with `self` as the [`ToolContext::current`] of everything it awaits.
    pub fn scope<F: std::future::Future>(self, fut: F) -> impl std::future::Future<Output = F::Output> {
        // Not an `async fn`: that would hold `fut` twice (argument and awaited copy).
        CURRENT.scope(self, fut)
    }

    /// Reports `progress` of `total` (when known).
    pub async fn progress(&self, progress: f64, total: Option<f64>) {
        if let Some(r) = &self.reporter {
            r.progress(progress, total, None).await;
        }
    }

    /// Reports progress with a message for the host to show.
    pub async fn progress_with(&self, progress: f64, total: Option<f64>, message: impl Into<String>) {
        if let Some(r) = &self.reporter {
            r.progress(progress, total, Some(message.into())).await;
        }
    }

    /// Reports progress, with a message when there is one (relaying what another side reported).
    #[cfg(feature = "wire")]
    pub(crate) async fn report(&self, progress: f64, total: Option<f64>, message: Option<String>) {
        if let Some(r) = &self.reporter {
            r.progress(progress, total, message).await;
        }
    }

    /// Logs `data` (a string or any JSON) at `level`.
    pub async fn log(&self, level: LogLevel, data: impl Into<Value>) {
        if let Some(r) = &self.reporter {
            r.log(level, None, data.into()).await;
        }
    }

    /// Logs `data` at `level` under the logger name `logger`.
    pub async fn log_as(&self, logger: impl Into<String>, level: LogLevel, data: impl Into<Value>) {
        if let Some(r) = &self.reporter {
            r.log(level, Some(logger.into()), data.into()).await;
        }
    }

    /// Asks the user to fill in the form `T` (a flat struct deriving `surface::Elicit`: see
    /// [`crate::ask`]), showing `message`; answers [`Elicitation::Accept`] with the value,
    /// `Decline` or `Cancel`. The derive checks the fields at compile time; a schema that still
    /// cannot be a form (a `schema_with` returning an object, say) is refused
    /// (`AskError::BadForm`) before anything is sent.
    ///
    /// ```
    /// # use surface_runtime::context::ToolContext;
    /// # use surface_runtime::ask::{AskError, ElicitForm, Elicitation};
    /// #[derive(serde::Deserialize, schemars::JsonSchema)]
    /// struct Name { name: String }
    /// impl ElicitForm for Name {} // what `#[derive(surface::Elicit)]` writes, after its checks
    /// # async fn run() {
    /// // Outside a call nothing listens, so nothing can answer.
    /// let answer = ToolContext::current().elicit::<Name>("What is your name?").key("user_name").await;
    /// assert_eq!(answer.err(), Some(AskError::Unsupported { capability: "elicitation" }));
    /// # }
    /// # tokio::runtime::Builder::new_current_thread().build().unwrap().block_on(run());
    /// ```
    pub fn elicit<T: ElicitForm>(&self, message: impl Into<String>) -> Asking<Elicitation<T>> {
        let ask = crate::ask::form_schema::<T>().map(|schema| Ask::Elicit {
            message: message.into(),
            schema,
        });
        self.asking(ask)
    }

    /// Asks the host's model for a message.
    pub fn sample(&self, request: Sample) -> Asking<Sampled> {
        self.asking(Ok(Ask::Sample(request)))
    }

    /// Asks the host for its roots.
    pub fn roots(&self) -> Asking<Vec<Root>> {
        self.asking(Ok(Ask::Roots))
    }

    /// Asks the user to open `url` outside the agent, for what must not pass through it (a
    /// third-party sign-in, a payment, a secret). The host needs URL mode declared
    /// (`"elicitation": {"url": {}}`), else the ask fails `Unsupported` naming
    /// [`crate::ask::URL_ELICITATION`]. The answer carries the elicitation's fresh id: once the
    /// app learns the step finished (its own callback), [`ToolContext::elicitation_complete`]
    /// with that id tells the host, even after the call answered (keep a clone of the context).
    ///
    /// ```
    /// use surface_runtime::ask::AskError;
    /// use surface_runtime::context::ToolContext;
    /// # async fn run() {
    /// let ctx = ToolContext::current();
    /// let answer = ctx.elicit_url("https://example.com/login", "Sign in to the registry").await;
    /// // Outside a call nothing listens, so nothing can answer.
    /// assert_eq!(answer.err(), Some(AskError::Unsupported { capability: "elicitation.url" }));
    /// # }
    /// # tokio::runtime::Builder::new_current_thread().build().unwrap().block_on(run());
    /// ```
    pub fn elicit_url(
        &self,
        url: impl Into<String>,
        message: impl Into<String>,
    ) -> Asking<crate::ask::UrlElicitation> {
        self.asking(Ok(Ask::ElicitUrl {
            message: message.into(),
            url: url.into(),
            id: crate::ask::fresh_elicitation_id(),
        }))
    }

    /// Tells the host the out-of-band step of the URL elicitation `id` (from
    /// [`ToolContext::elicit_url`]'s answer) finished: `notifications/elicitation/complete`,
    /// sent on the session the call came from, so the host can retry what waited for it.
    pub async fn elicitation_complete(&self, id: &str) -> Result<(), AskError> {
        match &self.reporter {
            Some(r) => r.elicitation_complete(id.to_owned()).await,
            None => Err(AskError::Unsupported {
                capability: crate::ask::URL_ELICITATION,
            }),
        }
    }

    fn asking<A>(&self, ask: Result<Ask, AskError>) -> Asking<A> {
        let ctx = self.clone();
        Asking::new(
            ask,
            Box::new(move |key, ask, before_task| {
                Box::pin(async move { ctx.ask_when(key, ask, before_task).await })
            }),
        )
    }

    /// Asks `ask` under `key` (the next default key of its kind when `None`), untyped.
    pub async fn ask(&self, key: Option<String>, ask: Ask) -> Result<Answer, AskError> {
        self.ask_when(key, ask, false).await
    }

    async fn ask_when(&self, key: Option<String>, ask: Ask, before_task: bool) -> Result<Answer, AskError> {
        let kind = match ask {
            Ask::Elicit { .. } => 0,
            Ask::Sample(_) => 1,
            Ask::Roots => 2,
            Ask::ElicitUrl { .. } => 3,
        };
        let Some(r) = &self.reporter else {
            return Err(AskError::Unsupported {
                capability: ask.capability(),
            });
        };
        let n = r.asked[kind].fetch_add(1, Ordering::Relaxed) + 1;
        let key = key.unwrap_or_else(|| ask.default_key(n));
        if before_task {
            r.ask_before_task(key, ask).await
        } else {
            r.ask(key, ask).await
        }
    }

    /// The request's cancellation signal.
    pub fn cancellation(&self) -> &CancellationToken {
        &self.cancel
    }

    /// Whether the host cancelled the request.
    pub fn is_cancelled(&self) -> bool {
        self.cancel.is_cancelled()
    }

    /// Resolves when the host cancels the request.
    pub async fn cancelled(&self) {
        self.cancel.cancelled().await
    }
}

/// What a bespoke tool's last argument may be: the cancellation token, or the whole
/// [`ToolContext`]. `#[tool]` builds it from the request's token.
pub trait FromCall {
    /// Builds the argument for the call running now.
    fn from_call(cancel: CancellationToken) -> Self;
}

impl FromCall for CancellationToken {
    fn from_call(cancel: CancellationToken) -> Self {
        cancel
    }
}

impl FromCall for ToolContext {
    fn from_call(cancel: CancellationToken) -> Self {
        let current = ToolContext::current();
        ToolContext {
            cancel,
            reporter: current.reporter,
            principal: current.principal,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Mutex;

    #[derive(Default)]
    struct Heard(Mutex<Vec<String>>);

    impl Reporter for Heard {
        fn progress(&self, progress: f64, total: Option<f64>, _: Option<String>) -> BoxFuture<'_, ()> {
            self.0.lock().unwrap().push(format!("{progress}/{total:?}"));
            Box::pin(async {})
        }
        fn log(&self, level: LogLevel, _: Option<String>, data: Value) -> BoxFuture<'_, ()> {
            self.0.lock().unwrap().push(format!("{level:?} {data}"));
            Box::pin(async {})
        }
    }

    #[tokio::test]
    async fn the_scoped_context_reaches_nested_code() {
        let heard = Arc::new(Heard::default());
        let ctx = ToolContext::new(CancellationToken::new(), Some(heard.clone()));
        ctx.scope(async {
            ToolContext::current().progress(1.0, Some(2.0)).await;
            let arg = <ToolContext as FromCall>::from_call(CancellationToken::new());
            arg.log(LogLevel::Info, "hi").await;
        })
        .await;
        assert_eq!(*heard.0.lock().unwrap(), ["1/Some(2.0)", "Info \"hi\""]);
        // Outside a scope, nothing listens.
        ToolContext::current().log(LogLevel::Error, "lost").await;
        assert_eq!(heard.0.lock().unwrap().len(), 2);
    }
}
