//! A tool's progress on the argv face: what its `ctx.progress` reports (run in this process, or
//! by a procedure of a dialled daemon, whose progress crosses the wire) is drawn on stderr — a
//! progress bar when stderr is a terminal, one plain line per change when it is not (a log, a
//! pipe, CI). stdout keeps the answer alone.
//!
//! Progress also shows the call is alive: the command's `--timeout` counts from the last report,
//! so a long tool that keeps reporting is not cut off.

use crate::context::{LogLevel, Reporter, ToolContext};
use crate::sync::lock;
use crate::tool::CancellationToken;
use futures::future::BoxFuture;
use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use serde_json::Value;
use std::future::Future;
use std::io::IsTerminal;
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tokio::time::Instant;

/// Runs one tool call with its progress drawn on stderr; `None` when it neither answered nor
/// reported progress for `timeout`.
pub(super) async fn drawn<F, Fut>(timeout: Duration, call: F) -> Option<Fut::Output>
where
    F: FnOnce(CancellationToken) -> Fut,
    Fut: Future,
{
    let drawn = Arc::new(Drawn::on_stderr());
    let cancel = CancellationToken::new();
    let ctx = ToolContext::new(cancel.clone(), Some(drawn.clone()));
    let call = ctx.scope(call(cancel));
    tokio::pin!(call);
    let answer = loop {
        tokio::select! {
            answer = &mut call => break Some(answer),
            () = tokio::time::sleep_until(drawn.heard() + timeout) => {
                if drawn.heard() + timeout <= Instant::now() {
                    break None;
                }
            }
        }
    };
    drawn.finish();
    answer
}

/// The bar's length when the total is known: progress is drawn in thousandths of it.
const SCALE: f64 = 1000.0;

/// Draws one call's progress on stderr; [`Drawn::finish`] clears the bar before the answer.
pub(super) struct Drawn {
    how: How,
    /// When the call last reported progress (or started).
    heard: Mutex<Instant>,
}

enum How {
    /// A terminal: one bar, created on the first report.
    Bar(Mutex<Option<ProgressBar>>),
    /// Anything else: a line per report that reads differently from the last one printed.
    Lines(Mutex<String>),
}

impl Drawn {
    /// A bar when stderr is a terminal, plain lines otherwise.
    pub(super) fn on_stderr() -> Self {
        let how = if std::io::stderr().is_terminal() {
            How::Bar(Mutex::new(None))
        } else {
            How::Lines(Mutex::new(String::new()))
        };
        Drawn {
            how,
            heard: Mutex::new(Instant::now()),
        }
    }

    /// When the call last reported progress (or started, if it never did).
    pub(super) fn heard(&self) -> Instant {
        *lock(&self.heard)
    }

    /// Clears the bar, so what follows on stderr (a refusal) starts on a clean line.
    pub(super) fn finish(&self) {
        if let How::Bar(bar) = &self.how
            && let Some(bar) = lock(bar).take()
        {
            bar.finish_and_clear();
        }
    }

    fn draw(&self, progress: f64, total: Option<f64>, message: Option<String>) {
        *lock(&self.heard) = Instant::now();
        match &self.how {
            How::Bar(bar) => {
                let mut bar = lock(bar);
                let bar = bar
                    .get_or_insert_with(|| ProgressBar::with_draw_target(None, ProgressDrawTarget::stderr()));
                bar.set_message(message.unwrap_or_else(|| number(progress)));
                match fraction(progress, total) {
                    Some(f) => {
                        if bar.length().is_none() {
                            bar.set_style(
                                ProgressStyle::with_template("{bar:30} {percent:>3}% {msg}")
                                    .expect("the template parses"),
                            );
                        }
                        bar.set_length(SCALE as u64);
                        bar.set_position((f * SCALE) as u64);
                    }
                    None => {
                        if bar.length().is_some() {
                            bar.unset_length();
                        }
                        bar.set_style(
                            ProgressStyle::with_template("{spinner} {msg}").expect("the template parses"),
                        );
                        bar.tick();
                    }
                }
            }
            How::Lines(last) => {
                let line = line(progress, total, message.as_deref());
                let mut last = lock(last);
                if *last != line {
                    eprintln!("{line}");
                    *last = line;
                }
            }
        }
    }
}

/// `progress` of `total` as a fraction in 0..=1, when the total is known and positive.
fn fraction(progress: f64, total: Option<f64>) -> Option<f64> {
    total
        .filter(|t| *t > 0.0 && t.is_finite())
        .map(|t| (progress / t).clamp(0.0, 1.0))
}

fn number(n: f64) -> String {
    if n.fract() == 0.0 && n.abs() < 1e15 {
        format!("{}", n as i64)
    } else {
        format!("{n:.2}")
    }
}

/// One plain progress line: `progress 12%: message`, or `progress 3: message` without a total.
fn line(progress: f64, total: Option<f64>, message: Option<&str>) -> String {
    let amount = match fraction(progress, total) {
        Some(f) => format!("{}%", (f * 100.0).floor() as u32),
        None => number(progress),
    };
    match message {
        Some(m) => format!("progress {amount}: {m}"),
        None => format!("progress {amount}"),
    }
}

impl Reporter for Drawn {
    fn progress(&self, progress: f64, total: Option<f64>, message: Option<String>) -> BoxFuture<'_, ()> {
        self.draw(progress, total, message);
        Box::pin(std::future::ready(()))
    }

    fn log(&self, _: LogLevel, _: Option<String>, _: Value) -> BoxFuture<'_, ()> {
        Box::pin(std::future::ready(()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_line_says_how_far_and_what() {
        assert_eq!(line(3.0, Some(600.0), Some("waiting")), "progress 0%: waiting");
        assert_eq!(line(300.0, Some(600.0), None), "progress 50%");
        assert_eq!(line(7.0, None, Some("copied")), "progress 7: copied");
        assert_eq!(line(0.25, None, None), "progress 0.25");
        // Past the total, or a total of zero: never more than 100%, never a division by zero.
        assert_eq!(line(9.0, Some(3.0), None), "progress 100%");
        assert_eq!(line(1.0, Some(0.0), None), "progress 1");
    }
}
