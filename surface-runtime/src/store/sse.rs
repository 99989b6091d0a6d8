//! Resumable SSE streams across instances (features `redis` and `http`): the events of legacy-era
//! sessions' standalone streams live in Redis, so a client whose stream broke on one instance
//! reconnects to any other (its session restored there by `sessions.rs`) with `Last-Event-ID`
//! and gets exactly the events it missed.
//!
//! rmcp 3.11 has the seam: an [`EventStore`] that every session stream writes its events through
//! (`LocalSessionManager::with_event_store`) and replays from on `Last-Event-ID`.
//!
//! What goes to Redis is each session's standalone (`GET`) stream, where its notifications
//! travel: a Redis stream trimmed to [`SSE_HISTORY`] events that expires [`SSE_TTL`] after its
//! last event. A resumed standalone stream replays what the client missed and then follows the
//! Redis stream (polled, every 100 ms after an event and at most every second when quiet), so
//! it also carries what the session hears on the instance it left, where it may still be
//! subscribed. A `POST`'s response stream stays in this instance's memory, as rmcp keeps it
//! without a store (at most [`LOCAL_HISTORY`] events a stream, [`LOCAL_STREAMS`] streams, each
//! dropped [`LOCAL_TTL`] after its last event): persisting it would cost every call two more
//! Redis writes (each one fsynced; `bench/NOTES.md` has the measurement) and a
//! Redis key per call, to resume a response whose instance is alive anyway — a response is made
//! by the instance serving the call, so it resumes there.

use super::layout;
use super::shared::Inner;
use crate::sync::lock;
use futures::StreamExt;
use rmcp::model::ServerJsonRpcMessage;
use rmcp::transport::streamable_http_server::session::{
    EventId, EventStore, EventStoreError, EventStream, ServerSseMessage,
};
use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// How many events one SSE stream keeps for a reconnecting client (older ones are trimmed).
pub const SSE_HISTORY: usize = 1024;
/// How long an SSE stream's events are kept after its last event.
pub const SSE_TTL: Duration = Duration::from_secs(600);

/// How many events a `POST`'s response stream keeps in memory for a reconnecting client.
pub const LOCAL_HISTORY: usize = 64;
/// How many `POST` response streams an instance keeps for resumption (the oldest go first).
pub const LOCAL_STREAMS: usize = 10_000;
/// How long a `POST` response stream is kept after its last event (rmcp's own default for a
/// completed stream's cache).
pub const LOCAL_TTL: Duration = Duration::from_secs(60);

/// Separates an event id's stream from its entry (`<stream id>#<entry>`). rmcp's stream ids
/// are UUIDs or `<session id>:common`, so the last `#` is always ours.
pub(super) const SEP: char = '#';

/// The suffix of the common (standalone `GET`) stream's id rmcp keeps for a session.
pub(super) const COMMON: &str = ":common";

/// The common stream of `session`.
pub(super) fn common_stream(session: &str) -> String {
    format!("{session}{COMMON}")
}

/// Where an event id says its event is.
#[derive(Debug, PartialEq, Eq)]
pub(super) enum Place<'a> {
    /// In Redis: the stream and its entry id (`ms-seq`).
    Stored(&'a str, &'a str),
    /// In this instance's memory: the stream and the event's number in it.
    Local(&'a str, u64),
}

/// Where `event_id` is; `None` when it is not one of ours (or was never stored).
pub(super) fn place(event_id: &str) -> Option<Place<'_>> {
    let (stream, entry) = event_id.rsplit_once(SEP)?;
    match entry.split_once('-') {
        Some((ms, seq)) => {
            (ms.parse::<u64>().is_ok() && seq.parse::<u64>().is_ok()).then_some(Place::Stored(stream, entry))
        }
        None => entry.parse().ok().map(|n| Place::Local(stream, n)),
    }
}

/// `POST` response streams kept in memory, bounded by [`LOCAL_STREAMS`], [`LOCAL_HISTORY`] and
/// [`LOCAL_TTL`].
#[derive(Default)]
struct LocalEvents {
    streams: HashMap<String, LocalStream>,
    /// Stream ids in the order they were opened: the sweep's queue.
    opened: std::collections::VecDeque<String>,
}

