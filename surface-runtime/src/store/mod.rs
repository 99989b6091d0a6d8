//! Where member values live: in this process (the default) or in Redis, so that several
//! instances serve one surface.
//!
//! A surface's members are built in memory, as always; [`RedisStore::attach`] then moves them
//! into Redis under a key prefix naming the surface (`surface:{<name>}:…`, the name a hash tag
//! so that all of one surface's keys share a Redis Cluster slot): a cell is a string key, a
//! collection a hash (field: the item's URI-shaped id), a stream a Redis stream trimmed to its
//! history limit, and an event only a publication. The first instance to attach seeds Redis with
//! its starting values; later ones find them there and keep what is stored.
//!
//! Every write runs as one Lua script that changes the value **and** publishes the change on the
//! surface's channel (`surface:{<name>}:changes`), so no instance can see a value without its
//! change or a change without its value. Each instance follows that channel and hands every
//! change to its own members' feeds: typed subscribers and every face (MCP `resources/updated`,
//! listen streams, wire watches) hear a change made through any instance, with the debounce they
//! already have. Read-modify-write (`Cell::update`, `Collection::update`) is optimistic: each
//! value (each item) has a version kept next to it in Redis, an instance remembers the last
//! value and version it saw, computes the update from that and writes it with one script that
//! writes only if the version is still the one seen — otherwise it answers the value and version
//! stored now, and the update runs again on them. One round trip per update when nobody else
//! wrote, no lease held across round trips, and no update lost. Callers of one instance updating
//! one value take turns in a local first-come-first-served queue, so they do not fail each
//! other's swaps, and a hot key (every `proc_spawn` updates the one `load` cell) serves its
//! callers in turn.
//!
//! Member methods stay synchronous: in Redis mode each one waits for its round trip (on a
//! multi-thread runtime inside `block_in_place`), bounded by [`OP_TIMEOUT`]. When Redis cannot
//! be reached, the operation falls back to the value last heard and the call it ran in fails:
//! [`DirectDispatch`](crate::DirectDispatch) turns the whole call into a failure saying the store
//! is unreachable (an `isError` result on the MCP face), and later operations in that call fail at
//! once instead of waiting again. The connection reconnects by itself; when the change feed
//! reconnects, every member's feed hears one `Lagged`, so each subscriber is told to re-read once.
//!
//! ```no_run
//! # use std::sync::Arc;
//! # fn demo<S: surface_runtime::SurfaceMembers>(surface: Arc<S>) -> Result<(), surface_runtime::store::StoreError> {
//! use surface_runtime::store::RedisStore;
//! let store = RedisStore::connect("redis://127.0.0.1:6379/", "ops")?;
//! store.attach(&surface)?; // before serving: from now on its members live in Redis
//! # Ok(()) }
//! ```
//!
//! The store is a backend behind the core's seam: [`Remote`] implements the members' `Backing`,
//! and [`RedisStore::attach`] takes any set of members the core offers. Only this module tree
//! names Redis, and it is compiled only with the feature.
//!
//! One file a concern, each importing its siblings (this file only declares and re-exports):
//! `redis_store.rs` connects and attaches ([`RedisStore`]); `shared.rs` is what every part of
//! one store shares; `driver.rs` is the store's runtime, on a thread of its own;
//! `round_trip.rs` runs one bounded round trip; `counted.rs` is the counted
//! connection; `layout.rs` names every key; `error.rs` holds [`StoreError`]; `feed.rs` follows
//! the change channel; `remote.rs` (with its Lua scripts in `scripts.rs`) is one member's place;
//! `log.rs` and `log_followers.rs` are the shared logs; with the `http` feature, `sse.rs` keeps
//! SSE events, `sessions.rs` legacy sessions and `tasks.rs` MCP tasks across instances.

#![cfg(feature = "redis")]

mod counted;
mod driver;
mod error;
mod feed;
mod layout;
mod log;
mod log_followers;
mod redis_store;
mod remote;
mod round_trip;
mod scripts;
#[cfg(feature = "http")]
mod sessions;
mod shared;
#[cfg(feature = "http")]
mod sse;
#[cfg(feature = "http")]
mod tasks;

pub use error::StoreError;
pub use log::SharedLog;
pub use log_followers::LogEntries;
pub use redis_store::RedisStore;
pub use remote::Remote;
pub use round_trip::OP_TIMEOUT;
#[cfg(feature = "http")]
pub use sessions::SESSION_TTL;
#[cfg(feature = "http")]
pub use sse::{LOCAL_HISTORY, LOCAL_STREAMS, LOCAL_TTL, SSE_HISTORY, SSE_TTL};
