//! The argv face, black-box: the real `opsctl` binary (examples/opsctl.rs), in-process and
//! dialled to a real `ops --socket PATH` daemon, for every exit code, the boolean tristate,
//! `--input -`, usage errors that reach no handler, a closed pipe, and its `--help`; and the
//! decoder its local input check runs, against the served dispatch's own.

mod common;

#[allow(dead_code)]
#[path = "../examples/ops.rs"]
mod ops;

use common::{example_binary, golden, ops_binary};
use serde_json::{Value, json};
use std::io::{BufRead, BufReader, Read, Write};
use std::path::PathBuf;
use std::process::{Child, Command, Output, Stdio};
use std::time::{Duration, Instant};

fn opsctl() -> Command {
    // Built once per test binary: a cargo call per command would cost seconds each.
    static BINARY: std::sync::OnceLock<PathBuf> = std::sync::OnceLock::new();
    Command::new(BINARY.get_or_init(|| example_binary("opsctl")))
}

/// Runs opsctl with `args` (stdin closed) and answers its output.
fn run(args: &[&str]) -> Output {
    opsctl()
        .args(args)
        .stdin(Stdio::null())
        .output()
        .expect("opsctl runs")
}

fn code(o: &Output) -> i32 {
    o.status.code().expect("opsctl exits (no signal)")
}

fn stdout_json(o: &Output) -> Value {
    let text = String::from_utf8_lossy(&o.stdout);
    serde_json::from_str(&text).unwrap_or_else(|e| panic!("stdout is not one JSON value ({e}): {text:?}"))
}

fn stderr_json(o: &Output) -> Value {
    let text = String::from_utf8_lossy(&o.stderr);
    serde_json::from_str(text.trim())
        .unwrap_or_else(|e| panic!("stderr is not one JSON value ({e}): {text:?}"))
}

/// An `ops --socket PATH` daemon, killed on drop.
struct Daemon {
    child: Child,
    path: PathBuf,
}

impl Daemon {
    fn start(name: &str) -> Daemon {
        Daemon::start_with(name, &[])
    }

