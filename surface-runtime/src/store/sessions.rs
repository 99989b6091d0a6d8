//! Legacy-era sessions shared across instances (features `redis` and `http`): a session's
//! `initialize` parameters and owner live in Redis, so a client whose stream broke on one
//! instance reconnects to any other with `Mcp-Session-Id` (and `Last-Event-ID`, which `sse.rs`
//! replays) and carries on; [`HttpOptions::store`](crate::mcp::HttpOptions::store) turns it on,
//! with the tasks of `tasks.rs`.
//!
//! rmcp 3.11 has the seam: a [`SessionStore`] from which an instance that does not know a session
//! id restores it (replaying the client's `initialize` into a fresh handler) before serving the
//! request. A session's stored state expires [`SESSION_TTL`] after the session was last used on
//! any instance.
//!
//! Only legacy sessions are made resumable. rmcp persists a 2026-07-28 (stateless) response
//! stream in a task that outlives the client's connection and never cancels the request it
//! serves (`tower.rs`, `persisted_stateless_stream`), so a `subscriptions/listen` whose client
//! went away would run until the server closes: unbounded. The shared session manager therefore
//! tells rmcp there is no stateless event store, which keeps a listen ending with its connection.

use super::layout;
use super::redis_store::RedisStore;
use super::shared::Inner;
use super::sse::{Place, RedisEvents, SEP, common_stream, place};
use super::tasks::SharedTasks;
use crate::mcp::http_sessions::{Owner, Pending, SessionSharing};
use crate::sync::lock;
use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
use rmcp::transport::streamable_http_server::session::{
    SessionId, SessionState, SessionStore, SessionStoreError,
};
use std::collections::HashMap;
use std::future::Future;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// How long a session's stored state outlives its last use on any instance.
pub const SESSION_TTL: Duration = Duration::from_secs(3600);

/// Sessions' `initialize` parameters in Redis, so any instance can restore a session.
pub(crate) struct RedisSessions {
    store: Arc<Inner>,
}

impl RedisSessions {
    fn key(&self, session: &str) -> String {
        layout::session(self.store.prefix(), session)
    }

    /// Where the subject that opened the session is kept (beside its state, with its expiry).
    fn owner_key(&self, session: &str) -> String {
        layout::session_owner(self.store.prefix(), session)
    }

    /// What `key` holds, its expiry pushed back to [`SESSION_TTL`] from now.
    fn fetch(&self, key: String) -> impl Future<Output = Result<Option<String>, String>> + Send + 'static {
        let mut con = self.store.con();
        self.store.on_store(async move {
            redis::cmd("GETEX")
                .arg(key)
                .arg("PX")
                .arg(SESSION_TTL.as_millis() as u64)
                .query_async(&mut con)
                .await
        })
    }

    /// Sets `key` to `body`, expiring [`SESSION_TTL`] from now.
    fn keep(&self, key: String, body: String) -> impl Future<Output = Result<(), String>> + Send + 'static {
        let mut con = self.store.con();
        self.store.on_store(async move {
            redis::cmd("SET")
                .arg(key)
                .arg(body)
                .arg("PX")
                .arg(SESSION_TTL.as_millis() as u64)
                .query_async::<()>(&mut con)
                .await
        })
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
        self.store.handle().spawn(async move {
            let _: redis::RedisResult<()> = refresh.query_async(&mut con).await;
        });
    }
}

#[async_trait::async_trait]
impl SessionStore for RedisSessions {
    async fn load(&self, session_id: &str) -> Result<Option<SessionState>, SessionStoreError> {
        let raw = self.fetch(self.key(session_id)).await?;
        Ok(match raw {
            Some(raw) => Some(serde_json::from_str(&raw)?),
            None => None,
        })
    }

    async fn store(&self, session_id: &str, state: &SessionState) -> Result<(), SessionStoreError> {
        let body = serde_json::to_string(state)?;
        self.keep(self.key(session_id), body).await?;
        Ok(())
    }

