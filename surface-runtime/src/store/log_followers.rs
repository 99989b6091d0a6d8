//! What this instance holds of each shared log: the last generation handed on and a sender to
//! the log's followers. The change feed hands new entries to it (and, after a reconnection, the
//! ones it [`missed`]); [`SharedLog`](super::SharedLog) reads and follows through it.

use super::counted::Counted;
use crate::sync::lock;
use serde_json::Value;
use std::sync::Mutex;
use tokio::sync::broadcast;

/// A receiver of a log's later entries: `(generation, entry)`.
pub type LogEntries = broadcast::Receiver<(u64, Value)>;

/// What this instance holds of one log: the last generation handed on, and the followers.
pub(crate) struct Followers {
    pub(crate) key: String,
    mark: Mutex<u64>,
    sender: broadcast::Sender<(u64, Value)>,
}

impl Followers {
    /// The followers of the log stored at `key`, none handed anything yet.
    pub(crate) fn new(key: String) -> Followers {
        Followers {
            key,
            mark: Mutex::new(0),
            sender: broadcast::channel(256).0,
        }
    }

    /// Hands on `entry` at `generation` unless it was handed on already.
    pub(crate) fn deliver(&self, generation: u64, entry: Value) {
        let mut mark = lock(&self.mark);
        if generation <= *mark {
            return;
        }
        *mark = generation;
        let _ = self.sender.send((generation, entry));
    }

    pub(crate) fn mark(&self) -> u64 {
        *lock(&self.mark)
    }

    /// Counts the first `stored` entries as handed on (they are the history a follower reads).
    pub(crate) fn reached(&self, stored: u64) {
        let mut mark = lock(&self.mark);
        *mark = (*mark).max(stored);
    }

    /// The generation handed on last and a receiver of every later entry, taken together.
    pub(crate) fn subscribe(&self) -> (u64, LogEntries) {
        let mark = lock(&self.mark);
        (*mark, self.sender.subscribe())
    }
}

/// The entries of `followers`' log after its mark, read from Redis (after a reconnection).
pub(crate) async fn missed(
    con: &mut Counted,
    followers: &Followers,
) -> redis::RedisResult<Vec<(u64, Value)>> {
    let from = followers.mark();
    let stored: Vec<String> = redis::cmd("LRANGE")
        .arg(&followers.key)
        .arg(from as i64)
        .arg(-1)
        .query_async(con)
        .await?;
    Ok(stored
        .iter()
        .enumerate()
        .filter_map(|(i, s)| Some((from + 1 + i as u64, serde_json::from_str(s).ok()?)))
        .collect())
}
