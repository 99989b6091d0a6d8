//! The wire face by uid: `ops --socket PATH --grant UID=SCOPE[,SCOPE]` serves each peer as the
//! principal `uid:<n>` its `SO_PEERCRED` names, reaching exactly what its granted scopes reach
//! (the expose map's `scope = …`, as on MCP); an ungranted uid is refused; without grants the
//! socket stays owner-only. Clients really run as other uids: this test binary re-executed with
//! `Command::uid` (the `peer` test below, which does nothing unless re-executed), and `opsctl`.
//!
//! Needs root to run processes as other uids; without it the tests say so and pass, except
//! under `CI`, where they fail.

mod common;

use common::daemon::{Daemon, socket_dir};
use serde_json::{Value, json};
use std::io::{BufRead, BufReader, Write};
use std::os::unix::fs::{MetadataExt, PermissionsExt};
use std::os::unix::net::UnixStream;
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::Duration;

/// Two uids no test machine's user has: `nobody`, and the one below it.
const READER: u32 = 65534;
const STRANGER: u32 = 65533;

/// Whether this process may run others as another uid; if not, says why the test passes.
fn may_switch_uid() -> bool {
    let root = std::fs::metadata("/proc/self").is_ok_and(|m| m.uid() == 0);
    if !root {
        assert!(
            std::env::var_os("CI").is_none(),
            "under CI the uid tests must run as root (they run clients as other uids)"
        );
        eprintln!("skipped: running clients as other uids needs root");
    }
    root
}

/// A fresh socket path for test `name`, when this process may run clients as other uids.
fn uid_socket(name: &str) -> Option<(PathBuf, PathBuf)> {
    if !may_switch_uid() {
        return None;
    }
    let dir = socket_dir(name);
    let path = dir.join("ops.sock");
    Some((dir, path))
}

/// Re-executed as another uid by [`as_uid`]: dials `SURFACE_PEER_SOCKET`, writes each line of
/// `SURFACE_PEER_FRAMES`, prints `reply: <line>` for the greeting and each answer (or
/// `refused: <why>` when the connection could not be made). Does nothing when run as a test.
#[test]
fn peer() {
    let Some(path) = std::env::var_os("SURFACE_PEER_SOCKET") else {
        return;
    };
    let frames = std::env::var("SURFACE_PEER_FRAMES").unwrap_or_default();
    let mut stream = match UnixStream::connect(&path) {
        Ok(s) => s,
        Err(e) => {
            println!("refused: {e}");
            return;
        }
    };
    stream.set_read_timeout(Some(Duration::from_secs(20))).unwrap();
    let frames: Vec<&str> = frames.lines().filter(|l| !l.is_empty()).collect();
    for frame in &frames {
        // A refused peer's connection may be closed before it has written everything: what
        // the daemon said is read below either way.
        if writeln!(stream, "{frame}").is_err() {
            break;
        }
    }
    let mut reader = BufReader::new(stream);
    for _ in 0..=frames.len() {
        let mut line = String::new();
        match reader.read_line(&mut line) {
            Ok(0) | Err(_) => break,
            Ok(_) => println!("reply: {}", line.trim_end()),
        }
    }
}

/// What a peer running as `uid` gets from the socket at `path` for `frames`: `Ok` with the
/// greeting and the answers, in order, or `Err` with why it could not connect.
fn as_uid(uid: u32, path: &Path, frames: &[Value]) -> Result<Vec<Value>, String> {
    let frames: Vec<String> = frames.iter().map(Value::to_string).collect();
    let out = Command::new(std::env::current_exe().unwrap())
        .args(["--exact", "peer", "--nocapture", "--test-threads", "1"])
        .env("SURFACE_PEER_SOCKET", path)
        .env("SURFACE_PEER_FRAMES", frames.join("\n"))
        .uid(uid)
        .gid(uid)
        .stdin(Stdio::null())
        .output()
        .expect("the peer runs");
    let stdout = String::from_utf8_lossy(&out.stdout);
    // libtest's own `test peer ... ` may start the first line.
    let after = |l: &'static str| move |line: &str| line.split_once(l).map(|(_, rest)| rest.to_owned());
    if let Some(why) = stdout.lines().find_map(after("refused: ")) {
        return Err(why);
    }
    let replies: Vec<Value> = stdout
        .lines()
        .filter_map(after("reply: "))
        .map(|l| serde_json::from_str(&l).unwrap())
        .collect();
    assert!(!replies.is_empty(), "the peer heard nothing: {out:?}");
    Ok(replies)
}

/// `opsctl ARGS` as `uid`.
fn opsctl_as(uid: u32, args: &[&str]) -> Output {
    Command::new(common::example_binary("opsctl"))
        .args(args)
        .uid(uid)
        .gid(uid)
        .stdin(Stdio::null())
        .output()
        .expect("opsctl runs")
}

fn list() -> Value {
    json!({"id": 1, "op": "list"})
}

fn call(id: u64, procedure: &str, input: Value) -> Value {
    json!({"id": id, "op": "call", "procedure": procedure, "input": input})
}

