//! A procedure exposed as `tool(mutates, task)` in `expose!` runs as an MCP task, as a bespoke
//! `#[tool(task)]` does: a 2026-07-28 client that declares the
//! extension gets a `CreateTaskResult` and polls `tasks/get` (progress as the status message,
//! then the procedure's answer inlined), `tasks/cancel` stops it; any other client gets the
//! call inline; `tool(task = required)` refuses a client without the extension (`-32021`).

mod common;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};
use std::convert::Infallible;
use std::sync::Arc;
use std::time::Duration;
use surface::context::ToolContext;
use surface::mcp::McpServer;
use surface::{Elicit, Expose, Failure, FailureKind, expose, surface};
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};

const TASKS: &str = "io.modelcontextprotocol/tasks";

/// How a job runs.
#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]
pub struct Steps {
    /// How many steps.
    pub steps: u32,
    /// How long each takes, in milliseconds.
    pub step_ms: u64,
}

/// What a job answers.
#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]
pub struct Done {
    /// How many steps ran.
    pub steps: u32,
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
    pub async fn run(&self, input: Steps) -> Result<Done, Infallible> {
        let ctx = ToolContext::current();
        for step in 1..=input.steps {
            ctx.progress_with(
                f64::from(step),
                Some(f64::from(input.steps)),
                format!("step {step}"),
            )
            .await;
            tokio::time::sleep(Duration::from_millis(input.step_ms)).await;
        }
        self.finished.update(|n| *n += 1);
        Ok(Done { steps: input.steps })
    }

    /// The same job, which must run as a task.
    #[procedure("job.long")]
    pub async fn long(&self, input: Steps) -> Result<Done, Infallible> {
        self.run(input).await
    }

    /// Asks whom it is for with the call, then runs as a task, reporting as it goes.
    #[procedure("job.named")]
    pub async fn named(&self, input: Steps) -> Result<String, Failure> {
        let ctx = ToolContext::current();
        let answer = ctx
            .elicit::<Owner>("Whose job is it?")
            .key("user_name")
            .before_task()
            .await
            .map_err(|e| Failure::new(FailureKind::Refused, e.to_string()))?;
        let Some(Owner { name }) = answer.accepted() else {
            return Err(Failure::new(FailureKind::Refused, "nobody's job"));
        };
        ctx.progress_with(0.0, Some(1.0), format!("running {name}'s job"))
            .await;
        tokio::time::sleep(Duration::from_millis(input.step_ms)).await;
        Ok(format!("ran {name}'s job"))
    }

    /// Runs as a task, then panics (a bug in a job).
    #[procedure("job.crash")]
    pub async fn crash(&self, input: Steps) -> Result<Done, Infallible> {
        tokio::time::sleep(Duration::from_millis(input.step_ms)).await;
        let steps = [1u32, 2];
        Ok(Done {
            steps: steps[input.steps as usize],
        })
    }
}

/// Whose job it is.
#[derive(Clone, Debug, Deserialize, JsonSchema, Elicit)]
pub struct Owner {
    /// Their name.
    pub name: String,
}

const EXPOSE: Expose<Jobs> = expose!(Jobs {
    finished: resource,
    "job.run": tool(mutates, task),
    "job.long": tool(task = required),
    "job.named": tool(task = required),
    "job.crash": tool(task = required),
});

fn meta(declares_tasks: bool) -> Value {
    let capabilities = if declares_tasks {
        json!({"extensions": {TASKS: {}}, "elicitation": {}})
    } else {
        json!({})
    };
    json!({
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": capabilities,
        "io.modelcontextprotocol/clientInfo": {"name": "procedure-tasks-test", "version": "0"}
    })
}

/// A 2026-07-28 client over an in-process pipe served as stdio.
struct Client {
    lines: BufReader<tokio::io::ReadHalf<tokio::io::DuplexStream>>,
    write: tokio::io::WriteHalf<tokio::io::DuplexStream>,
    next: u64,
}

impl Client {
    fn connect() -> Client {
        let jobs = Jobs {
            finished: surface::Cell::new(0),
        };
        let served = McpServer::new("jobs", "0")
            .surface(Arc::new(jobs), EXPOSE)
            .start()
            .unwrap();
        let (read, write) = tokio::io::split(common::pipe(&served, 1 << 20));
        Client {
            lines: BufReader::new(read),
            write,
            next: 0,
        }
    }

    /// A request's whole answer (`result` or `error`).
    async fn ask(&mut self, method: &str, mut params: Value, declares_tasks: bool) -> Value {
        self.next += 1;
        params["_meta"] = meta(declares_tasks);
        let request = json!({"jsonrpc": "2.0", "id": self.next, "method": method, "params": params});
        let mut line = serde_json::to_vec(&request).unwrap();
        line.push(b'\n');
        self.write.write_all(&line).await.unwrap();
        loop {
            let mut answer = String::new();
            tokio::time::timeout(Duration::from_secs(20), self.lines.read_line(&mut answer))
                .await
                .expect("an answer in time")
                .unwrap();
            let answer: Value = serde_json::from_str(&answer).unwrap();
            if answer["id"] == self.next {
                return answer;
            }
        }
    }

