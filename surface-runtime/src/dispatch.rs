//! The dispatch trait every typed client calls through, and the typed member clients.
//!
//! A [`Dispatch`] carries erased requests (member reads and writes, watches, procedure calls)
//! to a surface: [`crate::DirectDispatch`] in the same process, a socket connection for a
//! surface served elsewhere. Generated clients wrap it in typed methods.

use crate::failure::{Failure, FailureKind};
use crate::member::{Change, ChangeStream, Write, key_to_id};
use crate::spec::SurfaceSpec;
use futures::future::BoxFuture;
use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::Value;
use std::marker::PhantomData;
use tokio_util::sync::CancellationToken;

/// Fires once, when a connection's transport goes away: how a dispatch over a connection (the
/// wire face's, or any other) tells its owner, so a face can discard the connection the instant
/// it dies instead of by failing a request. It lives here, beside [`Dispatch`], because faces
/// that only hold a dispatch (the MCP face's bridge) need it without the wire face.
///
/// ```
/// # #[tokio::main(flavor = "current_thread")] async fn main() {
/// let signal = surface_runtime::CloseSignal::new();
/// assert!(!signal.is_closed());
/// signal.close();
/// signal.closed().await;
/// assert!(signal.is_closed());
/// # }
/// ```
#[derive(Clone, Debug, Default)]
pub struct CloseSignal(CancellationToken);

impl CloseSignal {
    /// A signal that has not fired.
    pub fn new() -> Self {
        CloseSignal(CancellationToken::new())
    }
    /// Fires it (at most once; later calls do nothing).
    pub fn close(&self) {
        self.0.cancel();
    }
    /// Whether it has fired.
    pub fn is_closed(&self) -> bool {
        self.0.is_cancelled()
    }
    /// Resolves when it fires.
    pub async fn closed(&self) {
        self.0.cancelled().await
    }
}

/// Carries erased requests to one surface.
pub trait Dispatch: Send + Sync + 'static {
    /// The spec of the surface on the far side.
    fn spec(&self) -> &'static SurfaceSpec;
    /// Reads a whole member.
    fn read<'a>(&'a self, member: &'a str) -> BoxFuture<'a, Result<Value, Failure>>;
    /// Reads one item of a collection by its URI-shaped id.
    fn read_item<'a>(&'a self, member: &'a str, id: &'a str) -> BoxFuture<'a, Result<Value, Failure>>;
    /// Writes a member.
    fn write<'a>(&'a self, member: &'a str, write: Write) -> BoxFuture<'a, Result<(), Failure>>;
    /// Opens the change feed of a member.
    fn watch<'a>(&'a self, member: &'a str) -> BoxFuture<'a, Result<ChangeStream, Failure>>;
    /// Opens a feed of which items of a member changed since the last read, each once (see
    /// [`LiveMember::touched`](crate::LiveMember::touched)); the change feed itself where the
    /// far side does not coalesce.
    fn watch_touched<'a>(&'a self, member: &'a str) -> BoxFuture<'a, Result<ChangeStream, Failure>> {
        self.watch(member)
    }
    /// Calls a procedure (`"ns.verb"`) with its input (already unwrapped, not yet decoded).
    fn call<'a>(&'a self, procedure: &'a str, input: Value) -> BoxFuture<'a, Result<Value, Failure>>;
}

fn decode_answer<T: DeserializeOwned>(what: &str, v: Value) -> Result<T, Failure> {
    serde_json::from_value(v).map_err(|e| {
        Failure::new(
            FailureKind::Error,
            format!("the answer of {what} did not decode: {e}"),
        )
    })
}

fn encode<T: Serialize>(what: &str, v: &T) -> Result<Value, Failure> {
    serde_json::to_value(v).map_err(|e| {
        Failure::new(
            FailureKind::InvalidInput { field: String::new() },
            format!("{what} did not encode: {e}"),
        )
    })
}

/// Calls a procedure through a dispatch with typed input and output.
pub async fn call_typed<I: Serialize, O: DeserializeOwned>(
    dispatch: &dyn Dispatch,
    procedure: &str,
    input: &I,
) -> Result<O, Failure> {
    let input = encode("the input", input)?;
    decode_answer(procedure, dispatch.call(procedure, input).await?)
}

/// The typed client of one cell.
pub struct CellClient<'a, T> {
    dispatch: &'a dyn Dispatch,
    member: &'static str,
    value: PhantomData<fn() -> T>,
}

impl<'a, T: Serialize + DeserializeOwned> CellClient<'a, T> {
    #[doc(hidden)]
    pub fn __new(dispatch: &'a dyn Dispatch, member: &'static str) -> Self {
        CellClient {
            dispatch,
            member,
            value: PhantomData,
        }
    }
    /// The member's key on its surface (`"load"`).
    pub fn member(&self) -> &'static str {
        self.member
    }
    /// The current value.
    pub async fn get(&self) -> Result<T, Failure> {
        decode_answer(self.member, self.dispatch.read(self.member).await?)
    }
    /// Replaces the value.
    pub async fn set(&self, value: &T) -> Result<(), Failure> {
        self.dispatch
            .write(self.member, Write::Set(encode("the value", value)?))
            .await
    }
    /// Every change from now on.
    pub async fn watch(&self) -> Result<ChangeStream, Failure> {
        self.dispatch.watch(self.member).await
    }
}

