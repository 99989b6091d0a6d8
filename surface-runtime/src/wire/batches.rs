//! The wire face's writers (the daemon's connections, the dialer): a channel's items, each
//! encoded as it is taken, written by the one write loop (`crate::batch`).

use crate::batch::{Source, Written, write_from};
use std::future::Future;
use std::io;
use std::marker::PhantomData;
use tokio::io::AsyncWrite;
use tokio::sync::mpsc;

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

/// A queue's items, each encoded as it is taken: one waited for, then every one already
/// queued, up to about `budget` bytes.
struct Encoding<'q, Q, E, T> {
    queue: &'q mut Q,
    budget: usize,
    encode: E,
    item: PhantomData<fn(T)>,
}

impl<Q, E, T> Source for Encoding<'_, Q, E, T>
where
    Q: Queue<T>,
    E: FnMut(T, &mut Vec<u8>) -> usize + Send,
    T: Send,
{
    async fn fill(&mut self, batch: &mut Vec<u8>) -> Option<usize> {
        let first = self.queue.next().await?;
        let mut credits = (self.encode)(first, batch);
        while batch.len() < self.budget {
            match self.queue.ready() {
                Some(more) => credits += (self.encode)(more, batch),
                None => break,
            }
        }
        Some(credits)
    }
}

/// Writes what `queue` yields until it closes (`Ok`) or a write fails (`Err`). Each batch is
/// one item waited for plus every item already queued, up to about `budget` bytes; `encode`
/// appends an item's bytes (newline included) and answers its credits (e.g. permits its
/// writing gives back), which `written` hears once the batch is flushed.
pub(crate) async fn write_batches<T, Q, W, E>(
    queue: &mut Q,
    out: &mut W,
    budget: usize,
    encode: E,
    written: &mut impl Written,
) -> io::Result<()>
where
    Q: Queue<T>,
    W: AsyncWrite + Unpin,
    E: FnMut(T, &mut Vec<u8>) -> usize + Send,
    T: Send,
{
    let mut source = Encoding {
        queue,
        budget,
        encode,
        item: PhantomData,
    };
    write_from(&mut source, out, written).await
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::batch::Tally;

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
