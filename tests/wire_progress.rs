//! A procedure's progress crosses the wire face: a daemon's `ctx.progress` reaches the dialling
//! caller's context as `progress` frames, in order, before the answer; and a call that keeps
//! reporting outlives the dial's call timeout, which counts from its last report.

mod common;

use common::daemon::socket_dir;
use futures::future::BoxFuture;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::Value;
use std::convert::Infallible;
use std::sync::{Arc, Mutex};
use std::time::Duration;
use surface::context::{LogLevel, Reporter, ToolContext};
use surface::wire::DialOptions;
use surface::{CancellationToken, Expose, expose, surface};

/// How a job runs.
#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]
pub struct Steps {
    /// How many steps.
    pub steps: u32,
    /// How long each takes, in milliseconds.
    pub step_ms: u64,
}

/// A job runner.
#[surface]
pub struct Jobs {
    /// How many jobs finished.
    #[cell]
    pub finished: u32,
}

#[surface]
impl Jobs {
    /// Run a job step by step, reporting each step.
    #[procedure("job.run")]
    pub async fn run(&self, input: Steps) -> Result<u32, Infallible> {
        let ctx = ToolContext::current();
        for step in 1..=input.steps {
            tokio::time::sleep(Duration::from_millis(input.step_ms)).await;
            ctx.progress_with(
                f64::from(step),
                Some(f64::from(input.steps)),
                format!("step {step}"),
            )
            .await;
        }
        self.finished.update(|n| *n += 1);
        Ok(input.steps)
    }
}

const EXPOSE: Expose<Jobs> = expose!(Jobs {
    finished: resource,
    "job.run": tool(mutates),
});

/// What the caller's context heard.
#[derive(Default)]
struct Heard(Mutex<Vec<String>>);

impl Reporter for Heard {
    fn progress(&self, progress: f64, total: Option<f64>, message: Option<String>) -> BoxFuture<'_, ()> {
        let total = total.map_or_else(|| "?".to_owned(), |t| t.to_string());
        let message = message.unwrap_or_default();
        self.0
            .lock()
            .unwrap()
            .push(format!("{progress}/{total} {message}"));
        Box::pin(async {})
    }
    fn log(&self, _: LogLevel, _: Option<String>, _: Value) -> BoxFuture<'_, ()> {
        Box::pin(async {})
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_procedures_progress_reaches_the_dialling_caller_and_keeps_its_call_alive() {
    let dir = socket_dir("wire-progress");
    let path = dir.join("jobs.sock");
    let jobs = Arc::new(Jobs {
        finished: surface::Cell::new(0),
    });
    let _server = surface::wire::serve_unix_socket(&path, jobs.clone(), EXPOSE).unwrap();
    // Five steps of 700 ms each take 3.5 s, longer than the 2 s the call may wait without news.
    let options = DialOptions::default().call_timeout(Duration::from_secs(2));
    let connection = surface::wire::dial_unix_socket_with::<Jobs>(&path, &options)
        .await
        .unwrap();
    let heard = Arc::new(Heard::default());
    let ctx = ToolContext::new(CancellationToken::new(), Some(heard.clone()));
    let steps = Steps {
        steps: 5,
        step_ms: 700,
    };
    let answer = ctx.scope(connection.client.job().run(steps)).await;
    assert_eq!(answer.unwrap(), 5);
    assert_eq!(
        *heard.0.lock().unwrap(),
        (1..=5).map(|s| format!("{s}/5 step {s}")).collect::<Vec<_>>()
    );

    // A caller that listens to nothing still gets its answer.
    let quick = Steps {
        steps: 2,
        step_ms: 10,
    };
    assert_eq!(connection.client.job().run(quick).await.unwrap(), 2);
    assert_eq!(jobs.finished.get(), 2);

    // Without progress, the call timeout still holds.
    let silent = DialOptions::default().call_timeout(Duration::from_millis(500));
    let impatient = surface::wire::dial_unix_socket_with::<Jobs>(&path, &silent)
        .await
        .unwrap();
    let one_long_step = Steps {
        steps: 1,
        step_ms: 3000,
    };
    let late = impatient.client.job().run(one_long_step).await.unwrap_err();
    assert!(
        matches!(late.kind, surface::FailureKind::TimedOut { .. }),
        "{late:?}"
    );
    let _ = std::fs::remove_dir_all(dir);
}
