//! One writer loop for every face that answers through a queue (the stdio MCP transport, the
//! wire daemon, the wire dialer): wait for one item, take whatever else is already queued,
//! write it all at once and flush once — one system call for a burst of answers, none while
//! idle. It depends on tokio only, so the wire face uses it without rmcp.

use std::future::Future;
use std::io;
use tokio::io::{AsyncWrite, AsyncWriteExt};
use tokio::sync::mpsc;

/// About how many bytes one batch gathers before it is written.
pub(crate) const BATCH: usize = 256 * 1024;

/// A queue a writer drains: a bounded or an unbounded tokio channel.
pub(crate) trait Queue<T>: Send {
    /// The next item, waiting for one; `None` once every sender is gone and the queue is empty.
    fn next(&mut self) -> impl Future<Output = Option<T>> + Send;
    /// The next item if one is queued now.
    fn ready(&mut self) -> Option<T>;
}

impl<T: Send> Queue<T> for mpsc::Receiver<T> {
    fn next(&mut self) -> impl Future<Output = Option<T>> + Send {
        self.recv()
    }
    fn ready(&mut self) -> Option<T> {
        self.try_recv().ok()
    }
}

impl<T: Send> Queue<T> for mpsc::UnboundedReceiver<T> {
    fn next(&mut self) -> impl Future<Output = Option<T>> + Send {
        self.recv()
    }
    fn ready(&mut self) -> Option<T> {
        self.try_recv().ok()
    }
}

/// What the writer reports as it goes.
pub(crate) trait Written {
    /// `bytes` more reached the writer (called per write, so a slow reader still shows
    /// progress inside one batch).
    fn bytes(&mut self, bytes: usize) {
        let _ = bytes;
    }
    /// A whole batch was written and flushed; `credits` is the sum `encode` answered for it.
    fn batch(&mut self, credits: usize) {
        let _ = credits;
    }
}

/// Reports nothing.
impl Written for () {}

/// Writes what `queue` yields until it closes (`Ok`) or a write fails (`Err`). Each batch is
/// one item waited for plus every item already queued, up to about `budget` bytes; `encode`
/// appends an item's bytes (newline included) and answers its credits (e.g. permits its
/// writing gives back), which `written` hears once the batch is flushed.
pub(crate) async fn write_batches<T, Q, W, E>(
    queue: &mut Q,
    out: &mut W,
    budget: usize,
    mut encode: E,
    written: &mut impl Written,
) -> io::Result<()>
where
    Q: Queue<T>,
    W: AsyncWrite + Unpin,
    E: FnMut(T, &mut Vec<u8>) -> usize,
{
    let mut batch = Vec::with_capacity(budget.min(64 * 1024));
    while let Some(first) = queue.next().await {
        batch.clear();
        let mut credits = encode(first, &mut batch);
        while batch.len() < budget {
            match queue.ready() {
                Some(more) => credits += encode(more, &mut batch),
                None => break,
            }
        }
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
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Default)]
    struct Tally {
        bytes: usize,
        batches: Vec<usize>,
    }

    impl Written for Tally {
        fn bytes(&mut self, bytes: usize) {
            self.bytes += bytes;
        }
        fn batch(&mut self, credits: usize) {
            self.batches.push(credits);
        }
    }

    #[tokio::test]
    async fn a_burst_is_one_batch_and_credits_come_after_the_flush() {
        let (tx, mut rx) = mpsc::unbounded_channel::<&str>();
        for line in ["a", "bb", "ccc"] {
            tx.send(line).unwrap();
        }
        drop(tx);
        let mut out = Vec::new();
        let mut tally = Tally::default();
        let encode = |line: &str, buf: &mut Vec<u8>| {
            buf.extend_from_slice(line.as_bytes());
            buf.push(b'\n');
            line.len()
        };
        write_batches(&mut rx, &mut out, 1024, encode, &mut tally)
            .await
            .unwrap();
        assert_eq!(out, b"a\nbb\nccc\n");
        assert_eq!((tally.bytes, tally.batches), (9, vec![6]));
    }
}
