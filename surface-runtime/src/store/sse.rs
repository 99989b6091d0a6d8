//! Resumable Streamable HTTP across instances (features `redis` and `http`): the SSE events of
//! legacy-era sessions and the sessions' `initialize` parameters live in Redis, so a client whose
//! stream broke on one instance reconnects to any other with `Mcp-Session-Id` and
//! `Last-Event-ID` and gets exactly the events it missed.
//!
//! rmcp 3.11 has the seams: an [`EventStore`] that every session stream writes its events through
//! (`LocalSessionManager::with_event_store`) and replays from on `Last-Event-ID`, and a
//! [`SessionStore`] from which an instance that does not know a session id restores it (replaying
//! the client's `initialize` into a fresh handler) before serving the request.
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
//! by the instance serving the call, so it resumes there. A session's stored state expires
//! [`SESSION_TTL`] after the session was last used on any instance.
//!
//! Only legacy sessions are made resumable. rmcp persists a 2026-07-28 (stateless) response
//! stream in a task that outlives the client's connection and never cancels the request it
//! serves (`tower.rs`, `persisted_stateless_stream`), so a `subscriptions/listen` whose client
//! went away would run until the server closes: unbounded. The shared session manager therefore
//! tells rmcp there is no stateless event store, which keeps a listen ending with its connection.

use super::{Inner, OP_TIMEOUT};
use crate::mcp::http_sessions::{Owner, Pending, SessionSharing};
use crate::sync::lock;
use futures::StreamExt;
use rmcp::model::ServerJsonRpcMessage;
use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
use rmcp::transport::streamable_http_server::session::{
    EventId, EventStore, EventStoreError, EventStream, ServerSseMessage, SessionId, SessionState,
    SessionStore, SessionStoreError,
};
use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// How many events one SSE stream keeps for a reconnecting client (older ones are trimmed).
pub const SSE_HISTORY: usize = 1024;
/// How long an SSE stream's events are kept after its last event.
pub const SSE_TTL: Duration = Duration::from_secs(600);
/// How long a session's stored state outlives its last use on any instance.
pub const SESSION_TTL: Duration = Duration::from_secs(3600);

/// How many events a `POST`'s response stream keeps in memory for a reconnecting client.
pub const LOCAL_HISTORY: usize = 64;
/// How many `POST` response streams an instance keeps for resumption (the oldest go first).
pub const LOCAL_STREAMS: usize = 10_000;
/// How long a `POST` response stream is kept after its last event (rmcp's own default for a
/// completed stream's cache).
pub const LOCAL_TTL: Duration = Duration::from_secs(60);

/// Separates an event id's stream from its entry (`<stream id>#<entry>`). rmcp's stream ids
/// are UUIDs or `<session id>:common`, so the last `#` is always ours.
const SEP: char = '#';

/// The suffix of the common (standalone `GET`) stream's id rmcp keeps for a session.
const COMMON: &str = ":common";

/// The common stream of `session`.
fn common_stream(session: &str) -> String {
    format!("{session}{COMMON}")
}

/// Where an event id says its event is.
#[derive(Debug, PartialEq, Eq)]
enum Place<'a> {
    /// In Redis: the stream and its entry id (`ms-seq`).
    Stored(&'a str, &'a str),
    /// In this instance's memory: the stream and the event's number in it.
    Local(&'a str, u64),
}

/// Where `event_id` is; `None` when it is not one of ours (or was never stored).
fn place(event_id: &str) -> Option<Place<'_>> {
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

/// Runs `fut` on the store's runtime (where its connection lives), started before this returns,
/// and waits for it without blocking this task, bounded by [`OP_TIMEOUT`].
pub(super) fn on_store<T: Send + 'static>(
    inner: &Inner,
    fut: impl Future<Output = redis::RedisResult<T>> + Send + 'static,
) -> impl Future<Output = Result<T, String>> + Send + 'static {
    let task = inner.handle.spawn(tokio::time::timeout(OP_TIMEOUT, fut));
    let url = inner.url.clone();
    async move { answered(task.await, &url) }
}