struct LocalStream {
    next: u64,
    events: std::collections::VecDeque<(u64, ServerSseMessage)>,
    last: Instant,
}

impl LocalEvents {
    /// Keeps `event` as the next of `stream`; answers its number.
    fn keep(&mut self, stream: &str, event: &ServerSseMessage) -> u64 {
        let now = Instant::now();
        self.sweep(now);
        if !self.streams.contains_key(stream) {
            self.opened.push_back(stream.to_owned());
        }
        let s = self
            .streams
            .entry(stream.to_owned())
            .or_insert_with(|| LocalStream {
                next: 0,
                events: Default::default(),
                last: now,
            });
        let n = s.next;
        s.next += 1;
        s.last = now;
        if s.events.len() == LOCAL_HISTORY {
            s.events.pop_front();
        }
        s.events.push_back((n, event.clone()));
        n
    }

    /// Drops the oldest streams while there are too many or the oldest went quiet.
    fn sweep(&mut self, now: Instant) {
        while let Some(oldest) = self.opened.front() {
            let quiet = self
                .streams
                .get(oldest)
                .is_none_or(|s| now.duration_since(s.last) > LOCAL_TTL);
            if !quiet && self.streams.len() < LOCAL_STREAMS {
                return;
            }
            if let Some(id) = self.opened.pop_front() {
                self.streams.remove(&id);
            }
        }
    }

    /// The events of `stream` after number `after`, with their ids; `None` when this instance
    /// does not have the stream.
    fn after(&self, stream: &str, after: u64) -> Option<Vec<ServerSseMessage>> {
        let s = self.streams.get(stream)?;
        Some(
            s.events
                .iter()
                .filter(|(n, _)| *n > after)
                .map(|(n, e)| {
                    let mut e = e.clone();
                    e.event_id = Some(format!("{stream}{SEP}{n}"));
                    e
                })
                .collect(),
        )
    }
}

/// One stored event: the JSON-RPC message (absent for a priming event) and the retry hint.
#[derive(serde::Serialize, serde::Deserialize)]
struct Stored {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    m: Option<ServerJsonRpcMessage>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    r: Option<u64>,
}

impl Stored {
    fn of(event: &ServerSseMessage) -> Stored {
        Stored {
            m: event.message.as_deref().cloned(),
            r: event.retry.map(|d| d.as_millis() as u64),
        }
    }

    fn into_event(self, id: String) -> ServerSseMessage {
        let mut event = ServerSseMessage::default();
        event.event_id = Some(id);
        event.message = self.m.map(Arc::new);
        event.retry = self.r.map(Duration::from_millis);
        event
    }
}

/// SSE events: each session's common stream in Redis (capped, expiring), `POST` response
/// streams in memory.
pub(crate) struct RedisEvents {
    store: Arc<Inner>,
    /// Numbers the events that could not be stored (see [`EventStore::store_event`] below).
    unsaved: AtomicU64,
    local: Mutex<LocalEvents>,
}

impl RedisEvents {
    /// The events of `store`'s sessions, none kept yet.
    pub(super) fn new(store: Arc<Inner>) -> RedisEvents {
        RedisEvents {
            store,
            unsaved: AtomicU64::new(0),
            local: Mutex::new(LocalEvents::default()),
        }
    }

    fn key(&self, stream: &str) -> String {
        layout::sse(self.store.prefix(), stream)
    }
}

