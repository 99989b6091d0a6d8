//! The bridge's floor: `floor.rs`'s bare stdio loop, but each `tools/call` forwarded to an ops
//! daemon (`ops --socket PATH`) as a wire frame and answered from its reply — what any
//! two-process bridge must do at least: read the MCP line, write one frame, read one frame,
//! write the MCP answer. No lifecycle, cancellation, timeouts or redial: nothing to ship, a
//! measure of what the pipe, the socket and JSON alone cost a bridged call.
//!
//! `floor-bridge PATH`: stdin is read on the main thread, the socket's replies on a second one
//! (calls are pipelined, as the bridge pipelines them).

#[path = "table.rs"]
#[allow(dead_code)]
mod table;

#[path = "floor_calls.rs"]
mod floor_calls;

use floor_calls::result;
use serde::Deserialize;
use serde_json::Value;
use serde_json::value::RawValue;
use std::collections::HashMap;
use std::io::{BufRead, BufReader, BufWriter, Write};
use std::os::unix::net::UnixStream;
use std::sync::{Arc, Mutex};

/// One MCP message, its id and arguments kept as written.
#[derive(Deserialize)]
struct Message<'a> {
    #[serde(borrow)]
    id: Option<&'a RawValue>,
    method: &'a str,
    #[serde(default, borrow)]
    params: Option<CallParams<'a>>,
}

#[derive(Deserialize)]
struct CallParams<'a> {
    name: Option<&'a str>,
    #[serde(borrow)]
    arguments: Option<&'a RawValue>,
}

/// One reply frame of the daemon: `{"id":N,"ok":…}` or `{"id":N,"err":{"message":…}}`.
#[derive(Deserialize)]
struct Reply {
    id: u64,
    ok: Option<Value>,
    err: Option<Failure>,
}

#[derive(Deserialize)]
struct Failure {
    message: String,
}

type Stdout = Arc<Mutex<BufWriter<std::io::Stdout>>>;

fn main() {
    let path = std::env::args()
        .nth(1)
        .expect("usage: floor-bridge PATH (an ops daemon's socket)");
    let socket = UnixStream::connect(&path).expect("the daemon's socket is dialled");
    let mut replies = BufReader::with_capacity(64 * 1024, socket.try_clone().unwrap());
    let mut greeting = String::new();
    replies.read_line(&mut greeting).expect("the daemon greets");
    let mut frames = BufWriter::with_capacity(64 * 1024, socket);

    let pending: Arc<Mutex<HashMap<u64, String>>> = Arc::default();
    let stdout: Stdout = Arc::new(Mutex::new(BufWriter::with_capacity(64 * 1024, std::io::stdout())));
    let answers = std::thread::spawn({
        let (pending, stdout) = (pending.clone(), stdout.clone());
        move || answer_replies(replies, &pending, &stdout)
    });

    let table = table::Table::new();
    let mut next = 0u64;
    let mut input = BufReader::with_capacity(64 * 1024, std::io::stdin().lock());
    let mut line = Vec::new();
    loop {
        line.clear();
        if input.read_until(b'\n', &mut line).unwrap_or(0) == 0 {
            break;
        }
        let Ok(message) = serde_json::from_slice::<Message>(&line) else {
            continue;
        };
        let Some(id) = message.id else { continue };
        if message.method == "tools/call"
            && let Some(CallParams {
                name: Some(name),
                arguments,
            }) = message.params
        {
            next += 1;
            pending.lock().unwrap().insert(next, id.get().to_owned());
            // The tools are named for their procedures: `load_sample` is `load.sample`.
            let procedure = name.replacen('_', ".", 1);
            let input = arguments.map_or("null", RawValue::get);
            let _ = writeln!(
                frames,
                "{{\"id\":{next},\"op\":\"call\",\"procedure\":{},\"input\":{input}}}",
                serde_json::to_string(&procedure).unwrap()
            );
        } else {
            let result = result(&table, message.method, None);
            let mut out = stdout.lock().unwrap();
            let _ = write!(out, "{{\"jsonrpc\":\"2.0\",\"id\":{},\"result\":", id.get());
            let _ = serde_json::to_writer(&mut *out, &result);
            let _ = out.write_all(b"}\n");
            let _ = out.flush();
        }
        if input.buffer().is_empty() {
            let _ = frames.flush();
        }
    }
    let _ = frames.flush();
    // Half-close: the daemon answers what it has and the reply thread ends at its end.
    let _ = frames.get_ref().shutdown(std::net::Shutdown::Write);
    let _ = answers.join();
}

/// Answers each reply on stdout under the MCP id its call came with, flushing when no more
/// replies are buffered.
fn answer_replies(
    mut replies: BufReader<UnixStream>,
    pending: &Mutex<HashMap<u64, String>>,
    stdout: &Stdout,
) {
    let mut line = Vec::new();
    loop {
        line.clear();
        if replies.read_until(b'\n', &mut line).unwrap_or(0) == 0 {
            break;
        }
        let Ok(reply) = serde_json::from_slice::<Reply>(&line) else {
            continue;
        };
        let Some(id) = pending.lock().unwrap().remove(&reply.id) else {
            continue;
        };
        let result = match (reply.ok, reply.err) {
            (_, Some(f)) => {
                serde_json::json!({"content": [{"type": "text", "text": f.message}], "isError": true})
            }
            (v, None) => {
                let v = v.unwrap_or(Value::Null);
                let text = serde_json::to_string_pretty(&v).unwrap();
                serde_json::json!({"content": [{"type": "text", "text": text}], "structuredContent": v, "isError": false})
            }
        };
        let mut out = stdout.lock().unwrap();
        let _ = write!(out, "{{\"jsonrpc\":\"2.0\",\"id\":{id},\"result\":");
        let _ = serde_json::to_writer(&mut *out, &result);
        let _ = out.write_all(b"}\n");
        if replies.buffer().is_empty() {
            let _ = out.flush();
        }
    }
    let _ = stdout.lock().unwrap().flush();
}
