//! A legacy session's standalone `GET` stream, as its `updated` notifications reach it
//! directly.
//!
//! Through rmcp, each `updated` crosses the session's service loop (a task spawned for the
//! message), its worker (a channel hop, a copy into the event cache) and the stream's channel,
//! and is framed on its own. The HTTP face instead hands a session's stream a second channel
//! (`http_standalone.rs`) that its window of `updated` notifications is written to as one chunk
//! of SSE events, spliced between rmcp's own events on the same response.
//!
//! Those events carry no event id, so a client's `Last-Event-ID` stays rmcp's, and what rmcp
//! replays on a resumption does not include them. Nothing is lost by it: a chunk is only ever
//! lost with the stream it was queued on, so the next stream of the session that attaches is
//! told that every URI the session watches may have changed (one `updated` each). Until a
//! stream attaches, after one ends, and when one stops reading, `updated` goes through rmcp
//! as before (cached there for a resumption).
// Without the HTTP face nothing attaches a stream, and every `updated` goes through rmcp.
#![cfg_attr(not(feature = "http"), allow(dead_code))]

use crate::sync::lock;
use std::sync::Mutex;
use std::time::Duration;
use tokio::sync::mpsc;

/// How many windows' chunks wait for one stream at most.
const QUEUED_CHUNKS: usize = 8;

/// How long a window waits for its stream to take its chunk before it goes through rmcp
/// instead: a client that stops reading its stream does not hold the session's outbox.
const SEND_TIMEOUT: Duration = Duration::from_secs(10);

/// One session's standalone stream, when one is attached.
#[derive(Default)]
pub(crate) struct StandaloneStream {
    attached: Mutex<Attached>,
}

#[derive(Default)]
struct Attached {
    sender: Option<mpsc::Sender<String>>,
    /// A stream was attached before: its chunks may have ended with it.
    before: bool,
}

/// What [`StandaloneStream::attach`] found.
pub(crate) enum Attach {
    /// This stream takes the session's chunks; `reannounce` when one took them before.
    Taken {
        chunks: mpsc::Receiver<String>,
        reannounce: bool,
    },
    /// Another stream of the session is attached and alive; this one gets rmcp's events only.
    Shadow,
}

impl StandaloneStream {
    /// Attaches a newly opened stream, unless one attached before is still alive (as rmcp
    /// keeps its first live stream as the session's and makes the others shadows).
    pub(crate) fn attach(&self) -> Attach {
        let mut attached = lock(&self.attached);
        if attached.sender.as_ref().is_some_and(|s| !s.is_closed()) {
            return Attach::Shadow;
        }
        let (sender, chunks) = mpsc::channel(QUEUED_CHUNKS);
        attached.sender = Some(sender);
        let reannounce = std::mem::replace(&mut attached.before, true);
        Attach::Taken { chunks, reannounce }
    }

    fn sender(&self) -> Option<mpsc::Sender<String>> {
        let attached = lock(&self.attached);
        attached.sender.as_ref().filter(|s| !s.is_closed()).cloned()
    }

    /// Queues one window's chunk, built by `chunk` only when a stream is attached, on that
    /// stream; false when there is none, it ended, or it did not take the chunk within
    /// [`SEND_TIMEOUT`] (then it is let go, and the session's notifications go through rmcp
    /// until a stream attaches again).
    pub(crate) async fn send(&self, chunk: impl FnOnce() -> String) -> bool {
        let Some(stream) = self.sender() else {
            return false;
        };
        match tokio::time::timeout(SEND_TIMEOUT, stream.send(chunk())).await {
            Ok(sent) => sent.is_ok(),
            Err(_) => {
                lock(&self.attached).sender = None;
                false
            }
        }
    }
}

/// One URI as a JSON string, escaped once: a window's chunk then copies it, so a URI watched for
/// hours is not escaped again at every change.
#[derive(Default)]
pub(crate) struct QuotedUri(std::sync::OnceLock<Box<str>>);

impl QuotedUri {
    /// `uri` as JSON, escaped at its first use.
    fn get(&self, uri: &str) -> &str {
        // A `str` serializes infallibly.
        self.0
            .get_or_init(|| serde_json::to_string(uri).unwrap_or_default().into())
    }
}