#[async_trait::async_trait]
impl EventStore for RedisEvents {
    /// Appends the event (trimmed to [`SSE_HISTORY`], expiring after [`SSE_TTL`]) in one
    /// transaction. When Redis cannot be reached the event still goes out, under an id no
    /// replay knows: rmcp drops an event whose store failed, which would leave a call without
    /// its answer — the client waits forever instead of hearing the store is unreachable.
    async fn store_event(
        &self,
        stream_id: &str,
        event: &ServerSseMessage,
    ) -> Result<EventId, EventStoreError> {
        if !stream_id.ends_with(COMMON) {
            let n = lock(&self.local).keep(stream_id, event);
            return Ok(format!("{stream_id}{SEP}{n}"));
        }
        let body = serde_json::to_string(&Stored::of(event))?;
        let mut con = self.store.con();
        let key = self.key(stream_id);
        let stored = self
            .store
            .on_store(async move {
                let (entry,): (String,) = redis::pipe()
                    .atomic()
                    .cmd("XADD")
                    .arg(&key)
                    .arg("MAXLEN")
                    .arg(SSE_HISTORY)
                    .arg("*")
                    .arg("e")
                    .arg(body)
                    .cmd("PEXPIRE")
                    .arg(&key)
                    .arg(SSE_TTL.as_millis() as u64)
                    .ignore()
                    .query_async(&mut con)
                    .await?;
                Ok(entry)
            })
            .await;
        match stored {
            Ok(entry) => Ok(format!("{stream_id}{SEP}{entry}")),
            Err(e) => {
                tracing::warn!("surface store: an SSE event was sent without being stored: {e}");
                let n = self.unsaved.fetch_add(1, Ordering::Relaxed);
                Ok(format!("{stream_id}{SEP}unsaved-{n}"))
            }
        }
    }

    /// A session's common stream: its events after `last_event_id` as stored (at most
    /// [`SSE_HISTORY`]), then every event appended later by any instance, for as long as the
    /// client stays (a finite replay would leave a client reconnecting every few seconds, rmcp's
    /// reconnect-and-poll). A `POST`'s response stream: its events kept here, a finite replay.
    /// Events trimmed meanwhile are gone; an id that was never stored replays nothing.
    async fn replay_events_after(&self, last_event_id: &str) -> Result<EventStream, EventStoreError> {
        let (stream, entry) = match place(last_event_id) {
            Some(Place::Stored(stream, entry)) => (stream, entry),
            Some(Place::Local(stream, n)) => {
                return match lock(&self.local).after(stream, n) {
                    Some(events) => Ok(Box::pin(futures::stream::iter(events))),
                    None => Err(format!(
                        "the response stream of {last_event_id:?} is kept by the instance that served its request"
                    )
                    .into()),
                };
            }
            None => return Err(format!("{last_event_id:?} names no stored SSE event").into()),
        };
        let tail = Tail {
            store: self.store.clone(),
            key: self.key(stream),
            stream: stream.to_owned(),
            last: entry.to_owned(),
        };
        let (missed, tail) = tail.next().await?;
        // Then the events appended from now on, by any instance, for as long as the client
        // stays: the session may still be subscribed on the instance it left, and its
        // notifications keep arriving in Redis only.
        // A task of the store's follows Redis and hands events over a small channel; it ends
        // when the client's response (the receiver) is gone.
        let (tx, rx) = tokio::sync::mpsc::channel(16);
        self.store.handle().spawn(async move {
            let (mut tail, mut pause) = (tail, Duration::ZERO);
            loop {
                pause = (pause * 2).clamp(TAIL_MIN, TAIL_MAX);
                tokio::select! {
                    _ = tx.closed() => return,
                    _ = tokio::time::sleep(pause) => {}
                }
                // A store fault only delays the tail: the client is still connected.
                let Ok((events, moved)) = tail.clone().next().await else {
                    continue;
                };
                tail = moved;
                if !events.is_empty() {
                    pause = Duration::ZERO;
                }
                for event in events {
                    if tx.send(event).await.is_err() {
                        return;
                    }
                }
            }
        });
        let later = futures::stream::unfold(rx, |mut rx| async move { rx.recv().await.map(|e| (e, rx)) });
        Ok(Box::pin(futures::stream::iter(missed).chain(later)))
    }
}

/// How often a resumed stream looks for new events in Redis: at first, and after each event.
const TAIL_MIN: Duration = Duration::from_millis(100);
/// How often, at most, once it has been quiet a while (doubling from [`TAIL_MIN`]).
const TAIL_MAX: Duration = Duration::from_secs(1);

/// Where a resumed common stream is in Redis.
#[derive(Clone)]
struct Tail {
    store: Arc<Inner>,
    key: String,
    stream: String,
    /// The last entry delivered.
    last: String,
}

