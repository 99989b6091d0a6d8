//! The store's one connection, counted: every command, script and pipeline sent through it is
//! one round trip on [`REDIS_ROUND_TRIPS`](crate::mcp::observe::REDIS_ROUND_TRIPS), so the
//! count cannot miss a call site.

use redis::aio::{ConnectionLike, ConnectionManager};
use redis::{Cmd, Pipeline, RedisFuture, Value};

/// A [`ConnectionManager`] whose round trips are counted.
#[derive(Clone)]
pub(crate) struct Counted(pub(crate) ConnectionManager);

fn round_trip() {
    metrics::counter!(crate::mcp::observe::REDIS_ROUND_TRIPS).increment(1);
}

impl ConnectionLike for Counted {
    fn req_packed_command<'a>(&'a mut self, cmd: &'a Cmd) -> RedisFuture<'a, Value> {
        round_trip();
        self.0.req_packed_command(cmd)
    }

    fn req_packed_commands<'a>(
        &'a mut self,
        pipeline: &'a Pipeline,
        offset: usize,
        count: usize,
    ) -> RedisFuture<'a, Vec<Value>> {
        round_trip();
        self.0.req_packed_commands(pipeline, offset, count)
    }

    fn get_db(&self) -> i64 {
        self.0.get_db()
    }
}