/// One window's `updated` notifications for `uris` (each with its [`QuotedUri`]), as SSE
/// events of one chunk.
pub(crate) fn updated_events<'a>(uris: impl IntoIterator<Item = (&'a str, &'a QuotedUri)>) -> String {
    const PREFIX: &str =
        r#"data: {"jsonrpc":"2.0","method":"notifications/resources/updated","params":{"uri":"#;
    const SUFFIX: &str = "}}\n\n";
    let uris = uris.into_iter();
    let mut chunk = String::with_capacity(uris.size_hint().0 * (PREFIX.len() + SUFFIX.len() + 32));
    for (uri, quoted) in uris {
        chunk.push_str(PREFIX);
        chunk.push_str(quoted.get(uri));
        chunk.push_str(SUFFIX);
    }
    chunk
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn events_are_the_notifications_rmcp_would_send() {
        let quoted = [QuotedUri::default(), QuotedUri::default()];
        let uris = ["surface://a", "surface://b\"q"];
        let chunk = updated_events(uris.into_iter().zip(&quoted));
        // A second window copies what the first escaped.
        assert_eq!(updated_events(uris.into_iter().zip(&quoted)), chunk);
        let events: Vec<&str> = chunk.split_terminator("\n\n").collect();
        assert_eq!(events.len(), 2);
        for (event, uri) in events.iter().zip(["surface://a", "surface://b\"q"]) {
            let data = event.strip_prefix("data: ").expect("a data line");
            let sent: rmcp::model::ServerJsonRpcMessage = serde_json::from_str(data).expect("JSON-RPC");
            let expected = rmcp::model::ServerJsonRpcMessage::notification(
                rmcp::model::ServerNotification::ResourceUpdatedNotification(rmcp::model::Notification::new(
                    rmcp::model::ResourceUpdatedNotificationParam::new(uri.to_owned()),
                )),
            );
            assert_eq!(
                serde_json::to_value(&sent).unwrap(),
                serde_json::to_value(&expected).unwrap()
            );
        }
    }

    #[test]
    fn a_live_stream_keeps_the_session_and_a_later_one_reannounces() {
        let stream = StandaloneStream::default();
        let Attach::Taken { chunks, reannounce } = stream.attach() else {
            panic!("the first stream attaches");
        };
        assert!(!reannounce, "nothing was sent before the first stream");
        assert!(
            matches!(stream.attach(), Attach::Shadow),
            "a second stream is a shadow"
        );
        assert!(stream.sender().is_some());
        drop(chunks);
        assert!(stream.sender().is_none(), "an ended stream takes nothing");
        let Attach::Taken { reannounce, .. } = stream.attach() else {
            panic!("a stream after an ended one attaches");
        };
        assert!(reannounce, "what the ended stream held may be lost");
    }

    #[tokio::test(start_paused = true)]
    async fn a_stream_that_stops_reading_takes_its_bound_then_is_let_go() {
        let stream = StandaloneStream::default();
        assert!(!stream.send(|| "no stream".into()).await, "nothing attached");
        let Attach::Taken { mut chunks, .. } = stream.attach() else {
            panic!("the first stream attaches");
        };
        for n in 0..QUEUED_CHUNKS {
            assert!(stream.send(|| format!("chunk {n}")).await, "within the bound");
        }
        let started = tokio::time::Instant::now();
        assert!(
            !stream.send(|| "one too many".into()).await,
            "past the bound, in time"
        );
        assert_eq!(started.elapsed(), SEND_TIMEOUT);
        assert!(stream.sender().is_none(), "a stalled stream is let go");
        // What it took is still there for it, and nothing past the bound.
        let mut queued = 0;
        while let Ok(chunk) = chunks.try_recv() {
            assert_eq!(chunk, format!("chunk {queued}"));
            queued += 1;
        }
        assert_eq!(queued, QUEUED_CHUNKS);
        let Attach::Taken { reannounce, .. } = stream.attach() else {
            panic!("a stream after a stalled one attaches");
        };
        assert!(reannounce, "the stalled stream may never deliver what it took");
    }
}
