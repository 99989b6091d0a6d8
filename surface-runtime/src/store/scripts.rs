//! The Lua scripts a member's writes and reads run in Redis: each one atomic step, and every
//! write publishes its change on the surface's channel in the same step, so no instance sees a
//! value without its change or a change without its value. [`Remote`](super::Remote) runs them.

use redis::Script;
use std::sync::LazyLock;

/// Sets a cell to `ARGV[1]` at the version `ARGV[2]`, and publishes its change, in one step.
pub(crate) static SET: LazyLock<Script> = LazyLock::new(|| {
    Script::new(
        "redis.call('SET', KEYS[1], ARGV[1]) redis.call('SET', KEYS[2], ARGV[2]) \
         redis.call('PUBLISH', ARGV[3], ARGV[4]) return 1",
    )
});

/// Sets the hash field `ARGV[1]` to `ARGV[2]` at the version `ARGV[3]` and publishes its change;
/// answers the value it replaced.
pub(crate) static HSET: LazyLock<Script> = LazyLock::new(|| {
    Script::new(
        "local old = redis.call('HGET', KEYS[1], ARGV[1]) \
         redis.call('HSET', KEYS[1], ARGV[1], ARGV[2]) redis.call('HSET', KEYS[2], ARGV[1], ARGV[3]) \
         redis.call('PUBLISH', ARGV[4], ARGV[5]) return old",
    )
});

/// Deletes a hash field (and its version) and, if it was there, publishes its removal; answers
/// what it deleted.
pub(crate) static HDEL: LazyLock<Script> = LazyLock::new(|| {
    Script::new(
        "local old = redis.call('HGET', KEYS[1], ARGV[1]) \
         if old then redis.call('HDEL', KEYS[1], ARGV[1]) redis.call('HDEL', KEYS[2], ARGV[1]) \
           redis.call('PUBLISH', ARGV[2], ARGV[3]) end \
         return old",
    )
});

/// Reads a value (the hash field `ARGV[1]` when not empty) with its version (`''` for a value
/// seeded and never written since): `{version, value}`.
pub(crate) static READ: LazyLock<Script> = LazyLock::new(|| {
    Script::new(
        "if ARGV[1] == '' then \
           return {redis.call('GET', KEYS[2]) or '', redis.call('GET', KEYS[1])} end \
         return {redis.call('HGET', KEYS[2], ARGV[1]) or '', redis.call('HGET', KEYS[1], ARGV[1])}",
    )
});

/// Compare-and-set: if the value's version (the hash field `ARGV[1]`'s, when not empty, while it
/// exists) is still `ARGV[2]`, writes `ARGV[4]` at the version `ARGV[3]` and publishes `ARGV[6]` on
/// `ARGV[5]`: `{1, '', false}`; otherwise writes nothing and answers `{0, version, value}`, what is stored
/// now, so a retry needs no read of its own. Versions are unique (the writer's instance and a
/// count), so a swap never mistakes another write, or a value removed and written again, for
/// the one it saw — and a swap may build on one still in flight: it succeeds only if that one
/// did.
pub(crate) static SWAP: LazyLock<Script> = LazyLock::new(|| {
    Script::new(
        "local f = ARGV[1] local v \
         if f == '' then v = redis.call('GET', KEYS[2]) else v = redis.call('HGET', KEYS[2], f) end \
         v = v or '' \
         if v == ARGV[2] then \
           if f == '' then redis.call('SET', KEYS[1], ARGV[4]) redis.call('SET', KEYS[2], ARGV[3]) \
           elseif redis.call('HEXISTS', KEYS[1], f) == 1 then \
             redis.call('HSET', KEYS[1], f, ARGV[4]) redis.call('HSET', KEYS[2], f, ARGV[3]) \
           else return {0, '', false} end \
           redis.call('PUBLISH', ARGV[5], ARGV[6]) return {1, '', false} end \
         if f == '' then return {0, v, redis.call('GET', KEYS[1])} end \
         return {0, v, redis.call('HGET', KEYS[1], f)}",
    )
});

/// Appends a chunk to a stream trimmed to `ARGV[1]` entries ('' unbounded, '0' keeps none) and
/// publishes it with its entry id spliced between `ARGV[4]` and `ARGV[5]`; answers the id.
pub(crate) static XADD: LazyLock<Script> = LazyLock::new(|| {
    Script::new(
        "local id = '' \
         if ARGV[1] == '' then id = redis.call('XADD', KEYS[1], '*', 'c', ARGV[2]) \
         elseif ARGV[1] ~= '0' then id = redis.call('XADD', KEYS[1], 'MAXLEN', ARGV[1], '*', 'c', ARGV[2]) end \
         redis.call('PUBLISH', ARGV[3], ARGV[4] .. id .. ARGV[5]) return id",
    )
});

/// Seeds a hash or stream once per member: only the first instance's values go in, so a later
/// instance never resurrects an item another deleted.
pub(crate) static SEED: LazyLock<Script> = LazyLock::new(|| {
    Script::new(
        "if redis.call('SETNX', KEYS[1], 1) == 0 then return 0 end \
         for i = 2, #ARGV, 2 do \
           if ARGV[1] == 'hash' then redis.call('HSET', KEYS[2], ARGV[i], ARGV[i + 1]) \
           else redis.call('XADD', KEYS[2], '*', 'c', ARGV[i + 1]) end end \
         return 1",
    )
});

/// Increments a counter, first seeding it when the key is gone.
pub(crate) static INCR: LazyLock<Script> = LazyLock::new(|| {
    Script::new(
        "if redis.call('EXISTS', KEYS[1]) == 0 then redis.call('SET', KEYS[1], ARGV[1]) end \
         return redis.call('INCR', KEYS[1])",
    )
});
