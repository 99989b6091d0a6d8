//! The call context on the MCP face: a tool's progress goes out as `notifications/progress`
//! against its request's progress token (nothing without one), its log messages as
//! `notifications/message` to the requesting session only, at or above the level that session
//! chose with `logging/setLevel` (`info` until it chooses).
//!
//! rmcp marks logging deprecated (SEP-2577 drops it from 2026-07-28); legacy sessions still
//! use it, so this module allows the deprecation.
#![allow(deprecated)]

use super::handler_context::HandlerContext;
use crate::ask::{Answer, Ask, AskError};
use crate::context::{LogLevel, Reporter, ToolContext};
use futures::future::BoxFuture;
use rmcp::model::{LoggingLevel, LoggingMessageNotificationParam, ProgressNotificationParam, ProgressToken};
use serde_json::Value;
use std::sync::Arc;
use std::sync::atomic::{AtomicU8, Ordering};

/// One session's `logging/setLevel`: the least severe level it hears.
pub(crate) struct LogFilter(AtomicU8);

impl Default for LogFilter {
    fn default() -> Self {
        LogFilter(AtomicU8::new(LogLevel::Info as u8))
    }
}

#[allow(deprecated)]
fn ours(level: LoggingLevel) -> LogLevel {
    match level {
        LoggingLevel::Debug => LogLevel::Debug,
        LoggingLevel::Info => LogLevel::Info,
        LoggingLevel::Notice => LogLevel::Notice,
        LoggingLevel::Warning => LogLevel::Warning,
        LoggingLevel::Error => LogLevel::Error,
        LoggingLevel::Critical => LogLevel::Critical,
        LoggingLevel::Alert => LogLevel::Alert,
        LoggingLevel::Emergency => LogLevel::Emergency,
    }
}

#[allow(deprecated)]
fn theirs(level: LogLevel) -> LoggingLevel {
    match level {
        LogLevel::Debug => LoggingLevel::Debug,
        LogLevel::Info => LoggingLevel::Info,
        LogLevel::Notice => LoggingLevel::Notice,
        LogLevel::Warning => LoggingLevel::Warning,
        LogLevel::Error => LoggingLevel::Error,
        LogLevel::Critical => LoggingLevel::Critical,
        LogLevel::Alert => LoggingLevel::Alert,
        LogLevel::Emergency => LoggingLevel::Emergency,
    }
}

impl LogFilter {
    /// The filter of one 2026-07-28 request: its `_meta` level, or silence.
    #[allow(deprecated)]
    fn of_request(level: Option<LoggingLevel>) -> Self {
        LogFilter(AtomicU8::new(level.map_or(u8::MAX, |l| ours(l) as u8)))
    }

    /// Sets the least severe level this session hears.
    #[allow(deprecated)]
    pub(crate) fn set(&self, level: LoggingLevel) {
        self.0.store(ours(level) as u8, Ordering::Relaxed);
    }

    fn hears(&self, level: LogLevel) -> bool {
        level as u8 >= self.0.load(Ordering::Relaxed)
    }
}

/// Reports to the session that made one request.
struct SessionReporter {
    token: Option<ProgressToken>,
    filter: Hearing,
    asks: Arc<super::asking::CallAsks>,
}

/// Which log messages a call's session hears.
enum Hearing {
    /// A legacy session's: what its `logging/setLevel` last chose.
    Session(Arc<LogFilter>),
    /// A 2026-07-28 request's: its `_meta` level for its whole call (no `Arc` per call).
    Request(LogFilter),
}

impl Hearing {
    fn hears(&self, level: LogLevel) -> bool {
        match self {
            Hearing::Session(filter) => filter.hears(level),
            Hearing::Request(filter) => filter.hears(level),
        }
    }
}

impl Reporter for SessionReporter {
    fn progress(&self, progress: f64, total: Option<f64>, message: Option<String>) -> BoxFuture<'_, ()> {
        // A task tool's call: its progress is its task's status message (its request is
        // answered with the task's id, or an `input_required` round, at its first wait).
        if self
            .asks
            .task_status(|| status_text(progress, total, message.clone()))
        {
            return Box::pin(std::future::ready(()));
        }
        Box::pin(async move {
            let Some(token) = &self.token else { return };
            let mut param = ProgressNotificationParam::new(token.clone(), progress);
            param.total = total;
            param.message = message;
            // A host that went away cannot hear it; the call goes on regardless.
            let _ = self.asks.peer.notify_progress(param).await;
        })
    }

    #[allow(deprecated)]
    fn log(&self, level: LogLevel, logger: Option<String>, data: Value) -> BoxFuture<'_, ()> {
        Box::pin(async move {
            // Handed to its task, the call's request is answered: as for any task, nowhere.
            if !self.filter.hears(level) || self.asks.handed_to().is_some() {
                return;
            }
            let mut param = LoggingMessageNotificationParam::new(theirs(level), data);
            param.logger = logger;
            let _ = self.asks.peer.notify_logging_message(param).await;
        })
    }

    fn ask(&self, key: String, ask: Ask) -> BoxFuture<'_, Result<Answer, AskError>> {
        Box::pin(self.asks.ask(key, ask))
    }

    fn ask_before_task(&self, key: String, ask: Ask) -> BoxFuture<'_, Result<Answer, AskError>> {
        Box::pin(self.asks.ask_before_task(key, ask))
    }

    fn elicitation_complete(&self, id: String) -> BoxFuture<'_, Result<(), AskError>> {
        Box::pin(async move {
            let notification = rmcp::model::CustomNotification::new(
                "notifications/elicitation/complete",
                Some(serde_json::json!({ "elicitationId": id })),
            );
            (self.asks.peer)
                .send_notification(rmcp::model::ServerNotification::CustomNotification(notification))
                .await
                .map_err(|e| AskError::Failed(format!("notifications/elicitation/complete: {e}")))
        })
    }
}

/// The context of the call `context` carries, reporting to its session (its request, on
/// 2026-07-28), asking through `round`'s questions, on behalf of `principal` (the caller the
/// handler already looked up: the request's, else its session's).
pub(crate) fn for_request(
    context: &HandlerContext,
    session: &Arc<LogFilter>,
    round: &super::asking::Round,
    principal: Option<Arc<crate::Principal>>,
) -> ToolContext {
    for_request_cancelled_by(context, session, round, context.ct.clone(), principal)
}

/// [`for_request`] cancelled by `cancel` rather than the request's own signal (a task tool's
/// call, whose cancellation becomes its task's once it is handed over).
pub(crate) fn for_request_cancelled_by(
    context: &HandlerContext,
    session: &Arc<LogFilter>,
    round: &super::asking::Round,
    cancel: tokio_util::sync::CancellationToken,
    principal: Option<Arc<crate::Principal>>,
) -> ToolContext {
    let filter = if round.is_modern() {
        Hearing::Request(LogFilter::of_request(context.meta.log_level()))
    } else {
        Hearing::Session(session.clone())
    };
    let reporter = SessionReporter {
        token: context.meta.get_progress_token(),
        filter,
        asks: round.asks(),
    };
    ToolContext::reporting_to(cancel, reporter).with_principal(principal)
}

/// A task's status message for a progress report: its message, else how far it is.
fn status_text(progress: f64, total: Option<f64>, message: Option<String>) -> String {
    match (message, total) {
        (Some(m), _) => m,
        (None, Some(total)) => format!("{progress}/{total}"),
        (None, None) => format!("{progress}"),
    }
}