    fn start_with(name: &str, env: &[(&str, &str)]) -> Daemon {
        let dir = std::env::temp_dir().join(format!("surface-cli-{}-{name}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("ops.sock");
        let _ = std::fs::remove_file(&path);
        static OPS: std::sync::OnceLock<PathBuf> = std::sync::OnceLock::new();
        let child = Command::new(OPS.get_or_init(ops_binary))
            .arg("--socket")
            .arg(&path)
            .envs(env.iter().copied())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .expect("the daemon starts");
        let started = Instant::now();
        while !path.exists() {
            assert!(
                started.elapsed() < Duration::from_secs(20),
                "the daemon never listened"
            );
            std::thread::sleep(Duration::from_millis(20));
        }
        Daemon { child, path }
    }

    fn socket(&self) -> &str {
        self.path.to_str().unwrap()
    }

    /// Stops it and answers everything it wrote to stderr.
    fn stop(mut self) -> String {
        self.child.kill().unwrap();
        self.child.wait().unwrap();
        let mut err = String::new();
        self.child
            .stderr
            .take()
            .unwrap()
            .read_to_string(&mut err)
            .unwrap();
        err
    }
}

impl Drop for Daemon {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

#[test]
fn help_is_a_snapshot_and_dials_nothing() {
    let top = run(&["--help"]);
    assert_eq!(code(&top), 0);
    golden("opsctl_help.txt", &String::from_utf8(top.stdout).unwrap());
    let tool = run(&["proc_spawn", "--help"]);
    assert_eq!(code(&tool), 0);
    golden(
        "opsctl_proc_spawn_help.txt",
        &String::from_utf8(tool.stdout).unwrap(),
    );
    // A socket nobody serves: help neither dials it nor fails on it.
    let nowhere = run(&["--socket", "/nonexistent/ops.sock", "proc_kill", "--help"]);
    assert_eq!(code(&nowhere), 0, "{nowhere:?}");
    assert!(String::from_utf8_lossy(&nowhere.stdout).contains("--pid <INTEGER>"));
}

#[test]
fn subcommands_are_the_tools_list_names_and_list_reads_the_table() {
    // `list` never dials: a dead socket does not matter.
    let list = run(&["--socket", "/nonexistent/ops.sock", "list"]);
    assert_eq!(code(&list), 0, "{list:?}");
    let names: Vec<(String, String)> = stdout_json(&list)
        .as_array()
        .unwrap()
        .iter()
        .map(|r| {
            (
                r["name"].as_str().unwrap().to_owned(),
                r["kind"].as_str().unwrap().to_owned(),
            )
        })
        .collect();
    let expect = [
        ("proc_spawn", "tool"),
        ("proc_kill", "tool"),
        ("load_sample", "tool"),
        ("count", "tool"),
        ("processes_view", "tool"),
        ("proc_wait", "tool"),
        ("load", "cell"),
        ("processes", "collection"),
        ("log", "stream"),
        ("autosave", "event"),
    ];
    assert_eq!(
        names,
        expect.map(|(n, k)| (n.to_owned(), k.to_owned())),
        "proc.configure is not exposed, so it is no command"
    );
    let whole = stdout_json(&run(&["list", "--json"]));
    let kill = whole["tools"]
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["name"] == "proc_kill")
        .unwrap();
    assert_eq!(kill["inputSchema"]["required"], json!(["pid"]));
    assert_eq!(kill["annotations"]["destructiveHint"], true);
    assert_eq!(whole["members"][0]["uri"], "surface://cells/load");
    let unexposed = run(&["proc_configure", "--pid", "1", "--nice", "3"]);
    assert_eq!(code(&unexposed), 2);
}

#[test]
fn exit_codes_in_process() {
    // 0: data on stdout, compact in a pipe.
    let load = run(&["get", "load"]);
    assert_eq!(code(&load), 0);
    assert_eq!(
        String::from_utf8_lossy(&load.stdout),
        "{\"cpu\":0.0,\"procs\":2}\n"
    );
    assert_eq!(
        stdout_json(&run(&["proc_kill", "--pid", "2"])),
        json!({"ok": true})
    );
    assert_eq!(stdout_json(&run(&["keys", "processes"])), json!([1, 2]));
    assert_eq!(stdout_json(&run(&["get", "processes", "1"]))["name"], "init");

    // 1: the tool's refusal, on stderr as JSON, nothing on stdout.
    let refused = run(&["proc_kill", "--pid", "4242"]);
    assert_eq!(code(&refused), 1);
    assert!(refused.stdout.is_empty());
    assert_eq!(
        stderr_json(&refused),
        json!({"message": "there is no process 4242", "detail": {"kind": "no-such-process", "pid": 4242}, "kind": "refused"})
    );
    // `--json`: the whole answer on stdout, still exit 1.
    let whole = run(&["proc_kill", "--pid", "4242", "--json"]);
    assert_eq!(code(&whole), 1);
    let answer = stdout_json(&whole);
    assert_eq!(answer["isError"], true);
    assert_eq!(answer["structuredContent"]["pid"], 4242);
    let ok = stdout_json(&run(&["load_sample", "--json"]));
    assert_eq!(ok["isError"], false);
    assert_eq!(ok["structuredContent"], json!({"cpu": 0.0, "procs": 2}));
    assert_eq!(
        serde_json::from_str::<Value>(ok["content"][0]["text"].as_str().unwrap()).unwrap(),
        ok["structuredContent"]
    );
    let missing = run(&["get", "processes", "7"]);
    assert_eq!(code(&missing), 1);
    assert_eq!(stderr_json(&missing)["kind"], "unknown");

    // 2: usage errors.
    for args in [
        &["proc_kill", "--pid", "x"][..],
        &["proc_kill"],
        &["proc_kill", "--pid", "1", "--input", "{\"pid\": 1}"],
        &["proc_kill", "--input", "{\"pid\": \"x\"}"],
        &["proc_kill", "--input", "[1]"],
        &["count", "--running", "--no-running"],
        &["get", "nothing"],
        &["get", "processes"],
        &["get", "load", "1"],
        &["no_such_tool"],
    ] {
        let o = run(args);
        assert_eq!(code(&o), 2, "{args:?}: {o:?}");
        assert!(o.stdout.is_empty(), "{args:?}");
    }
    // A procedure's input is refused by the served side's own decoder, in its words.
    let local = run(&["proc_kill", "--input", "{\"pid\": \"x\"}"]);
    assert_eq!(
        stderr_json(&local),
        json!({"message": "invalid argument `pid`: invalid type: string \"x\", expected u32", "kind": "invalid-input", "field": "pid"})
    );

    // Completions are scripts.
    for shell in ["bash", "zsh", "fish"] {
        let o = run(&["completions", shell]);
        assert_eq!(code(&o), 0);
        assert!(
            String::from_utf8_lossy(&o.stdout).contains("proc_kill"),
            "{shell}"
        );
    }
}

#[test]
fn exit_codes_over_the_socket() {
    let daemon = Daemon::start("codes");
    let s = daemon.socket();
    let killed = run(&["--socket", s, "proc_kill", "--pid", "2"]);
    assert_eq!((code(&killed), stdout_json(&killed)), (0, json!({"ok": true})));
    // The daemon's state moved: a second kill of the same pid is a refusal.
    let again = run(&["--socket", s, "proc_kill", "--pid", "2"]);
    assert_eq!(code(&again), 1);
    assert_eq!(stderr_json(&again)["detail"]["kind"], "no-such-process");
    assert_eq!(stdout_json(&run(&["--socket", s, "get", "load"]))["procs"], 1);
    drop(daemon);

    // 3: nobody serves the socket.
    let gone = run(&["--socket", "/nonexistent/ops.sock", "proc_kill", "--pid", "2"]);
    assert_eq!(code(&gone), 3, "{gone:?}");
    assert_eq!(stderr_json(&gone)["kind"], "transport");

    // 3: a daemon too slow for --timeout.
    let slow = Daemon::start_with("slow", &[("OPS_SPAWN_DELAY_MS", "5000")]);
    let started = Instant::now();
    let late = run(&[
        "--socket",
        slow.socket(),
        "--timeout",
        "1",
        "proc_spawn",
        "--name",
        "late",
    ]);
    assert_eq!(code(&late), 3, "{late:?}");
    assert!(started.elapsed() < Duration::from_secs(4));
    assert!(
        stderr_json(&late)["message"]
            .as_str()
            .unwrap()
            .contains("no answer within 1 s")
    );
}

#[test]
fn booleans_are_a_tristate_and_input_reads_stdin() {
    let daemon = Daemon::start("tristate");
    let s = daemon.socket();
    let spawned = run(&["--socket", s, "proc_spawn", "--name", "idle", "--paused"]);
    assert_eq!(stdout_json(&spawned)["state"], "sleeping", "{spawned:?}");
    // Two running (init, shell), one sleeping: neither flag omits the key and counts all.
    let count = |extra: &[&str]| stdout_json(&run(&[&["--socket", s, "count"], extra].concat()));
    assert_eq!(count(&[]), json!(3));
    assert_eq!(count(&["--running"]), json!(2));
    assert_eq!(count(&["--no-running"]), json!(1));
    assert_eq!(count(&["--state", "sleeping"]), json!(1));

    // `--input -`: the whole object from stdin.
    let mut child = opsctl()
        .args(["--socket", s, "proc_spawn", "--input", "-"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    child
        .stdin
        .take()
        .unwrap()
        .write_all(br#"{"name": "from-stdin"}"#)
        .unwrap();
    let out = child.wait_with_output().unwrap();
    assert_eq!(code(&out), 0, "{out:?}");
    assert_eq!(stdout_json(&out)["name"], "from-stdin");
    assert_eq!(count(&[]), json!(4));
}

#[test]
fn a_usage_error_reaches_no_handler() {
    let daemon = Daemon::start("usage");
    let s = daemon.socket();
    for args in [
        &["--socket", s, "proc_spawn", "--input", "{\"name\": 3}"][..],
        &[
            "--socket",
            s,
            "proc_spawn",
            "--name",
            "a",
            "--input",
            "{\"name\": \"b\"}",
        ],
        &[
            "--socket",
            s,
            "proc_spawn",
            "--input",
            "{\"name\": \"c\", \"paused\": \"yes\"}",
        ],
        &["--socket", s, "proc_spawn"],
    ] {
        assert_eq!(code(&run(args)), 2, "{args:?}");
    }
    // The one good call, so the log below is known to record calls.
    assert_eq!(code(&run(&["--socket", s, "proc_spawn", "--name", "good"])), 0);
    let log = daemon.stop();
    assert_eq!(log.matches("ops: executing proc.spawn").count(), 1, "{log}");
    assert!(log.contains("ops: executing proc.spawn good"), "{log}");
}

#[test]
fn a_procedure_input_is_decoded_into_its_type_before_any_dial() {
    // `pid` is a `u32`: the advertised schema says `integer, minimum 0` and nothing more, so
    // 2^32 passes it; the procedure's own decoder refuses it, here, naming the field.
    let schema = stdout_json(&run(&["list", "--json"]))["tools"]
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["name"] == "proc_kill")
        .unwrap()["inputSchema"]["properties"]["pid"]
        .clone();
    assert_eq!(schema["type"], "integer");
    assert!(schema.get("maximum").is_none(), "{schema}");
    let refusal = |n: &str| json!({"message": format!("invalid argument `pid`: invalid value: integer `{n}`, expected u32"), "kind": "invalid-input", "field": "pid"});
    for (args, n) in [
        (&["proc_kill", "--pid", "4294967296"][..], "4294967296"),
        (&["proc_kill", "--input", "{\"pid\": 4294967296}"], "4294967296"),
        (&["proc_kill", "--input", "{\"pid\": -1}"], "-1"),
    ] {
        let o = run(args);
        assert_eq!(code(&o), 2, "{args:?}: {o:?}");
        assert!(o.stdout.is_empty(), "{args:?}");
        assert_eq!(stderr_json(&o), refusal(n), "{args:?}");
    }
    // Nothing is dialled: against a socket nobody serves, the answer is still the usage error
    // (2), not unreachable (3); a well-typed pid there is unreachable.
    let nowhere = ["--socket", "/nonexistent/ops.sock", "proc_kill", "--pid"];
    let o = run(&[&nowhere[..], &["4294967296"]].concat());
    assert_eq!(code(&o), 2, "{o:?}");
    assert_eq!(stderr_json(&o), refusal("4294967296"));
    assert_eq!(code(&run(&[&nowhere[..], &["2"]].concat())), 3);
}

/// The decoder `#[surface]` generates for the argv face is the served dispatch's: on every
/// input it refuses exactly as `SurfaceProcedures::call` does on arrival, and accepts what
/// that accepts.
#[tokio::test]
async fn the_local_decoder_is_the_served_one() {
    use surface::SurfaceProcedures;
    let decoder = |procedure: &str| <ops::Ops as SurfaceProcedures>::input_decoder(procedure);
    let surface = ops::Ops::new();
    for (procedure, input) in [
        ("proc.kill", json!({"pid": 4294967296u64})),
        ("proc.kill", json!({"pid": "x"})),
        ("proc.kill", json!({})),
        ("proc.spawn", json!({"name": 3})),
        ("proc.spawn", json!({"name": "a", "paused": "yes"})),
        // Not exposed, so no command; the decoder is there all the same.
        ("proc.configure", json!({"pid": 1, "nice": 200})),
    ] {
        let local = decoder(procedure).expect("it takes input")(&input).unwrap_err();
        let served = surface.call(procedure, input.clone()).await.unwrap_err();
        assert_eq!(local, served, "{procedure} {input}");
    }
    assert_eq!(decoder("proc.kill").unwrap()(&json!({"pid": 2})), Ok(()));
    assert_eq!(
        surface.call("proc.kill", json!({"pid": 2})).await,
        Ok(json!({"ok": true}))
    );
    // Nothing to decode: no input, or no such procedure.
    assert!(decoder("load.sample").is_none());
    assert!(decoder("proc.nothing").is_none());
}

#[test]
fn watch_prints_ndjson_and_a_closed_pipe_is_success() {
    let daemon = Daemon::start("watch");
    let s = daemon.socket();
    let mut watch = opsctl()
        .args(["--socket", s, "watch", "processes"])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut lines = BufReader::new(watch.stdout.take().unwrap());
    // The watch opens asynchronously: mutate until it has reported a change.
    let mut first = String::new();
    let reader = std::thread::spawn(move || {
        lines.read_line(&mut first).unwrap();
        (first, lines)
    });
    let started = Instant::now();
    while !reader.is_finished() {
        assert!(
            started.elapsed() < Duration::from_secs(20),
            "the watch printed nothing"
        );
        assert_eq!(code(&run(&["--socket", s, "proc_spawn", "--name", "w"])), 0);
        std::thread::sleep(Duration::from_millis(100));
    }
    let (first, lines) = reader.join().unwrap();
    let change: Value = serde_json::from_str(&first).unwrap();
    assert!(change["upserted"]["id"].is_string(), "{first}");
    // The reader goes away (`| head -1`); the next change finds the pipe closed: success.
    drop(lines);
    let started = Instant::now();
    let status = loop {
        assert_eq!(code(&run(&["--socket", s, "proc_spawn", "--name", "x"])), 0);
        if let Some(status) = watch.try_wait().unwrap() {
            break status;
        }
        assert!(
            started.elapsed() < Duration::from_secs(20),
            "the watch outlived its reader"
        );
        std::thread::sleep(Duration::from_millis(50));
    };
    assert_eq!(status.code(), Some(0));
}

#[test]
fn interrupted_is_130() {
    let daemon = Daemon::start("interrupt");
    let mut follow = opsctl()
        .args(["--socket", daemon.socket(), "get", "log", "--follow"])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // It has dialled once it printed the log so far (one line per chunk; the log starts empty,
    // so make one).
    assert_eq!(
        code(&run(&["--socket", daemon.socket(), "proc_spawn", "--name", "l"])),
        0
    );
    let mut lines = BufReader::new(follow.stdout.take().unwrap());
    let mut line = String::new();
    lines.read_line(&mut line).unwrap();
    assert_eq!(
        serde_json::from_str::<Value>(&line).unwrap(),
        json!("spawned l as 3")
    );
    let status = Command::new("kill")
        .args(["-INT", &follow.id().to_string()])
        .status()
        .unwrap();
    assert!(status.success());
    assert_eq!(follow.wait().unwrap().code(), Some(130));
}

/// In-process, a handler's stray `println!` goes to stderr: stdout is the one JSON value; and a
/// stdout closed before anything is written (`| head -c0`) is a normal end, exit 0, no panic.
#[test]
fn stdout_is_data_only_and_a_closed_one_is_success_in_process() {
    let spawned = run(&["proc_spawn", "--name", "stray"]);
    assert_eq!(code(&spawned), 0, "{spawned:?}");
    assert_eq!(stdout_json(&spawned)["name"], "stray", "{spawned:?}");
    let stderr = String::from_utf8_lossy(&spawned.stderr);
    assert!(
        stderr.contains("spawned stray as 3"),
        "the stray print went to stderr: {stderr}"
    );

    for args in [
        &["proc_spawn", "--name", "closed"][..],
        &["get", "load"],
        &["list"],
    ] {
        let (reader, writer) = std::io::pipe().unwrap();
        drop(reader);
        let closed = opsctl()
            .args(args)
            .stdin(Stdio::null())
            .stdout(writer)
            .stderr(Stdio::piped())
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&closed.stderr);
        assert_eq!(code(&closed), 0, "{args:?}: {stderr}");
        assert!(!stderr.contains("panicked"), "{args:?}: {stderr}");
    }
}

/// Nobody serves the socket: every command, bespoke tools included, exits 3 with the
/// transport failure (a bespoke tool's own `?` must not turn it into a refusal).
#[test]
fn cannot_reach_is_3_for_every_command() {
    let socket = "/nonexistent/ops.sock";
    for args in [
        &["count"][..],
        &["count", "--running"],
        &["processes_view"],
        &["proc_kill", "--pid", "2"],
        &["load_sample"],
        &["get", "load"],
        &["keys", "processes"],
    ] {
        let gone = run(&[&["--socket", socket][..], args].concat());
        assert_eq!(code(&gone), 3, "{args:?}: {gone:?}");
        assert!(gone.stdout.is_empty(), "{args:?}");
        let failure = stderr_json(&gone);
        assert_eq!(failure["kind"], "transport", "{args:?}: {failure}");
        assert!(
            failure["message"].as_str().unwrap().contains(socket),
            "{args:?}: {failure}"
        );
    }
}

#[test]
fn a_scope_narrows_the_list_and_refuses_the_rest_before_any_dial() {
    let names = |o: &Output| -> Vec<String> {
        stdout_json(o)
            .as_array()
            .unwrap()
            .iter()
            .map(|e| e["name"].as_str().unwrap().to_owned())
            .collect()
    };
    let all = run(&["list"]);
    assert!(names(&all).contains(&"proc_kill".to_owned()));
    let read = run(&["--scope", "ops.read", "list"]);
    assert_eq!(code(&read), 0);
    let read = names(&read);
    for reached in [
        "load_sample",
        "count",
        "processes_view",
        "load",
        "processes",
        "log",
        "autosave",
    ] {
        assert!(read.contains(&reached.to_owned()), "{reached} in {read:?}");
    }
    assert!(!read.contains(&"proc_kill".to_owned()) && !read.contains(&"proc_spawn".to_owned()));
    // `ops.admin` implies `ops.read`; two scopes are one flag with a comma, or two flags.
    assert_eq!(names(&run(&["--scope", "ops.admin", "list"])), names(&all));
    assert_eq!(
        names(&run(&["--scope", "ops.read,ops.admin", "list"])),
        names(&all)
    );

    // Outside the scopes: refused (1) with one sentence, in-process and before any dial (a
    // socket nobody serves would be 3).
    for args in [
        &["--scope", "ops.read", "proc_kill", "--pid", "2"][..],
        &[
            "--socket",
            "/nonexistent/ops.sock",
            "--scope",
            "ops.read",
            "proc_kill",
            "--pid",
            "2",
        ],
    ] {
        let refused = run(args);
        assert_eq!(code(&refused), 1, "{refused:?}");
        assert!(refused.stdout.is_empty());
        let said = stderr_json(&refused);
        assert_eq!(said["kind"], "refused");
        assert_eq!(
            said["message"],
            "tool `proc_kill` is out of reach: it needs the scope ops.admin, and this command holds ops.read"
        );
    }
    let member = run(&["--scope", "ops.admin", "--scope", "ops.read", "get", "load"]);
    assert_eq!(code(&member), 0, "{member:?}");
    // A scope the surface does not declare is a usage error.
    let typo = run(&["--scope", "ops.raed", "list"]);
    assert_eq!(code(&typo), 2, "{typo:?}");
}

#[test]
fn a_scope_reaches_the_daemon_too() {
    let daemon = Daemon::start("scoped");
    let s = daemon.socket();
    let read = run(&["--socket", s, "--scope", "ops.read", "get", "load"]);
    assert_eq!((code(&read), stdout_json(&read)["procs"].clone()), (0, json!(2)));
    let refused = run(&["--socket", s, "--scope", "ops.read", "proc_spawn", "--name", "x"]);
    assert_eq!(code(&refused), 1, "{refused:?}");
    let spawned = run(&["--socket", s, "--scope", "ops.admin", "proc_spawn", "--name", "x"]);
    assert_eq!(code(&spawned), 0, "{spawned:?}");
}

/// `proc_wait` draws its progress on stderr (plain lines: stderr is a pipe here) and answers on
/// stdout alone; progress keeps the call alive past `--timeout`, which counts from the last report.
#[test]
fn proc_wait_shows_progress_on_stderr_and_only_the_answer_on_stdout() {
    // In-process nobody else can kill pid 2: the tool gives up after its own 4 s, although
    // --timeout is 2, because it keeps reporting.
    let gave_up = run(&["--timeout", "2", "proc_wait", "--pid", "2", "--timeout_secs", "4"]);
    assert_eq!(code(&gave_up), 1, "{gave_up:?}");
    assert!(gave_up.stdout.is_empty(), "{gave_up:?}");
    let stderr = String::from_utf8_lossy(&gave_up.stderr);
    let (progress, refusal) = stderr
        .trim_end()
        .rsplit_once('\n')
        .expect("progress, then the refusal");
    assert_eq!(
        serde_json::from_str::<Value>(refusal).unwrap(),
        json!({"message": "shell (pid 2) still runs after 4s", "kind": "error"})
    );
    let lines: Vec<&str> = progress.lines().collect();
    assert!(lines.len() >= 2, "{stderr}");
    for line in &lines {
        assert!(
            line.starts_with("progress ") && line.contains(": waiting for shell (pid 2) to exit: "),
            "{stderr}"
        );
    }

    // Dialled: another call kills the process, and the wait answers.
    let daemon = Daemon::start("wait");
    let s = daemon.socket();
    let mut waiting = opsctl()
        .args(["--socket", s, "proc_wait", "--pid", "2"])
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let stderr = BufReader::new(waiting.stderr.take().unwrap());
    let (lines_tx, lines_rx) = std::sync::mpsc::channel();
    let reader = std::thread::spawn(move || {
        for line in stderr.lines() {
            let _ = lines_tx.send(line.unwrap());
        }
    });
    let first = lines_rx
        .recv_timeout(Duration::from_secs(30))
        .expect("a progress line while it waits");
    assert!(
        first.starts_with("progress 0%: waiting for shell (pid 2) to exit: "),
        "{first}"
    );
    assert_eq!(code(&run(&["--socket", s, "proc_kill", "--pid", "2"])), 0);
    let started = Instant::now();
    let status = loop {
        if let Some(status) = waiting.try_wait().unwrap() {
            break status;
        }
        if started.elapsed() > Duration::from_secs(30) {
            let _ = waiting.kill();
            panic!("proc_wait did not answer once the process was killed");
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    reader.join().unwrap();
    let rest: Vec<String> = lines_rx.try_iter().collect();
    assert_eq!(status.code(), Some(0), "{rest:?}");
    assert!(rest.iter().all(|l| l.starts_with("progress ")), "{rest:?}");
    let mut stdout = String::new();
    waiting
        .stdout
        .take()
        .unwrap()
        .read_to_string(&mut stdout)
        .unwrap();
    let answer: Value = serde_json::from_str(&stdout).unwrap();
    assert_eq!(answer["pid"], 2, "{stdout}");
    assert!(answer["waited_ms"].as_u64().is_some(), "{stdout}");
    assert_eq!(stdout.lines().count(), 1, "{stdout}");
}