fn names(v: &Value) -> Vec<&str> {
    v.as_array()
        .unwrap()
        .iter()
        .map(|n| n.as_str().unwrap())
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_granted_uid_reaches_exactly_its_scopes_and_an_ungranted_one_is_refused() {
    let Some((dir, path)) = uid_socket("grants") else {
        return;
    };
    let _daemon = Daemon::start_with(&path, &["--grant", &format!("{READER}=ops.read")]).await;
    // With grants the file lets every uid connect: the grants decide who is served.
    let mode = std::fs::metadata(&path).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode, 0o666, "socket mode {mode:o}");

    let replies = as_uid(
        READER,
        &path,
        &[
            list(),
            call(2, "proc.kill", json!({"pid": 1})),
            call(3, "proc.configure", json!({})),
            call(4, "load.sample", json!({})),
            json!({"id": 5, "op": "read", "member": "load"}),
            json!({"id": 6, "op": "watch", "member": "processes"}),
        ],
    )
    .unwrap();
    assert_eq!(replies[0]["ok"]["surface"], "Ops", "{replies:?}");
    let by_id = |id: u64| {
        replies
            .iter()
            .find(|r| r["id"] == id)
            .unwrap_or_else(|| panic!("{replies:?}"))
    };
    let reach = &by_id(1)["ok"];
    assert_eq!(reach["subject"], format!("uid:{READER}"));
    assert_eq!(reach["scopes"], json!(["ops.read"]));
    assert_eq!(names(&reach["members"]), ["load", "processes", "log", "autosave"]);
    assert_eq!(names(&reach["procedures"]), ["load.sample"]);
    // Outside its scopes: answered exactly as a name that is not exposed at all.
    let kill = &by_id(2)["err"];
    let configure = &by_id(3)["err"];
    assert_eq!(kill["kind"], "unknown", "{kill}");
    assert_eq!(kill["message"], "Ops has no procedure \"proc.kill\"");
    assert_eq!(configure["message"], "Ops has no procedure \"proc.configure\"");
    assert!(by_id(4)["ok"].is_object(), "{replies:?}");
    assert!(by_id(5)["ok"]["procs"].is_number(), "{replies:?}");
    assert_eq!(by_id(6)["ok"], Value::Null, "{replies:?}");

    // The daemon's own uid is not narrowed by grants to others.
    let owner = as_uid(0, &path, &[list()]).unwrap();
    assert_eq!(owner[1]["ok"]["subject"], "uid:0");
    assert_eq!(
        names(&owner[1]["ok"]["procedures"]),
        ["proc.spawn", "proc.kill", "load.sample"]
    );

    // Ungranted: one refusal in place of the greeting, then the connection ends.
    let stranger = as_uid(STRANGER, &path, &[list()]).unwrap();
    assert_eq!(stranger.len(), 1, "{stranger:?}");
    assert_eq!(stranger[0]["id"], 0);
    assert_eq!(stranger[0]["err"]["kind"], "refused");
    let why = stranger[0]["err"]["message"].as_str().unwrap();
    assert!(
        why.starts_with(&format!("uid {STRANGER} is not granted this socket")),
        "{why}"
    );
    let _ = std::fs::remove_dir_all(dir);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_broader_scope_implies_the_narrower_and_a_connection_can_narrow_itself() {
    let Some((dir, path)) = uid_socket("admin") else {
        return;
    };
    let _daemon = Daemon::start_with(
        &path,
        &[
            "--grant",
            &format!("{READER}=ops.admin"),
            "--grant",
            &format!("{STRANGER}=ops.read,ops.admin"),
        ],
    )
    .await;
    let replies = as_uid(
        READER,
        &path,
        &[
            list(),
            call(2, "proc.spawn", json!({"name": "granted"})),
            json!({"id": 3, "op": "narrow", "scopes": ["ops.read", "ops.bogus"]}),
            call(4, "proc.spawn", json!({"name": "narrowed"})),
            json!({"id": 5, "op": "list"}),
            // Narrowing never widens back.
            json!({"id": 6, "op": "narrow", "scopes": ["ops.admin"]}),
        ],
    )
    .unwrap();
    let by_id = |id: u64| {
        replies
            .iter()
            .find(|r| r["id"] == id)
            .unwrap_or_else(|| panic!("{replies:?}"))
    };
    // `ops.admin` implies `ops.read`: every member, every procedure.
    assert_eq!(
        names(&by_id(1)["ok"]["members"]),
        ["load", "processes", "log", "autosave"]
    );
    assert_eq!(
        names(&by_id(1)["ok"]["procedures"]),
        ["proc.spawn", "proc.kill", "load.sample"]
    );
    assert_eq!(by_id(2)["ok"]["name"], "granted", "{replies:?}");
    assert_eq!(by_id(3)["ok"]["scopes"], json!(["ops.read"]));
    assert_eq!(by_id(4)["err"]["message"], "Ops has no procedure \"proc.spawn\"");
    assert_eq!(names(&by_id(5)["ok"]["procedures"]), ["load.sample"]);
    assert_eq!(by_id(6)["ok"]["scopes"], json!([]));
    let _ = std::fs::remove_dir_all(dir);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn without_grants_the_socket_stays_owner_only() {
    let Some((dir, path)) = uid_socket("owner-only") else {
        return;
    };
    let _daemon = Daemon::start_with(&path, &[]).await;
    let mode = std::fs::metadata(&path).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode, 0o600);
    let refused = as_uid(READER, &path, &[list()]).unwrap_err();
    assert!(refused.contains("Permission denied"), "{refused}");
    // The owner reaches everything, as before grants existed.
    let owner = as_uid(0, &path, &[list()]).unwrap();
    assert_eq!(owner[1]["ok"]["scopes"], json!(["ops.read", "ops.admin"]));
    let _ = std::fs::remove_dir_all(dir);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn opsctl_as_a_granted_uid_is_refused_beyond_its_grant_and_its_scope() {
    let Some((dir, path)) = uid_socket("opsctl-uid") else {
        return;
    };
    let _daemon = Daemon::start_with(&path, &["--grant", &format!("{READER}=ops.read")]).await;
    let socket = path.to_str().unwrap();
    let load = opsctl_as(READER, &["--socket", socket, "get", "load"]);
    assert_eq!(load.status.code(), Some(0), "{load:?}");
    // Beyond the grant: the daemon answers as if proc_kill did not exist; the refused code.
    let kill = opsctl_as(READER, &["--socket", socket, "proc_kill", "--pid", "1"]);
    assert_eq!(kill.status.code(), Some(1), "{kill:?}");
    let said: Value = serde_json::from_slice(&kill.stderr).unwrap();
    assert_eq!(said["message"], "Ops has no procedure \"proc.kill\"");
    // An ungranted uid: the daemon's one sentence, the refused code.
    let stranger = opsctl_as(STRANGER, &["--socket", socket, "get", "load"]);
    assert_eq!(stranger.status.code(), Some(1), "{stranger:?}");
    let said: Value = serde_json::from_slice(&stranger.stderr).unwrap();
    assert_eq!(said["kind"], "refused");
    assert!(
        said["message"]
            .as_str()
            .unwrap()
            .starts_with(&format!("uid {STRANGER} is not granted this socket")),
        "{said}"
    );
    let _ = std::fs::remove_dir_all(dir);
}

#[test]
fn a_grant_of_an_undeclared_scope_or_a_malformed_one_stops_the_daemon_with_a_sentence() {
    let dir = socket_dir("bad-grant");
    let path = dir.join("ops.sock");
    let run = |grant: &str| {
        Command::new(common::ops_binary())
            .arg("--socket")
            .arg(&path)
            .args(["--grant", grant])
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .output()
            .unwrap()
    };
    let undeclared = run("1000=ops.raed");
    assert_eq!(undeclared.status.code(), Some(1), "{undeclared:?}");
    let said = String::from_utf8_lossy(&undeclared.stderr);
    assert!(
        said.contains("the grant to uid 1000 names the scope \"ops.raed\", which the served surface does not declare (it declares: ops.read, ops.admin)"),
        "{said}"
    );
    assert!(!path.exists(), "nothing was served");
    let malformed = run("alice=ops.read");
    assert_eq!(malformed.status.code(), Some(2), "{malformed:?}");
    assert!(String::from_utf8_lossy(&malformed.stderr).contains("write UID=SCOPE[,SCOPE]"));
    let _ = std::fs::remove_dir_all(dir);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_bridge_run_by_a_granted_uid_lists_only_what_the_daemon_grants_it() {
    let Some((dir, path)) = uid_socket("bridge-uid") else {
        return;
    };
    let _daemon = Daemon::start_with(&path, &["--grant", &format!("{READER}=ops.read")]).await;
    let mut bridge = common::stdio::Wire::start_as(READER, &["--bridge", path.to_str().unwrap()]);
    bridge.initialize().await;
    let listed = bridge.request(2, "tools/list", json!({})).await;
    let tools: Vec<&str> = listed["result"]["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["name"].as_str().unwrap())
        .collect();
    assert!(tools.contains(&"load_sample"), "{tools:?}");
    assert!(
        !tools.contains(&"proc_kill") && !tools.contains(&"proc_spawn"),
        "{tools:?}"
    );
    // As if it did not exist: a JSON-RPC error, not a tool's refusal.
    let kill = json!({"name": "proc_kill", "arguments": {"pid": 1}});
    let kill = bridge.request(3, "tools/call", kill).await;
    assert!(
        kill["error"]["message"].as_str().unwrap().contains("proc_kill"),
        "{kill}"
    );
    let sample = json!({"name": "load_sample", "arguments": {}});
    let sample = bridge.request(4, "tools/call", sample).await;
    assert_eq!(sample["result"]["isError"], false, "{sample}");
    drop(bridge);
    let _ = std::fs::remove_dir_all(dir);
}
