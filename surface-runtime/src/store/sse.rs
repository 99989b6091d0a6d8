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
//! Bounds: each SSE stream is a Redis stream trimmed to [`SSE_HISTORY`] events that expires
//! [`SSE_TTL`] after its last event; a session's stored state expires [`SESSION_TTL`] after the
//! session was last used on any instance.
//!
//! Only legacy sessions are made resumable. rmcp persists a 2026-07-28 (stateless) response
//! stream in a task that outlives the client's connection and never cancels the request it
//! serves (`tower.rs`, `persisted_stateless_stream`), so a `subscriptions/listen` whose client
//! went away would run until the server closes: unbounded. [`SharedSessions`] therefore tells
//! rmcp there is no stateless event store, which keeps a listen ending with its connection.

use super::{Inner, OP_TIMEOUT};
use crate::sync::lock;
use futures::Stream;
use rmcp::model::{ClientJsonRpcMessage, ServerJsonRpcMessage};
use rmcp::transport::streamable_http_server::RestoreOutcome;
use rmcp::transport::streamable_http_server::session::local::{
    LocalSessionManager, LocalSessionManagerError,
};
use rmcp::transport::streamable_http_server::session::{
    EventId, EventStore, EventStoreError, EventStream, ServerSseMessage, SessionId, SessionManager,
    SessionState, SessionStore, SessionStoreError,
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

/// Separates an event id's stream from its entry (`<stream id>#<entry id>`). rmcp's stream ids
/// are UUIDs or `<session id>:common`, so the last `#` is always ours.
const SEP: char = '#';

/// The common (standalone `GET`) stream rmcp keeps for a session.
fn common_stream(session: &str) -> String {
    format!("{session}:common")
}

/// An event id's stream and entry; `None` when it is not one of ours.
fn split(event_id: &str) -> Option<(&str, &str)> {
    let (stream, entry) = event_id.rsplit_once(SEP)?;
    let (ms, seq) = entry.split_once('-')?;
    (ms.parse::<u64>().is_ok() && seq.parse::<u64>().is_ok()).then_some((stream, entry))
}

/// Runs `fut` on the store's runtime (where its connection lives) and waits for it without
/// blocking this task, bounded by [`OP_TIMEOUT`].
async fn on_store<T: Send + 'static>(
    inner: &Inner,
    fut: impl Future<Output = redis::RedisResult<T>> + Send + 'static,
) -> Result<T, String> {
    let task = inner.handle.spawn(tokio::time::timeout(OP_TIMEOUT, fut));
    match task.await {
        Ok(Ok(Ok(v))) => Ok(v),
        Ok(Ok(Err(e))) => Err(format!("the store is unreachable ({}): {e}", inner.url)),
        Ok(Err(_)) => Err(format!(
            "the store is unreachable ({}): no answer within {} ms",
            inner.url,
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

/// SSE events in Redis: one capped, expiring Redis stream per rmcp stream.
pub(crate) struct RedisEvents {
    store: Arc<Inner>,
    /// Numbers the events that could not be stored (see [`EventStore::store_event`] below).
    unsaved: AtomicU64,
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

    /// The stream's events after `last_event_id`, as stored (at most [`SSE_HISTORY`]): a
    /// finite replay, after which the client reconnects with the last id it got (rmcp's
    /// reconnect-and-poll). Events trimmed meanwhile are gone; an id that was never stored
    /// replays nothing.
    async fn replay_events_after(&self, last_event_id: &str) -> Result<EventStream, EventStoreError> {
        let Some((stream, entry)) = split(last_event_id) else {
            return Err(format!("{last_event_id:?} names no stored SSE event").into());
        };
        let stream = stream.to_owned();
        let mut con = self.store.con();
        let (key, from) = (self.key(&stream), format!("({entry}"));
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
        let events: Vec<ServerSseMessage> = entries
            .into_iter()
            .filter_map(|(id, fields)| {
                let (_, body) = fields.into_iter().find(|(f, _)| f == "e")?;
                let stored: Stored = serde_json::from_str(&body).ok()?;
                Some(stored.into_event(format!("{stream}{SEP}{id}")))
            })
            .collect();
        Ok(Box::pin(futures::stream::iter(events)))
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

    /// Pushes the session's expiry back (fire and forget: a lost refresh only shortens it).
    fn touch(&self, session: &str) {
        let mut con = self.store.con();
        let key = self.key(session);
        self.store.handle.spawn(async move {
            let _: redis::RedisResult<i64> = redis::cmd("PEXPIRE")
                .arg(key)
                .arg(SESSION_TTL.as_millis() as u64)
                .query_async(&mut con)
                .await;
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
        let key = self.key(session_id);
        on_store(&self.store, async move {
            redis::cmd("DEL").arg(key).query_async::<()>(&mut con).await
        })
        .await?;
        Ok(())
    }
}

/// rmcp's local session manager with its events in Redis, restoring sessions from Redis, and
/// keeping each used session's stored state alive.
pub(crate) struct SharedSessions {
    local: Arc<LocalSessionManager>,
    sessions: Arc<RedisSessions>,
    /// When this instance last pushed each live session's expiry back: at most once a minute
    /// per session. Entries leave with their sessions.
    touched: Mutex<HashMap<SessionId, Instant>>,
}

/// How often a used session's stored expiry is pushed back.
const TOUCH_EVERY: Duration = Duration::from_secs(60);

impl SharedSessions {
    /// `local` gets the Redis event store; the answer is the manager to serve with, the session
    /// store to hand rmcp's config, and `local` (for counting sessions).
    pub(crate) fn new(
        store: &super::RedisStore,
        local: LocalSessionManager,
    ) -> (
        Arc<SharedSessions>,
        Arc<dyn SessionStore>,
        Arc<LocalSessionManager>,
    ) {
        let events = RedisEvents {
            store: store.inner.clone(),
            unsaved: AtomicU64::new(0),
        };
        let local = Arc::new(local.with_event_store(Arc::new(events)));
        let sessions = Arc::new(RedisSessions {
            store: store.inner.clone(),
        });
        let shared = Arc::new(SharedSessions {
            local: local.clone(),
            sessions: sessions.clone(),
            touched: Mutex::new(HashMap::new()),
        });
        (shared, sessions, local)
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
}

impl SessionManager for SharedSessions {
    type Error = LocalSessionManagerError;
    type Transport = <LocalSessionManager as SessionManager>::Transport;

    async fn create_session(&self) -> Result<(SessionId, Self::Transport), Self::Error> {
        self.local.create_session().await
    }

    async fn initialize_session(
        &self,
        id: &SessionId,
        message: ClientJsonRpcMessage,
    ) -> Result<ServerJsonRpcMessage, Self::Error> {
        self.local.initialize_session(id, message).await
    }

    async fn has_session(&self, id: &SessionId) -> Result<bool, Self::Error> {
        self.local.has_session(id).await
    }

    async fn close_session(&self, id: &SessionId) -> Result<(), Self::Error> {
        lock(&self.touched).remove(id);
        self.local.close_session(id).await
    }

    async fn create_stream(
        &self,
        id: &SessionId,
        message: ClientJsonRpcMessage,
    ) -> Result<impl Stream<Item = ServerSseMessage> + Send + Sync + 'static, Self::Error> {
        self.touch(id);
        self.local.create_stream(id, message).await
    }

    async fn accept_message(&self, id: &SessionId, message: ClientJsonRpcMessage) -> Result<(), Self::Error> {
        self.touch(id);
        self.local.accept_message(id, message).await
    }

    async fn create_standalone_stream(
        &self,
        id: &SessionId,
    ) -> Result<impl Stream<Item = ServerSseMessage> + Send + Sync + 'static, Self::Error> {
        self.touch(id);
        self.local.create_standalone_stream(id).await
    }

    /// Replays from Redis. rmcp primes a session's standalone stream with the id `0`, before
    /// any stored event: that resumes from the start of the session's common stream. An id of
    /// another session's common stream replays nothing.
    async fn resume(
        &self,
        id: &SessionId,
        last_event_id: String,
    ) -> Result<impl Stream<Item = ServerSseMessage> + Send + Sync + 'static, Self::Error> {
        self.touch(id);
        let common = common_stream(id);
        let last_event_id = match split(&last_event_id) {
            None if last_event_id == "0" => format!("{common}{SEP}0-0"),
            Some((stream, _)) if stream.ends_with(":common") && stream != common => {
                format!("{common}{SEP}unsaved-0")
            }
            _ => last_event_id,
        };
        self.local.resume(id, last_event_id).await
    }

    async fn restore_session(&self, id: SessionId) -> Result<RestoreOutcome<Self::Transport>, Self::Error> {
        self.local.restore_session(id).await
    }

    /// None: see the module's note on 2026-07-28 streams.
    fn event_store(&self) -> Option<Arc<dyn EventStore>> {
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn event_ids_split_at_the_last_separator() {
        assert_eq!(split("abc:common#1-2"), Some(("abc:common", "1-2")));
        assert_eq!(split("a#b#17-0"), Some(("a#b", "17-0")));
        assert_eq!(split("0"), None);
        assert_eq!(split("abc#unsaved-3"), None, "an unsaved event replays nothing");
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
