//! The vocabulary every member kind shares: a [`Change`] and its stream, an erased [`Write`],
//! the bounds on values and keys, and the URI spelling of a key.

use crate::failure::{Failure, FailureKind};
use crate::spec::MemberKind;
use futures::stream::{BoxStream, StreamExt};
use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::Value;
use tokio::sync::broadcast;

/// How many changes a slow subscriber may fall behind before it is told it lagged.
pub(super) const FEED_CAPACITY: usize = 256;

/// An erased change of one member, as faces see it.
#[derive(Clone, Debug, PartialEq, Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum Change {
    /// A cell was written.
    Set(Value),
    /// A collection item was inserted or replaced; `id` is its key as it appears in URIs.
    Upserted {
        /// The item's key, URI-shaped (`"42"`, `"alice"`).
        id: String,
    },
    /// A collection item was deleted.
    Removed {
        /// The item's key, URI-shaped.
        id: String,
    },
    /// A stream yielded a chunk.
    Chunk(Value),
    /// An event was published.
    Published(Value),
    /// The subscriber fell behind and missed this many changes; re-read the member.
    Lagged(u64),
}

/// A stream of erased changes of one member.
pub type ChangeStream = BoxStream<'static, Change>;

/// The bound every member value, item, chunk and event type meets.
#[diagnostic::on_unimplemented(
    message = "`{Self}` cannot be the value of a surface member",
    label = "needs `Serialize`, `Deserialize`, `JsonSchema`, `Clone`, `Send` and `Sync`",
    note = "add `#[derive(Clone, serde::Serialize, serde::Deserialize, schemars::JsonSchema)]` to the type"
)]
pub trait MemberValue:
    Serialize + DeserializeOwned + schemars::JsonSchema + Clone + Send + Sync + 'static
{
}
impl<T> MemberValue for T where
    T: Serialize + DeserializeOwned + schemars::JsonSchema + Clone + Send + Sync + 'static
{
}

/// The bound every collection key type meets.
#[diagnostic::on_unimplemented(
    message = "`{Self}` cannot be the key of a surface collection",
    label = "needs `Serialize`, `Deserialize`, `JsonSchema`, `Ord`, `Clone`, `Send` and `Sync`",
    note = "integers and `String` are the usual keys"
)]
pub trait MemberKey: MemberValue + Ord {}
impl<T: MemberValue + Ord> MemberKey for T {}

/// A write to a member, erased of its types (what a client sends over a dispatch).
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub enum Write {
    /// Replace a cell's value.
    Set(Value),
    /// Insert or replace a collection item.
    Upsert {
        /// The item's key.
        key: Value,
        /// The item.
        value: Value,
    },
    /// Delete a collection item.
    Remove {
        /// The item's key.
        key: Value,
    },
    /// Append a chunk to a stream.
    Push(Value),
    /// Publish an event.
    Publish(Value),
}

impl Write {
    fn word(&self) -> &'static str {
        match self {
            Write::Set(_) => "set",
            Write::Upsert { .. } => "upsert",
            Write::Remove { .. } => "remove",
            Write::Push(_) => "push",
            Write::Publish(_) => "publish",
        }
    }
}

pub(super) fn wrong_write(kind: MemberKind, write: &Write) -> Failure {
    Failure::new(
        FailureKind::Unknown,
        format!("a {} cannot take a `{}` write", kind.word(), write.word()),
    )
}

pub(super) fn decode<T: DeserializeOwned>(what: &str, v: Value) -> Result<T, Failure> {
    serde_json::from_value(v).map_err(|e| {
        Failure::new(
            FailureKind::InvalidInput { field: what.into() },
            format!("invalid {what}: {e}"),
        )
    })
}

pub(super) fn to_json<T: Serialize>(v: &T) -> Value {
    serde_json::to_value(v).unwrap_or_else(|e| Value::String(format!("<unserializable: {e}>")))
}

pub(super) fn feed<T: Clone + Send + 'static>(
    rx: broadcast::Receiver<T>,
    erase: fn(T) -> Change,
) -> ChangeStream {
    futures::stream::unfold(rx, move |mut rx| async move {
        match rx.recv().await {
            Ok(v) => Some((erase(v), rx)),
            Err(broadcast::error::RecvError::Lagged(n)) => Some((Change::Lagged(n), rx)),
            Err(broadcast::error::RecvError::Closed) => None,
        }
    })
    .boxed()
}

/// The URI-shaped id of a key: a string key as itself, any other key as its JSON.
pub fn key_to_id<K: Serialize>(key: &K) -> String {
    match to_json(key) {
        Value::String(s) => s,
        other => other.to_string(),
    }
}

/// Decodes a URI-shaped id against the key type: `42` addresses a `u32` key, `alice` a
/// `String`. Only the canonical spelling — what [`key_to_id`] writes for that key — addresses
/// it: ` 1`, `01`, `1.0` and `+1` address no `u32`, and `"alice"` (quotes included) is the
/// string key `"alice"` with its quotes, not `alice`.
///
/// ```
/// use surface_runtime::{id_to_key, key_to_id};
/// assert_eq!(id_to_key::<u32>("42").unwrap(), 42);
/// assert_eq!(id_to_key::<String>("42").unwrap(), "42");
/// assert!(id_to_key::<u32>(" 42").is_err());
/// assert!(id_to_key::<u32>("042").is_err());
/// assert_eq!(id_to_key::<String>("\"a\"").unwrap(), "\"a\"");
/// assert_eq!(key_to_id(&id_to_key::<i64>("-7").unwrap()), "-7");
/// ```
pub fn id_to_key<K: Serialize + DeserializeOwned>(id: &str) -> Result<K, Failure> {
    let canonical = |key: &K| key_to_id(key) == id;
    let as_json = match serde_json::from_str::<K>(id) {
        Ok(key) if canonical(&key) => return Ok(key),
        other => other,
    };
    let as_text = serde_json::from_value::<K>(Value::String(id.to_owned()));
    match (as_json, as_text) {
        (_, Ok(key)) if canonical(&key) => Ok(key),
        (Ok(key), _) | (_, Ok(key)) => Err(Failure::new(
            FailureKind::InvalidInput { field: "id".into() },
            format!(
                "\"{id}\" is not a valid key: the key it spells is written \"{}\"",
                key_to_id(&key)
            ),
        )),
        (Err(e), Err(_)) => Err(Failure::new(
            FailureKind::InvalidInput { field: "id".into() },
            format!("\"{id}\" is not a valid key ({e})"),
        )),
    }
}
