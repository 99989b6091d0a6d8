//! The ops example as a child process, driven over its real stdio one JSON-RPC line at a time.

use serde_json::{Value, json};
use std::process::Stdio;
use std::time::Duration;
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};
use tokio::process::{Child, ChildStdin, ChildStdout, Command};

/// The ops binary, pinned once per test process right after it is built: the target
/// directory may be shared with other checkouts whose builds replace `examples/ops`. Pinned by
/// a hard link in the target's own scratch directory (no second copy on disk, gone with the
/// target); copied only where a link cannot be made.
pub fn ops() -> &'static std::path::Path {
    static PINNED: std::sync::OnceLock<std::path::PathBuf> = std::sync::OnceLock::new();
    PINNED.get_or_init(|| {
        let built = super::ops_binary();
        // One per checkout and test binary, replaced by each run.
        let test = std::env::current_exe().unwrap();
        let test = test.file_stem().unwrap().to_string_lossy();
        let checkout = env!("CARGO_MANIFEST_DIR").replace(['/', '\\'], "_");
        let pinned = std::path::Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!("ops{checkout}-{test}"));
        let _ = std::fs::remove_file(&pinned);
        if std::fs::hard_link(&built, &pinned).is_err() {
            std::fs::copy(&built, &pinned).expect("the ops binary copies");
        }
        pinned
    })
}

pub struct Wire {
    pub child: Child,
    pub stdin: Option<ChildStdin>,
    pub stdout: BufReader<ChildStdout>,
}

impl Wire {
    /// Starts ops with `env`; its stderr is kept for [`Wire::stderr`] when `keep_stderr`, else
    /// discarded (a handler that prints would fill an unread pipe and stall).
    pub fn start(env: &[(&str, &str)], keep_stderr: bool) -> Wire {
        Wire::start_with(&[], env, keep_stderr)
    }

    /// [`Wire::start`] with command-line arguments (`--no-ui`).
    pub fn start_with(args: &[&str], env: &[(&str, &str)], keep_stderr: bool) -> Wire {
        Wire::start_at(ops(), args, env, keep_stderr)
    }

    /// [`Wire::start_with`] of another binary that serves MCP on stdio.
    pub fn start_at(
        binary: &std::path::Path,
        args: &[&str],
        env: &[(&str, &str)],
        keep_stderr: bool,
    ) -> Wire {
        Wire::spawn(Command::new(binary), args, env, keep_stderr)
    }

    /// [`Wire::start_with`] as another user: `uid`, with the group of the same number (needs
    /// root).
    pub fn start_as(uid: u32, args: &[&str]) -> Wire {
        let mut command = Command::new(ops());
        command.uid(uid).gid(uid);
        Wire::spawn(command, args, &[], false)
    }

    fn spawn(mut command: Command, args: &[&str], env: &[(&str, &str)], keep_stderr: bool) -> Wire {
        command
            .args(args)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(if keep_stderr {
                Stdio::piped()
            } else {
                Stdio::null()
            })
            .kill_on_drop(true);
        for (k, v) in env {
            command.env(k, v);
        }
        let mut child = command.spawn().expect("ops starts");
        let stdin = child.stdin.take();
        let stdout = BufReader::new(child.stdout.take().unwrap());
        Wire { child, stdin, stdout }
    }

    pub async fn raw(&mut self, line: &[u8]) {
        let stdin = self.stdin.as_mut().expect("stdin open");
        stdin.write_all(line).await.unwrap();
        stdin.write_all(b"\n").await.unwrap();
    }

    pub async fn send(&mut self, message: Value) {
        self.raw(&serde_json::to_vec(&message).unwrap()).await;
    }

    /// The next stdout line, which must be one JSON-RPC message.
    pub async fn receive_raw(&mut self) -> String {
        let mut line = String::new();
        let n = tokio::time::timeout(Duration::from_secs(20), self.stdout.read_line(&mut line))
            .await
            .expect("an answer in time")
            .unwrap();
        assert!(n > 0, "stdout ended");
        line
    }

    pub async fn receive(&mut self) -> Value {
        let line = self.receive_raw().await;
        let v: Value =
            serde_json::from_str(&line).unwrap_or_else(|e| panic!("stdout carried non-JSON {line:?}: {e}"));
        assert_eq!(v["jsonrpc"], "2.0", "{line}");
        v
    }

    /// Sends `line`, then a `ping` (id `marker`); answers every message that arrived before
    /// the ping's answer (transport errors are written at once, so they come first).
    pub async fn answers_to(&mut self, line: &[u8], marker: u64) -> Vec<Value> {
        self.raw(line).await;
        self.send(json!({"jsonrpc": "2.0", "id": marker, "method": "ping"}))
            .await;
        let mut got = Vec::new();
        loop {
            let v = self.receive().await;
            if v["id"] == marker && v.get("result").is_some() {
                return got;
            }
            got.push(v);
        }
    }

    pub async fn request(&mut self, id: u64, method: &str, params: Value) -> Value {
        self.send(json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}))
            .await;
        loop {
            let v = self.receive().await;
            if v["id"] == id {
                return v;
            }
        }
    }

    /// Opens a 2025-06-18 session.
    pub async fn initialize(&mut self) {
        let init = self
            .request(
                0,
                "initialize",
                json!({"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "t", "version": "0"}}),
            )
            .await;
        assert_eq!(init["result"]["serverInfo"]["name"], "ops", "{init}");
        self.send(json!({"jsonrpc": "2.0", "method": "notifications/initialized"}))
            .await;
    }

    /// Closes stdin, waits for a clean exit, answers what ops wrote on stderr.
    pub async fn stderr(mut self) -> String {
        drop(self.stdin.take());
        let status = tokio::time::timeout(Duration::from_secs(10), self.child.wait())
            .await
            .expect("ops exits at EOF");
        assert!(status.unwrap().success());
        let mut err = String::new();
        if let Some(mut stderr) = self.child.stderr.take() {
            tokio::io::AsyncReadExt::read_to_string(&mut stderr, &mut err)
                .await
                .unwrap();
        }
        err
    }
}
