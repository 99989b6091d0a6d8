//! What the in-process benchmarks and the fan-out check share: the ops example itself, a
//! hand-written rmcp `ServerHandler` over the same `Ops`, a wide surface for rerosters, and a
//! raw JSON-RPC line client over an in-process duplex.

#[allow(dead_code, clippy::all)]
#[path = "../../examples/ops.rs"]
pub mod ops;

pub mod bundles;
pub mod hand;
pub mod http;
pub mod wide;
pub mod wire;