impl Tail {
    /// The stored events after `last` (at most [`SSE_HISTORY`]), and the tail moved past them.
    async fn next(mut self) -> Result<(Vec<ServerSseMessage>, Tail), String> {
        let mut con = self.store.con();
        let (key, from) = (self.key.clone(), format!("({}", self.last));
        let entries: Vec<(String, Vec<(String, String)>)> = self
            .store
            .on_store(async move {
                redis::cmd("XRANGE")
                    .arg(&key)
                    .arg(from)
                    .arg("+")
                    .arg("COUNT")
                    .arg(SSE_HISTORY)
                    .query_async(&mut con)
                    .await
            })
            .await?;
        if let Some((id, _)) = entries.last() {
            self.last = id.clone();
        }
        let events = entries
            .into_iter()
            .filter_map(|(id, fields)| {
                let (_, body) = fields.into_iter().find(|(f, _)| f == "e")?;
                let stored: Stored = serde_json::from_str(&body).ok()?;
                Some(stored.into_event(format!("{}{SEP}{id}", self.stream)))
            })
            .collect();
        Ok((events, self))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn event_ids_split_at_the_last_separator() {
        assert_eq!(place("abc:common#1-2"), Some(Place::Stored("abc:common", "1-2")));
        assert_eq!(
            place("a#b:common#17-0"),
            Some(Place::Stored("a#b:common", "17-0"))
        );
        assert_eq!(place("uuid#4"), Some(Place::Local("uuid", 4)));
        assert_eq!(place("0"), None);
        assert_eq!(place("abc#unsaved-3"), None, "an unsaved event replays nothing");
    }

    #[test]
    fn response_streams_in_memory_are_bounded() {
        let mut local = LocalEvents::default();
        let event = ServerSseMessage::retry(Duration::from_secs(1));
        for _ in 0..LOCAL_HISTORY + 5 {
            local.keep("s", &event);
        }
        let kept = local.after("s", 0).unwrap();
        assert_eq!(
            kept.len(),
            LOCAL_HISTORY,
            "a stream keeps its last {LOCAL_HISTORY} events"
        );
        assert_eq!(kept[0].event_id.as_deref(), Some("s#5"));
        assert_eq!(local.after("s", (LOCAL_HISTORY + 3) as u64).unwrap().len(), 1);
        for n in 0..LOCAL_STREAMS + 10 {
            local.keep(&n.to_string(), &event);
        }
        assert_eq!(
            local.streams.len(),
            LOCAL_STREAMS,
            "at most {LOCAL_STREAMS} streams"
        );
        assert!(local.after("s", 0).is_none(), "the oldest went first");
        assert_eq!(local.opened.len(), LOCAL_STREAMS);
    }

    #[test]
    fn a_stored_event_comes_back_as_it_was_sent() {
        let answer: ServerJsonRpcMessage = serde_json::from_value(serde_json::json!({
            "jsonrpc": "2.0", "id": 4,
            "result": {"content": [{"type": "text", "text": "pid 9"}], "isError": false,
                       "structuredContent": {"pid": 9}}
        }))
        .unwrap();
        let notice: ServerJsonRpcMessage = serde_json::from_value(serde_json::json!({
            "jsonrpc": "2.0", "method": "notifications/resources/updated",
            "params": {"uri": "surface://cells/load"}
        }))
        .unwrap();
        for message in [answer, notice] {
            let sent = ServerSseMessage::from_message(message.clone());
            let body = serde_json::to_string(&Stored::of(&sent)).unwrap();
            let back = serde_json::from_str::<Stored>(&body)
                .unwrap()
                .into_event("s#1-0".into());
            assert_eq!(
                serde_json::to_value(back.message.as_deref()).unwrap(),
                serde_json::to_value(&message).unwrap()
            );
            assert_eq!(back.event_id.as_deref(), Some("s#1-0"));
        }
        let priming = ServerSseMessage::retry(Duration::from_secs(3));
        let body = serde_json::to_string(&Stored::of(&priming)).unwrap();
        let back = serde_json::from_str::<Stored>(&body)
            .unwrap()
            .into_event("s#2-0".into());
        assert!(back.message.is_none());
        assert_eq!(back.retry, Some(Duration::from_secs(3)));
    }
}
