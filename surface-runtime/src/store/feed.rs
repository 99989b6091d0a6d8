//! The change feed: each instance follows the surface's channel and hands every change to its
//! own members, whose feeds reach its own subscribers. After a reconnection every member hears
//! one `Lagged` (changes may have been missed), and each stream's delivery mark moves to its
//! last stored entry.

use super::log_followers;
use super::remote::last_entry;
use super::round_trip::OP_TIMEOUT;
use super::shared::Inner;
use crate::member::Change;
use crate::spec::MemberKind;
use futures::StreamExt;
use std::sync::{Arc, Weak};
use std::time::Duration;

/// One publication on the channel: a member's change, or a shared log's new entry.
#[derive(serde::Deserialize)]
struct Published {
    #[serde(default)]
    member: Option<String>,
    #[serde(default)]
    change: Option<Change>,
    /// A stream chunk's entry id, or a log's entry.
    #[serde(default)]
    entry: Option<serde_json::Value>,
    /// The log appended to.
    #[serde(default)]
    log: Option<String>,
    #[serde(default)]
    generation: u64,
}

/// Starts following `inner`'s channel; answers once the first subscription is in place (so no
/// change made after `connect` returns is missed), or why it could not be.
pub(super) fn start(clients: Vec<redis::Client>, inner: &Arc<Inner>) -> Result<(), String> {
    let (tx, rx) = std::sync::mpsc::sync_channel(1);
    inner.handle().spawn(follow(
        clients,
        Arc::downgrade(inner),
        inner.channel().to_owned(),
        tx,
    ));
    let receive = move || rx.recv_timeout(OP_TIMEOUT + Duration::from_secs(1));
    let got = match tokio::runtime::Handle::try_current() {
        Ok(h) if h.runtime_flavor() == tokio::runtime::RuntimeFlavor::MultiThread => {
            tokio::task::block_in_place(receive)
        }
        _ => receive(),
    };
    got.unwrap_or_else(|_| Err(format!("no subscription within {} ms", OP_TIMEOUT.as_millis())))
}

async fn subscribe(client: &redis::Client, channel: &str) -> Result<redis::aio::PubSub, String> {
    let connect = async {
        let mut pubsub = client.get_async_pubsub().await?;
        pubsub.subscribe(channel).await?;
        redis::RedisResult::Ok(pubsub)
    };
    match tokio::time::timeout(OP_TIMEOUT, connect).await {
        Ok(Ok(pubsub)) => Ok(pubsub),
        Ok(Err(e)) => Err(e.to_string()),
        Err(_) => Err(format!("no subscription within {} ms", OP_TIMEOUT.as_millis())),
    }
}

/// Follows `channel` through the first of `clients` that answers; on a Redis Cluster any node
/// hears every publication, so a lost node is replaced by the next.
async fn follow(
    clients: Vec<redis::Client>,
    store: Weak<Inner>,
    channel: String,
    ready: std::sync::mpsc::SyncSender<Result<(), String>>,
) {
    let mut ready = Some(ready);
    let mut pause = Duration::from_millis(100);
    let mut at = 0;
    loop {
        let client = &clients[at % clients.len()];
        at += 1;
        match subscribe(client, &channel).await {
            Ok(pubsub) => {
                pause = Duration::from_millis(100);
                match ready.take() {
                    Some(tx) => {
                        let _ = tx.send(Ok(()));
                    }
                    None => {
                        let Some(inner) = store.upgrade() else { return };
                        tracing::info!("surface store: change feed reconnected to {channel}");
                        resync(&inner).await;
                    }
                }
                let mut messages = pubsub.into_on_message();
                while let Some(message) = messages.next().await {
                    let Some(inner) = store.upgrade() else { return };
                    deliver(&inner, message.get_payload_bytes());
                }
                tracing::warn!("surface store: change feed of {channel} lost its connection; reconnecting");
            }
            // At start, each node is tried once before the store gives up.
            Err(_) if ready.is_some() && at < clients.len() => continue,
            Err(e) => {
                if let Some(tx) = ready.take() {
                    let _ = tx.send(Err(e));
                    return;
                }
            }
        }
        if store.strong_count() == 0 {
            return;
        }
        tokio::time::sleep(pause).await;
        pause = (pause * 2).min(Duration::from_secs(1));
    }
}

fn deliver(inner: &Inner, payload: &[u8]) {
    let Ok(published) = serde_json::from_slice::<Published>(payload) else {
        tracing::warn!(
            "surface store: a publication on {} is not a change",
            inner.channel()
        );
        return;
    };
    if let Some(log) = published.log {
        if let (Some(followers), Some(entry)) =
            (inner.logs().into_iter().find(|(n, _)| *n == log), published.entry)
        {
            followers.1.deliver(published.generation, entry);
        }
        return;
    }
    let (Some(member), Some(change)) = (published.member, published.change) else {
        return;
    };
    let entry = published.entry.as_ref().and_then(|e| e.as_str());
    if let Some(attached) = inner.attached().as_ref() {
        (attached.deliver)(&member, change, entry);
    }
}

/// Every member hears one `Lagged`; streams first move their mark to the last stored entry;
/// each log hands on the entries appended meanwhile.
async fn resync(inner: &Inner) {
    let mut con = inner.con();
    for (name, followers) in inner.logs() {
        match log_followers::missed(&mut con, &followers).await {
            Ok(entries) => entries
                .into_iter()
                .for_each(|(generation, entry)| followers.deliver(generation, entry)),
            Err(e) => tracing::warn!("surface store: log {name} could not catch up: {e}"),
        }
    }
    let members = match inner.attached().as_ref() {
        Some(a) => a.members.clone(),
        None => return,
    };
    for (name, kind, key) in members {
        let entry = match kind {
            MemberKind::Stream => last_entry(&mut con, &key)
                .await
                .ok()
                .map(|(ms, seq)| format!("{ms}-{seq}")),
            _ => None,
        };
        if let Some(attached) = inner.attached().as_ref() {
            (attached.deliver)(&name, Change::Lagged(0), entry.as_deref());
        }
    }
}
