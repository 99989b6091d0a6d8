//! What a command prints: data on stdout (one JSON value, or JSON lines), refusals on stderr
//! as JSON with the exit code their kind calls for.

use super::exit;
use crate::blocks::{Block, EmbeddedBody, OkContent};
use crate::blocks::{OkImage, ToolOutput};
use crate::failure::{Failure, FailureKind};
use crate::member::Change;
use base64::Engine;
use serde_json::{Value, json};
use std::io::{IsTerminal, Write as _};
use std::time::Duration;

/// What ended a command early: an exit code, with what to say on stderr.
pub(super) struct Stop(pub(super) u8);

pub(super) fn timed_out(after: Duration) -> Failure {
    Failure::new(
        FailureKind::Transport {
            outcome_unknown: true,
        },
        format!(
            "no answer within {} s (--timeout): the served side may still act on the request",
            after.as_secs()
        ),
    )
}

/// Prints `f` on stderr as JSON and answers the exit code its kind calls for.
pub(super) fn refuse(f: &Failure) -> Stop {
    let line = serde_json::to_string(f).unwrap_or_else(|_| json!({"message": f.message}).to_string());
    eprintln!("{line}");
    Stop(match f.kind {
        FailureKind::Transport { .. } => exit::UNREACHABLE,
        FailureKind::InvalidInput { .. } => exit::USAGE,
        _ => exit::REFUSED,
    })
}

pub(super) fn usage(message: String) -> Stop {
    refuse(&Failure::new(
        FailureKind::InvalidInput { field: String::new() },
        message,
    ))
}

/// The answer as `tools/call` carries it: text and structured content read off one value.
pub(super) fn whole_answer(answer: &Result<ToolOutput, Failure>) -> Value {
    let normalize = |v: Value| match v {
        Value::Object(o) => Value::Object(o),
        other => json!({"value": other}),
    };
    match answer {
        Ok(ToolOutput::Value(v)) => {
            let structured = normalize(v.clone());
            let text = serde_json::to_string_pretty(&structured).unwrap_or_default();
            json!({"content": [{"type": "text", "text": text}], "structuredContent": structured, "isError": false})
        }
        Ok(ToolOutput::Image(OkImage { bytes, mime, detail })) => {
            let data = base64(bytes);
            json!({
                "content": [{"type": "image", "data": data, "mimeType": mime}],
                "structuredContent": normalize(detail.clone()),
                "isError": false
            })
        }
        Ok(ToolOutput::Content(OkContent { blocks, value })) => {
            let mut o =
                json!({"content": blocks.iter().map(block_json).collect::<Vec<_>>(), "isError": false});
            if let Some(v) = value {
                o["structuredContent"] = normalize(v.clone());
            }
            o
        }
        Err(f) => {
            let mut o = json!({"content": [{"type": "text", "text": f.message}], "isError": true});
            if let Some(d) = &f.detail {
                o["structuredContent"] = normalize(d.clone());
            }
            o
        }
    }
}

pub(super) fn base64(bytes: &[u8]) -> String {
    base64::engine::general_purpose::STANDARD.encode(bytes)
}

/// One content block as `tools/call` carries it.
pub(super) fn block_json(b: &Block) -> Value {
    match b {
        Block::Text(t) => json!({"type": "text", "text": t}),
        Block::Image { bytes, mime } => json!({"type": "image", "data": base64(bytes), "mimeType": mime}),
        Block::Audio { bytes, mime } => json!({"type": "audio", "data": base64(bytes), "mimeType": mime}),
        Block::Embedded { uri, mime, body } => {
            let mut r = json!({"uri": uri, "mimeType": mime});
            match body {
                EmbeddedBody::Text(t) => r["text"] = t.clone().into(),
                EmbeddedBody::Blob(bytes) => r["blob"] = base64(bytes).into(),
            }
            json!({"type": "resource", "resource": r})
        }
        Block::Link { uri, name, mime } => {
            let mut l = json!({"type": "resource_link", "uri": uri, "name": name});
            if let Some(m) = mime {
                l["mimeType"] = m.clone().into();
            }
            l
        }
    }
}

pub(super) fn change_json(change: Change) -> Value {
    serde_json::to_value(&change).unwrap_or(Value::Null)
}

/// stdout: one JSON value (indented on a terminal, compact in a pipe) or JSON lines.
pub(super) struct Out {
    pretty: bool,
    /// The real stdout, kept when the process is the command's (fd 1 then writes to stderr).
    data: Option<std::fs::File>,
}

impl Out {
    /// The process's stdout; with `own`, kept for data alone (see [`BuiltCli::main`](super::BuiltCli::main)).
    pub(super) fn new(own: bool) -> Self {
        #[cfg(unix)]
        let data = own
            .then(|| crate::stdout::keep().ok().map(std::fs::File::from))
            .flatten();
        #[cfg(not(unix))]
        let data: Option<std::fs::File> = {
            let _ = own;
            None
        };
        Out {
            pretty: data
                .as_ref()
                .map_or_else(|| std::io::stdout().is_terminal(), |f| f.is_terminal()),
            data,
        }
    }

    pub(super) fn raw(&self, bytes: &[u8]) -> Result<(), Stop> {
        let written = match &self.data {
            Some(data) => {
                let mut data: &std::fs::File = data;
                data.write_all(bytes).and_then(|()| data.flush())
            }
            None => {
                let mut stdout = std::io::stdout().lock();
                stdout.write_all(bytes).and_then(|()| stdout.flush())
            }
        };
        match written {
            Ok(()) => Ok(()),
            // A reader that has what it wanted (`| head -1`): done, successfully.
            Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => Err(Stop(exit::OK)),
            Err(e) => Err(refuse(&Failure::new(FailureKind::Error, format!("stdout: {e}")))),
        }
    }

    pub(super) fn value(&self, v: &Value) -> Result<(), Stop> {
        let mut text = if self.pretty {
            serde_json::to_string_pretty(v)
        } else {
            serde_json::to_string(v)
        }
        .unwrap_or_default();
        text.push('\n');
        self.raw(text.as_bytes())
    }

    pub(super) fn line(&self, v: &Value) -> Result<(), Stop> {
        let mut text = serde_json::to_string(v).unwrap_or_default();
        text.push('\n');
        self.raw(text.as_bytes())
    }
}
