//! One writer loop for every face that answers through a queue (the stdio MCP transport, the
//! wire daemon, the wire dialer): wait for the first bytes, take whatever else is already
//! queued, write it all at once and flush once — one system call for a burst of answers, none
//! while idle. A batch comes from a [`Source`]: the wire face's channels, each item encoded as
//! it is taken (`wire/batches.rs`), or the MCP stdio transport's write buffer
//! (`mcp/write_buffer.rs`), taken whole. It depends on tokio only, so the wire face uses it
//! without rmcp.

use std::future::Future;
use std::io;
use tokio::io::{AsyncWrite, AsyncWriteExt};

/// About how many bytes one batch gathers before it is written.
pub(crate) const BATCH: usize = 256 * 1024;

/// What a writer's batch starts with room for; a batch that grew past [`BATCH`] is not kept.
const BATCH_START: usize = 64 * 1024;

/// What the writer reports as it goes.
pub(crate) trait Written {
    /// `bytes` more reached the writer (called per write, so a slow reader still shows
    /// progress inside one batch).
    fn bytes(&mut self, bytes: usize) {
        let _ = bytes;
    }
    /// A whole batch was written and flushed; `credits` is the sum its source counted for it.
    fn batch(&mut self, credits: usize) {
        let _ = credits;
    }
}

/// Reports nothing.
impl Written for () {}

/// Where a writer's batches come from.
pub(crate) trait Source: Send {
    /// Puts the next batch in `batch` (empty when called), waiting for its first bytes, and
    /// answers its credits; `None` once the source is closed and empty.
    fn fill(&mut self, batch: &mut Vec<u8>) -> impl Future<Output = Option<usize>> + Send;
}

/// Writes the batches `source` gives until it closes (`Ok`) or a write fails (`Err`); `written`
/// hears each batch's credits once it is flushed.
pub(crate) async fn write_from<S: Source, W: AsyncWrite + Unpin>(
    source: &mut S,
    out: &mut W,
    written: &mut impl Written,
) -> io::Result<()> {
    let mut batch = Vec::with_capacity(BATCH_START);
    loop {
        batch.clear();
        if batch.capacity() > 2 * BATCH {
            // A burst's buffer is not held for the connection's life.
            batch = Vec::with_capacity(BATCH_START);
        }
        let Some(credits) = source.fill(&mut batch).await else {
            return Ok(());
        };
        let mut rest = &batch[..];
        while !rest.is_empty() {
            let n = out.write(rest).await?;
            if n == 0 {
                return Err(io::ErrorKind::WriteZero.into());
            }
            rest = &rest[n..];
            written.bytes(n);
        }
        out.flush().await?;
        written.batch(credits);
    }
}

/// What a test's writer reported: the bytes written and each batch's credits.
#[cfg(test)]
#[derive(Default)]
pub(crate) struct Tally {
    pub(crate) bytes: usize,
    pub(crate) batches: Vec<usize>,
}

#[cfg(test)]
impl Written for Tally {
    fn bytes(&mut self, bytes: usize) {
        self.bytes += bytes;
    }
    fn batch(&mut self, credits: usize) {
        self.batches.push(credits);
    }
}
