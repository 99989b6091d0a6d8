//! The store's one connection — to one Redis, or to a Redis Cluster — counted: every command,
//! script and pipeline sent through it is one round trip on
//! [`REDIS_ROUND_TRIPS`](crate::mcp::observe::REDIS_ROUND_TRIPS), so the count cannot miss a
//! call site.

use redis::aio::{ConnectionLike, ConnectionManager};
use redis::cluster_async::ClusterConnection;
use redis::{Cmd, Pipeline, RedisFuture, Value};
use std::time::Duration;

/// How long a write on a cluster waits for its replicas before the call it runs in fails.
pub(crate) const REPLICA_WAIT: Duration = Duration::from_secs(1);

/// A connection whose round trips are counted.
#[derive(Clone)]
pub(crate) enum Counted {
    /// One Redis (reconnects by itself).
    One(ConnectionManager),
    /// A Redis Cluster (follows its slots, and their moves on a failover, by itself); each
    /// write is answered only once `replicas` replicas have it (`WAIT`), so a replica promoted
    /// in a failover has every acknowledged write.
    Cluster { con: ClusterConnection, replicas: usize },
}

fn round_trip() {
    metrics::counter!(crate::mcp::observe::REDIS_ROUND_TRIPS).increment(1);
}

/// Whether `cmd` writes: a script (every write is one), or one of the plain writes the store
/// sends. Reads answer without waiting for replicas.
fn writes(cmd: &Cmd) -> bool {
    let Some(redis::Arg::Simple(name)) = cmd.args_iter().next() else {
        return false;
    };
    [&b"EVALSHA"[..], b"EVAL", b"SET", b"DEL"]
        .iter()
        .any(|w| name.eq_ignore_ascii_case(w))
}

impl ConnectionLike for Counted {
    fn req_packed_command<'a>(&'a mut self, cmd: &'a Cmd) -> RedisFuture<'a, Value> {
        round_trip();
        match self {
            Counted::One(con) => con.req_packed_command(cmd),
            Counted::Cluster { con, replicas } => {
                let replicas = *replicas;
                if replicas == 0 || !writes(cmd) {
                    return con.req_packed_command(cmd);
                }
                Box::pin(async move {
                    // The write and its WAIT in one round trip, on the node that owns the keys.
                    let mut pipe = redis::pipe();
                    pipe.add_command(cmd.clone())
                        .cmd("WAIT")
                        .arg(replicas)
                        .arg(REPLICA_WAIT.as_millis() as u64);
                    let (value, acked): (Value, usize) = pipe.query_async(con).await?;
                    if acked < replicas {
                        return Err(redis::RedisError::from((
                            redis::ErrorKind::Io,
                            "a write was not confirmed by a replica",
                            format!(
                                "{acked} of {replicas} replicas had it within {} ms (it may still be applied)",
                                REPLICA_WAIT.as_millis()
                            ),
                        )));
                    }
                    Ok(value)
                })
            }
        }
    }

    fn req_packed_commands<'a>(
        &'a mut self,
        pipeline: &'a Pipeline,
        offset: usize,
        count: usize,
    ) -> RedisFuture<'a, Vec<Value>> {
        round_trip();
        match self {
            Counted::One(con) => con.req_packed_commands(pipeline, offset, count),
            Counted::Cluster { con, .. } => con.req_packed_commands(pipeline, offset, count),
        }
    }

    fn get_db(&self) -> i64 {
        match self {
            Counted::One(con) => con.get_db(),
            Counted::Cluster { con, .. } => con.get_db(),
        }
    }
}