    async fn result(&mut self, method: &str, params: Value) -> Value {
        let answer = self.ask(method, params, true).await;
        assert!(answer.get("result").is_some(), "{method}: {answer}");
        answer["result"].clone()
    }

    /// Polls `tasks/get` until `done` holds of the task (or it ends).
    async fn until(&mut self, id: &str, done: impl Fn(&Value) -> bool) -> Value {
        for _ in 0..400 {
            let task = self.result("tasks/get", json!({"taskId": id})).await;
            let terminal = ["completed", "failed", "cancelled"].contains(&task["status"].as_str().unwrap());
            if done(&task) || terminal {
                return task;
            }
            tokio::time::sleep(Duration::from_millis(25)).await;
        }
        panic!("task {id} never got there")
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_procedure_exposed_as_a_task_tool_runs_as_a_task() {
    let mut client = Client::connect();
    // A task: its id at once, the procedure's progress as the status message, then its answer.
    let created = client
        .result(
            "tools/call",
            json!({"name": "job_run", "arguments": {"steps": 3, "step_ms": 300}}),
        )
        .await;
    assert_eq!(created["resultType"], "task", "{created}");
    let id = created["taskId"].as_str().unwrap().to_owned();
    let working = client
        .until(&id, |t| {
            t["statusMessage"].as_str().is_some_and(|m| m.starts_with("step"))
        })
        .await;
    assert_eq!(working["status"], "working", "{working}");
    let done = client.until(&id, |_| false).await;
    assert_eq!(done["status"], "completed", "{done}");
    assert_eq!(done["result"]["structuredContent"], json!({"steps": 3}), "{done}");

    // Cancelled: the procedure's future is dropped.
    let created = client
        .result(
            "tools/call",
            json!({"name": "job_run", "arguments": {"steps": 100, "step_ms": 100}}),
        )
        .await;
    let id = created["taskId"].as_str().unwrap().to_owned();
    client.result("tasks/cancel", json!({"taskId": id})).await;
    let cancelled = client.until(&id, |_| false).await;
    assert_eq!(cancelled["status"], "cancelled", "{cancelled}");

    // A client that does not declare tasks: inline.
    let inline = client
        .ask(
            "tools/call",
            json!({"name": "job_run", "arguments": {"steps": 1, "step_ms": 1}}),
            false,
        )
        .await;
    assert_eq!(
        inline["result"]["structuredContent"],
        json!({"steps": 1}),
        "{inline}"
    );
    assert!(inline["result"].get("taskId").is_none(), "{inline}");

    // `task = required`: refused to such a client, naming the extension.
    let refused = client
        .ask(
            "tools/call",
            json!({"name": "job_long", "arguments": {"steps": 1, "step_ms": 1}}),
            false,
        )
        .await;
    assert_eq!(refused["error"]["code"], -32021, "{refused}");
    let created = client
        .result(
            "tools/call",
            json!({"name": "job_long", "arguments": {"steps": 1, "step_ms": 1}}),
        )
        .await;
    assert_eq!(created["resultType"], "task", "{created}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_task_tool_asks_with_its_call_then_becomes_a_task() {
    let mut client = Client::connect();
    let call = json!({"name": "job_named", "arguments": {"steps": 1, "step_ms": 400}});
    // Round one: the question, as an `input_required` round of the call itself (no task yet).
    let asked = client.result("tools/call", call.clone()).await;
    assert_eq!(asked["resultType"], "input_required", "{asked}");
    assert!(asked.get("taskId").is_none(), "{asked}");
    let question = &asked["inputRequests"]["user_name"];
    assert_eq!(question["method"], "elicitation/create", "{asked}");
    // Round two: answered, it goes on as a task; nothing of the rounds leaks into the task.
    let mut answered = call.clone();
    answered["inputResponses"] = json!({"user_name": {"action": "accept", "content": {"name": "Alice"}}});
    answered["requestState"] = asked["requestState"].clone();
    let created = client.result("tools/call", answered).await;
    assert_eq!(created["resultType"], "task", "{created}");
    assert!(created.get("requestState").is_none(), "{created}");
    assert!(created.get("inputRequests").is_none(), "{created}");
    let id = created["taskId"].as_str().unwrap().to_owned();
    // Its progress after the hand-off is the task's status message.
    let working = client
        .until(&id, |t| t["statusMessage"] == "running Alice's job")
        .await;
    assert_eq!(working["status"], "working", "{working}");
    // The task's result holds what was gathered before it.
    let done = client.until(&id, |_| false).await;
    assert_eq!(done["status"], "completed", "{done}");
    assert_eq!(
        done["result"]["structuredContent"]["value"], "ran Alice's job",
        "{done}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_task_whose_procedure_panics_fails_saying_so() {
    let mut client = Client::connect();
    let created = client
        .result(
            "tools/call",
            json!({"name": "job_crash", "arguments": {"steps": 7, "step_ms": 100}}),
        )
        .await;
    assert_eq!(created["resultType"], "task", "{created}");
    let id = created["taskId"].as_str().unwrap().to_owned();
    let failed = client.until(&id, |_| false).await;
    assert_eq!(failed["status"], "failed", "{failed}");
    assert!(
        failed
            .to_string()
            .contains("the call panicked: index out of bounds"),
        "{failed}"
    );
}
