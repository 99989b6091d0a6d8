//! Live members: the runtime values behind `#[cell]`, `#[collection]`, `#[stream]`, `#[event]`.
//!
//! Each member holds its state and publishes every change on a broadcast channel. Typed
//! subscribers (`subscribe`) see typed changes; faces see the erased [`Change`] feed through
//! [`LiveMember::changes`]. A change is built only when someone listens.
//!
//! One kind per file; a member's value lives in this process unless a backend moves it into a
//! [`Backing`](backing::Backing) (`backing.rs`, the seam the Redis store implements).

pub(crate) mod backing;
mod cell;
mod change;
mod collection;
mod counter;
mod event;
mod live;
mod stream;
mod touched;

pub use cell::Cell;
pub use change::{Change, ChangeStream, MemberKey, MemberValue, Write, id_to_key, key_to_id};
use change::{FEED_CAPACITY, decode, feed, to_json, wrong_write};
pub use collection::{Collection, CollectionChange};
pub use counter::Counter;
pub use event::Event;
use live::with_lag;
pub use live::{LiveMember, LiveMembers};
pub use stream::{STREAM_HISTORY, Stream};
