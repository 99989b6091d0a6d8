//! `serve_stdio` awaited on a multi-thread runtime (a plain `#[tokio::main]`) serves the
//! connection on a thread of its own running a current-thread runtime, where one pipe is
//! served fastest; `serve_stdio_here` keeps it on the caller's runtime. The test runs itself
//! as the server: the child (this binary, told so by an environment variable) serves its real
//! stdio, and a procedure reports the thread and runtime flavor it was called on.

use serde_json::{Value, json};
use std::convert::Infallible;
use std::io::{BufRead, BufReader, Write};
use std::process::{Command, Stdio};
use surface::mcp::McpServer;
use surface::{Cell, Expose, expose, surface};

const CHILD: &str = "SURFACE_STDIO_RUNTIME_CHILD";

/// Where a call runs.
#[surface]
pub struct Probe {
    /// Calls so far.
    #[cell]
    pub calls: u32,
}

#[surface]
impl Probe {
    /// The calling thread's name and the runtime flavor, as `name|flavor`.
    #[procedure("probe.where")]
    async fn where_(&self) -> Result<String, Infallible> {
        self.calls.update(|c| *c += 1);
        let thread = std::thread::current();
        let flavor = tokio::runtime::Handle::current().runtime_flavor();
        Ok(format!("{}|{flavor:?}", thread.name().unwrap_or("unnamed")))
    }
}

const EXPOSE: Expose<Probe> = expose!(Probe { "probe.where": tool });

/// In the child: serve stdio from a multi-thread runtime, the way `mode` says.
fn serve_in_child(mode: &str) {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    runtime.block_on(async {
        let served = McpServer::new("probe", "0.0.0")
            .surface(Probe { calls: Cell::new(0) }, EXPOSE)
            .start()
            .unwrap();
        match mode {
            "here" => served.serve_stdio_here().await.unwrap(),
            _ => served.serve_stdio().await.unwrap(),
        }
    });
}

/// Runs this test as the server child, calls `probe_where` twice in a 2026-07-28 session (the
/// first call opens it, through rmcp's loop; the second takes the fast path), and answers what
/// it reported.
fn where_the_child_serves(test: &str, mode: &str) -> Vec<String> {
    let mut child = Command::new(std::env::current_exe().unwrap())
        .args(["--exact", test, "--nocapture", "--test-threads=1"])
        .env(CHILD, mode)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    let mut stdout = BufReader::new(child.stdout.take().unwrap());
    let send = |stdin: &mut std::process::ChildStdin, v: Value| {
        writeln!(stdin, "{v}").unwrap();
        stdin.flush().unwrap();
    };
    // A child that stops answering is killed, so the reads below end.
    let pid = child.id();
    let waited = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let reaped = waited.clone();
    std::thread::spawn(move || {
        std::thread::sleep(std::time::Duration::from_secs(120));
        // Only a child not yet waited for: its pid is still its own.
        if !reaped.load(std::sync::atomic::Ordering::SeqCst) {
            let _ = Command::new("kill").arg("-9").arg(pid.to_string()).status();
        }
    });
    // The test harness prints on stdout before the server takes it, without a line break
    // before the first message.
    let mut answer = |id: u64| loop {
        let mut line = String::new();
        assert!(stdout.read_line(&mut line).unwrap() > 0, "the child ended");
        let message = line.find('{').map_or("", |at| &line[at..]);
        if let Ok(v) = serde_json::from_str::<Value>(message)
            && v["id"] == id
        {
            return v;
        }
    };
    let meta = json!({
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": {},
        "io.modelcontextprotocol/clientInfo": {"name": "t", "version": "0"}
    });
    let mut seen = Vec::new();
    for id in 1..=2 {
        send(
            &mut stdin,
            json!({"jsonrpc": "2.0", "id": id, "method": "tools/call",
            "params": {"name": "probe_where", "arguments": {}, "_meta": meta}}),
        );
        let v = answer(id);
        seen.push(
            v["result"]["structuredContent"]["value"]
                .as_str()
                .unwrap_or_else(|| panic!("{v}"))
                .to_owned(),
        );
    }
    drop(stdin);
    let status = child.wait().unwrap();
    waited.store(true, std::sync::atomic::Ordering::SeqCst);
    assert!(status.success());
    seen
}

#[test]
fn serve_stdio_on_a_multi_thread_runtime_serves_on_a_current_thread_runtime_of_its_own() {
    if let Ok(mode) = std::env::var(CHILD) {
        return serve_in_child(&mode);
    }
    let seen = where_the_child_serves(
        "serve_stdio_on_a_multi_thread_runtime_serves_on_a_current_thread_runtime_of_its_own",
        "default",
    );
    for s in &seen {
        assert_eq!(s, "surface-stdio|CurrentThread");
    }
}

#[test]
fn serve_stdio_here_stays_on_the_callers_runtime() {
    if let Ok(mode) = std::env::var(CHILD) {
        return serve_in_child(&mode);
    }
    let seen = where_the_child_serves("serve_stdio_here_stays_on_the_callers_runtime", "here");
    for s in &seen {
        assert!(s.ends_with("|MultiThread"), "{s}");
    }
}