/// The typed client of one collection.
pub struct CollectionClient<'a, K, V> {
    dispatch: &'a dyn Dispatch,
    member: &'static str,
    types: PhantomData<fn() -> (K, V)>,
}

impl<'a, K: Serialize + DeserializeOwned, V: Serialize + DeserializeOwned> CollectionClient<'a, K, V> {
    #[doc(hidden)]
    pub fn __new(dispatch: &'a dyn Dispatch, member: &'static str) -> Self {
        CollectionClient {
            dispatch,
            member,
            types: PhantomData,
        }
    }
    /// The member's key on its surface (`"load"`).
    pub fn member(&self) -> &'static str {
        self.member
    }
    /// Every key.
    pub async fn keys(&self) -> Result<Vec<K>, Failure> {
        decode_answer(self.member, self.dispatch.read(self.member).await?)
    }
    /// The item at `key`; `None` when there is none.
    pub async fn get(&self, key: &K) -> Result<Option<V>, Failure> {
        match self.dispatch.read_item(self.member, &key_to_id(key)).await {
            Ok(v) => decode_answer(self.member, v).map(Some),
            Err(f) if f.kind == FailureKind::Unknown => Ok(None),
            Err(f) => Err(f),
        }
    }
    /// Inserts or replaces the item at `key`.
    pub async fn upsert(&self, key: &K, value: &V) -> Result<(), Failure> {
        let write = Write::Upsert {
            key: encode("the key", key)?,
            value: encode("the item", value)?,
        };
        self.dispatch.write(self.member, write).await
    }
    /// Deletes the item at `key`.
    pub async fn remove(&self, key: &K) -> Result<(), Failure> {
        self.dispatch
            .write(
                self.member,
                Write::Remove {
                    key: encode("the key", key)?,
                },
            )
            .await
    }
    /// Every upsert and delete from now on.
    pub async fn watch(&self) -> Result<ChangeStream, Failure> {
        self.dispatch.watch(self.member).await
    }
}

/// The typed client of one stream.
pub struct StreamClient<'a, C> {
    dispatch: &'a dyn Dispatch,
    member: &'static str,
    chunk: PhantomData<fn() -> C>,
}

impl<'a, C: Serialize + DeserializeOwned> StreamClient<'a, C> {
    #[doc(hidden)]
    pub fn __new(dispatch: &'a dyn Dispatch, member: &'static str) -> Self {
        StreamClient {
            dispatch,
            member,
            chunk: PhantomData,
        }
    }
    /// The member's key on its surface (`"load"`).
    pub fn member(&self) -> &'static str {
        self.member
    }
    /// Every chunk so far.
    pub async fn snapshot(&self) -> Result<Vec<C>, Failure> {
        decode_answer(self.member, self.dispatch.read(self.member).await?)
    }
    /// Appends a chunk.
    pub async fn push(&self, chunk: &C) -> Result<(), Failure> {
        self.dispatch
            .write(self.member, Write::Push(encode("the chunk", chunk)?))
            .await
    }
    /// Every chunk from now on (as [`Change::Chunk`]).
    pub async fn watch(&self) -> Result<ChangeStream, Failure> {
        self.dispatch.watch(self.member).await
    }
}

/// The typed client of one event.
pub struct EventClient<'a, T> {
    dispatch: &'a dyn Dispatch,
    member: &'static str,
    value: PhantomData<fn() -> T>,
}

impl<'a, T: Serialize + DeserializeOwned> EventClient<'a, T> {
    #[doc(hidden)]
    pub fn __new(dispatch: &'a dyn Dispatch, member: &'static str) -> Self {
        EventClient {
            dispatch,
            member,
            value: PhantomData,
        }
    }
    /// The member's key on its surface (`"load"`).
    pub fn member(&self) -> &'static str {
        self.member
    }
    /// Publishes one occurrence.
    pub async fn publish(&self, value: &T) -> Result<(), Failure> {
        self.dispatch
            .write(self.member, Write::Publish(encode("the event", value)?))
            .await
    }
    /// Every occurrence from now on (as [`Change::Published`]).
    pub async fn watch(&self) -> Result<ChangeStream, Failure> {
        self.dispatch.watch(self.member).await
    }
}

/// Decodes a change's payload (a cell's new value, a chunk, an event) as `T`.
///
/// ```
/// use surface_runtime::{Change, change_value};
/// let c = Change::Set(serde_json::json!(3));
/// assert_eq!(change_value::<u32>(&c), Some(3));
/// ```
pub fn change_value<T: DeserializeOwned>(change: &Change) -> Option<T> {
    match change {
        Change::Set(v) | Change::Chunk(v) | Change::Published(v) => serde_json::from_value(v.clone()).ok(),
        _ => None,
    }
}