/// What a store operation run by [`on_store`] answered, as one sentence naming `url` if it failed.
fn answered<T>(
    task: Result<Result<redis::RedisResult<T>, tokio::time::error::Elapsed>, tokio::task::JoinError>,
    url: &str,
) -> Result<T, String> {
    match task {
        Ok(Ok(Ok(v))) => Ok(v),
        Ok(Ok(Err(e))) => Err(format!("the store is unreachable ({url}): {e}")),
        Ok(Err(_)) => Err(format!(
            "the store is unreachable ({url}): no answer within {} ms",
            OP_TIMEOUT.as_millis()
        )),
        Err(e) => Err(format!("the store's task failed: {e}")),
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
    fn key(&self, stream: &str) -> String {
        format!("{}:sse:{stream}", self.store.prefix())
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
        let stored = on_store(&self.store, async move {
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
        self.store.handle.spawn(async move {
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
        let entries: Vec<(String, Vec<(String, String)>)> = on_store(&self.store, async move {
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

/// Sessions' `initialize` parameters in Redis, so any instance can restore a session.
pub(crate) struct RedisSessions {
    store: Arc<Inner>,
}

impl RedisSessions {
    fn key(&self, session: &str) -> String {
        format!("{}:session:{session}", self.store.prefix())
    }

    /// Where the subject that opened the session is kept (beside its state, with its expiry).
    fn owner_key(&self, session: &str) -> String {
        format!("{}:session-owner:{session}", self.store.prefix())
    }

    /// Pushes the expiry of the session's state and owner back (fire and forget: a lost
    /// refresh only shortens them).
    fn touch(&self, session: &str) {
        let mut con = self.store.con();
        let ttl = SESSION_TTL.as_millis() as u64;
        let mut refresh = redis::pipe();
        refresh
            .cmd("PEXPIRE")
            .arg(self.key(session))
            .arg(ttl)
            .ignore()
            .cmd("PEXPIRE")
            .arg(self.owner_key(session))
            .arg(ttl)
            .ignore();
        self.store.handle.spawn(async move {
            let _: redis::RedisResult<()> = refresh.query_async(&mut con).await;
        });
    }
}

#[async_trait::async_trait]
impl SessionStore for RedisSessions {
    async fn load(&self, session_id: &str) -> Result<Option<SessionState>, SessionStoreError> {
        let mut con = self.store.con();
        let key = self.key(session_id);
        let raw: Option<String> = on_store(&self.store, async move {
            redis::cmd("GETEX")
                .arg(key)
                .arg("PX")
                .arg(SESSION_TTL.as_millis() as u64)
                .query_async(&mut con)
                .await
        })
        .await?;
        Ok(match raw {
            Some(raw) => Some(serde_json::from_str(&raw)?),
            None => None,
        })
    }

    async fn store(&self, session_id: &str, state: &SessionState) -> Result<(), SessionStoreError> {
        let body = serde_json::to_string(state)?;
        let mut con = self.store.con();
        let key = self.key(session_id);
        on_store(&self.store, async move {
            redis::cmd("SET")
                .arg(key)
                .arg(body)
                .arg("PX")
                .arg(SESSION_TTL.as_millis() as u64)
                .query_async::<()>(&mut con)
                .await
        })
        .await?;
        Ok(())
    }

    async fn delete(&self, session_id: &str) -> Result<(), SessionStoreError> {
        let mut con = self.store.con();
        let (key, owner) = (self.key(session_id), self.owner_key(session_id));
        on_store(&self.store, async move {
            redis::cmd("DEL")
                .arg(key)
                .arg(owner)
                .query_async::<()>(&mut con)
                .await
        })
        .await?;
        Ok(())
    }
}

/// Legacy sessions shared through Redis: the local session manager gets its events in Redis,
/// sessions are restored from Redis, and each used session's stored state is kept alive.
pub(crate) struct SharedSessions {
    store: Arc<Inner>,
    sessions: Arc<RedisSessions>,
    /// When this instance last pushed each live session's expiry back: at most once a minute
    /// per session. Entries leave with their sessions.
    touched: Mutex<HashMap<SessionId, Instant>>,
}

impl std::fmt::Debug for SharedSessions {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SharedSessions")
            .field("prefix", &self.store.prefix())
            .finish()
    }
}

/// How often a used session's stored expiry is pushed back.
const TOUCH_EVERY: Duration = Duration::from_secs(60);

impl crate::mcp::HttpOptions {
    /// Keeps legacy-era sessions and their standalone streams' SSE events in `store` (feature
    /// `redis`), so a client can resume on any instance serving the same surface: its
    /// `Mcp-Session-Id` is known to every instance, and a `GET` with `Last-Event-ID` replays
    /// the notifications it missed, whichever instance sent them (each one Redis write). A
    /// `POST`'s response stream resumes on the instance that served it, as without a store.
    /// Bounds: [`SSE_HISTORY`] events per stream, kept [`SSE_TTL`] after the last, a session's
    /// state kept [`SESSION_TTL`] after its last use, and a restored session counts against
    /// [`max_sessions`](Self::max_sessions).
    ///
    /// MCP tasks are shared too: a task created through one instance runs there and is read,
    /// answered (`tasks/update`) and cancelled through any other; one whose instance ended is
    /// reported `failed`, saying so, within [`TASK_LEASE`](crate::mcp::TASK_LEASE).
    pub fn store(mut self, store: &super::RedisStore) -> Self {
        self.sharing = Some(Arc::new(SharedSessions {
            store: store.inner.clone(),
            sessions: Arc::new(RedisSessions {
                store: store.inner.clone(),
            }),
            touched: Mutex::new(HashMap::new()),
        }));
        self.task_sharing = Some(Arc::new(super::tasks::SharedTasks::new(store.inner.clone())));
        self
    }
}

impl SessionSharing for SharedSessions {
    /// `local` gets the Redis event store; sessions are restored from Redis.
    fn share(&self, local: LocalSessionManager) -> (Arc<LocalSessionManager>, Arc<dyn SessionStore>) {
        let events = RedisEvents {
            store: self.store.clone(),
            unsaved: AtomicU64::new(0),
            local: Mutex::new(LocalEvents::default()),
        };
        (
            Arc::new(local.with_event_store(Arc::new(events))),
            self.sessions.clone(),
        )
    }

    fn touch(&self, id: &SessionId) {
        let now = Instant::now();
        let due = {
            let mut touched = lock(&self.touched);
            match touched.get(id) {
                Some(at) if now.duration_since(*at) < TOUCH_EVERY => false,
                _ => {
                    touched.insert(id.clone(), now);
                    true
                }
            }
        };
        if due {
            self.sessions.touch(id);
        }
    }

    fn closed(&self, id: &SessionId) {
        lock(&self.touched).remove(id);
    }

    fn bind<'a>(&'a self, id: &'a SessionId, owner: &'a Owner) -> Pending<'a, Result<(), String>> {
        Box::pin(async move {
            let body = serde_json::to_string(owner).map_err(|e| e.to_string())?;
            let mut con = self.store.con();
            let key = self.sessions.owner_key(id);
            on_store(&self.store, async move {
                redis::cmd("SET")
                    .arg(key)
                    .arg(body)
                    .arg("PX")
                    .arg(SESSION_TTL.as_millis() as u64)
                    .query_async::<()>(&mut con)
                    .await
            })
            .await
        })
    }

    fn owner<'a>(&'a self, id: &'a SessionId) -> Pending<'a, Option<Owner>> {
        Box::pin(async move {
            let mut con = self.store.con();
            let key = self.sessions.owner_key(id);
            let raw: Option<String> = on_store(&self.store, async move {
                redis::cmd("GETEX")
                    .arg(key)
                    .arg("PX")
                    .arg(SESSION_TTL.as_millis() as u64)
                    .query_async(&mut con)
                    .await
            })
            .await
            .ok()?;
            serde_json::from_str(&raw?).ok()
        })
    }

    /// Replays from Redis. rmcp primes a session's standalone stream with the id `0`, before
    /// any stored event: that resumes from the start of the session's common stream. An id of
    /// another session's common stream replays nothing.
    fn resume_from(&self, id: &SessionId, last_event_id: String) -> String {
        let common = common_stream(id);
        match place(&last_event_id) {
            None if last_event_id == "0" => format!("{common}{SEP}0-0"),
            Some(Place::Stored(stream, _)) if stream != common => format!("{common}{SEP}unsaved-0"),
            _ => last_event_id,
        }
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