    async fn delete(&self, session_id: &str) -> Result<(), SessionStoreError> {
        let mut con = self.store.con();
        let (key, owner) = (self.key(session_id), self.owner_key(session_id));
        self.store
            .on_store(async move {
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
    /// When this instance last pushed each session's expiry back: at most once a minute per
    /// session.
    touched: Mutex<TouchThrottle>,
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

/// Entries the throttle holds before it first sweeps out the stale ones.
const TOUCH_SWEEP_AT: usize = 1024;

/// When each session's expiry was last pushed back. A session rmcp ends as idle never reaches
/// [`SessionSharing::closed`], so entries are also swept once they are [`TOUCH_EVERY`] old: a
/// missing entry only makes the next refresh due at once. The sweep runs when the map has
/// doubled since the last one, so its cost per touch stays constant.
#[derive(Debug)]
struct TouchThrottle {
    last: HashMap<SessionId, Instant>,
    sweep_at: usize,
}

impl TouchThrottle {
    fn new() -> Self {
        Self {
            last: HashMap::new(),
            sweep_at: TOUCH_SWEEP_AT,
        }
    }

    /// Whether `id`'s expiry is due to be pushed back at `now`; if so, it counts as pushed.
    fn due(&mut self, id: &SessionId, now: Instant) -> bool {
        if let Some(at) = self.last.get(id)
            && now.duration_since(*at) < TOUCH_EVERY
        {
            return false;
        }
        if self.last.len() >= self.sweep_at {
            self.last.retain(|_, at| now.duration_since(*at) < TOUCH_EVERY);
            self.sweep_at = TOUCH_SWEEP_AT.max(self.last.len() * 2);
        }
        self.last.insert(id.clone(), now);
        true
    }

    fn forget(&mut self, id: &SessionId) {
        self.last.remove(id);
    }
}

impl crate::mcp::HttpOptions {
    /// Keeps legacy-era sessions and their standalone streams' SSE events in `store` (feature
    /// `redis`), so a client can resume on any instance serving the same surface: its
    /// `Mcp-Session-Id` is known to every instance, and a `GET` with `Last-Event-ID` replays
    /// the notifications it missed, whichever instance sent them (each one Redis write). A
    /// `POST`'s response stream resumes on the instance that served it, as without a store.
    /// Bounds: [`SSE_HISTORY`](super::SSE_HISTORY) events per stream, kept
    /// [`SSE_TTL`](super::SSE_TTL) after the last, a session's state kept [`SESSION_TTL`] after
    /// its last use, and a restored session counts against [`max_sessions`](Self::max_sessions).
    ///
    /// MCP tasks are shared too: a task created through one instance runs there and is read,
    /// answered (`tasks/update`) and cancelled through any other; one whose instance ended is
    /// reported `failed`, saying so, within [`TASK_LEASE`](crate::mcp::TASK_LEASE).
    pub fn store(mut self, store: &RedisStore) -> Self {
        self.sharing = Some(Arc::new(SharedSessions {
            store: store.inner.clone(),
            sessions: Arc::new(RedisSessions {
                store: store.inner.clone(),
            }),
            touched: Mutex::new(TouchThrottle::new()),
        }));
        self.task_sharing = Some(Arc::new(SharedTasks::new(store.inner.clone())));
        self
    }
}

impl SessionSharing for SharedSessions {
    /// `local` gets the Redis event store; sessions are restored from Redis.
    fn share(&self, local: LocalSessionManager) -> (Arc<LocalSessionManager>, Arc<dyn SessionStore>) {
        let events = RedisEvents::new(self.store.clone());
        (
            Arc::new(local.with_event_store(Arc::new(events))),
            self.sessions.clone(),
        )
    }

    fn touch(&self, id: &SessionId) {
        let due = lock(&self.touched).due(id, Instant::now());
        if due {
            self.sessions.touch(id);
        }
    }

    fn closed(&self, id: &SessionId) {
        lock(&self.touched).forget(id);
    }

    fn bind<'a>(&'a self, id: &'a SessionId, owner: &'a Owner) -> Pending<'a, Result<(), String>> {
        Box::pin(async move {
            let body = serde_json::to_string(owner).map_err(|e| e.to_string())?;
            self.sessions.keep(self.sessions.owner_key(id), body).await
        })
    }

    fn owner<'a>(&'a self, id: &'a SessionId) -> Pending<'a, Option<Owner>> {
        Box::pin(async move {
            let raw = self.sessions.fetch(self.sessions.owner_key(id)).await.ok()?;
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

    fn id(n: usize) -> SessionId {
        SessionId::from(format!("s{n}"))
    }

    #[test]
    fn a_session_is_touched_once_a_minute() {
        let mut throttle = TouchThrottle::new();
        let start = Instant::now();
        assert!(throttle.due(&id(1), start));
        assert!(!throttle.due(&id(1), start + TOUCH_EVERY / 2));
        assert!(throttle.due(&id(1), start + TOUCH_EVERY));
        throttle.forget(&id(1));
        assert!(throttle.due(&id(1), start + TOUCH_EVERY));
    }

    #[test]
    fn sessions_that_never_close_do_not_grow_the_map() {
        let mut throttle = TouchThrottle::new();
        let start = Instant::now();
        // Ten generations of sessions, each used once and then abandoned (ended as idle).
        for generation in 0..10 {
            let now = start + TOUCH_EVERY * generation;
            for n in 0..TOUCH_SWEEP_AT {
                assert!(throttle.due(&id(generation as usize * TOUCH_SWEEP_AT + n), now));
            }
        }
        assert!(
            throttle.last.len() <= 2 * TOUCH_SWEEP_AT,
            "{} entries kept",
            throttle.last.len()
        );
        // Live sessions are never swept early: each is still throttled.
        let now = start + TOUCH_EVERY * 9;
        assert!(!throttle.due(&id(9 * TOUCH_SWEEP_AT), now));
    }

    #[test]
    fn many_live_sessions_sweep_rarely() {
        let mut throttle = TouchThrottle::new();
        let now = Instant::now();
        for n in 0..5 * TOUCH_SWEEP_AT {
            assert!(throttle.due(&id(n), now));
        }
        // All live: none swept, and the next sweep waits until the map doubles.
        assert_eq!(throttle.last.len(), 5 * TOUCH_SWEEP_AT);
        assert!(throttle.sweep_at > 5 * TOUCH_SWEEP_AT);
    }
}
