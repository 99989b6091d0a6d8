//! One writer loop for every face that answers through a queue (the stdio MCP transport, the
//! wire daemon, the wire dialer): wait for the first bytes, take whatever else is already
//! queued, write it all at once and flush once — one system call for a burst of answers, none
//! while idle. A batch comes from a [`Source`]: a channel of items, each encoded as it is taken
//! ([`write_batches`]), or an [`Outbox`] its senders serialize into, taken whole. It depends on
//! tokio only, so the wire face uses it without rmcp.

use std::future::Future;
use std::io;
use std::marker::PhantomData;
use std::sync::{Mutex, MutexGuard, PoisonError, TryLockError};
use tokio::io::{AsyncWrite, AsyncWriteExt};
use tokio::sync::{Notify, mpsc};

/// About how many bytes one batch gathers before it is written.
pub(crate) const BATCH: usize = 256 * 1024;

/// What a writer's batch starts with room for; a batch that grew past [`BATCH`] is not kept.
const BATCH_START: usize = 64 * 1024;

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

/// One connection's write buffer, shared by everything that answers on it: a sender serializes
/// its line straight into it, in the order sent, and the writer takes all of it at once by
/// swapping buffers — no allocation, channel hop or copy per line. Unbounded as a channel would
/// be: what bounds it is what its senders hold (the stdio transport's permits).
#[derive(Default)]
pub(crate) struct Outbox {
    pending: Mutex<Pending>,
    /// Bytes arrived in an empty buffer, or the outbox closed.
    ready: Notify,
}

#[derive(Default)]
struct Pending {
    bytes: Vec<u8>,
    credits: usize,
    closed: bool,
}

impl Outbox {
    fn lock(&self) -> MutexGuard<'_, Pending> {
        self.pending.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Appends the line `write` writes (its newline included), `credit` counted for its batch;
    /// `Err` (nothing kept) once the outbox is closed or when `write` fails.
    pub(crate) fn put(
        &self,
        credit: bool,
        write: impl FnOnce(&mut Vec<u8>) -> io::Result<()>,
    ) -> io::Result<()> {
        let pending = match self.pending.try_lock() {
            Ok(pending) => pending,
            Err(TryLockError::Poisoned(poisoned)) => poisoned.into_inner(),
            Err(TryLockError::WouldBlock) => {
                // Another sender is serializing: serialize aside rather than wait through it.
                let mut line = Vec::with_capacity(512);
                write(&mut line)?;
                return self.append(self.lock(), credit, |bytes| {
                    bytes.extend_from_slice(&line);
                    Ok(())
                });
            }
        };
        self.append(pending, credit, write)
    }

    fn append(
        &self,
        mut pending: MutexGuard<'_, Pending>,
        credit: bool,
        write: impl FnOnce(&mut Vec<u8>) -> io::Result<()>,
    ) -> io::Result<()> {
        if pending.closed {
            return Err(io::ErrorKind::BrokenPipe.into());
        }
        let start = pending.bytes.len();
        if let Err(e) = write(&mut pending.bytes) {
            pending.bytes.truncate(start);
            return Err(e);
        }
        pending.credits += usize::from(credit);
        drop(pending);
        if start == 0 {
            self.ready.notify_one();
        }
        Ok(())
    }

    /// Takes no more lines; the writer still writes those it holds.
    pub(crate) fn close(&self) {
        self.lock().closed = true;
        self.ready.notify_one();
    }
}

impl Source for &Outbox {
    async fn fill(&mut self, batch: &mut Vec<u8>) -> Option<usize> {
        loop {
            {
                let mut pending = self.lock();
                if !pending.bytes.is_empty() {
                    std::mem::swap(batch, &mut pending.bytes);
                    return Some(std::mem::take(&mut pending.credits));
                }
                if pending.closed {
                    return None;
                }
            }
            // A line put after the look above left a permit here: no wake-up is lost.
            self.ready.notified().await;
        }
    }
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

    #[tokio::test]
    async fn an_outbox_writes_its_lines_in_order_with_their_credits_once_flushed() {
        let outbox = std::sync::Arc::new(Outbox::default());
        let (mut client, mut server) = tokio::io::duplex(1024);
        let writer_outbox = outbox.clone();
        let writer = tokio::spawn(async move {
            let mut tally = Tally::default();
            write_from(&mut &*writer_outbox, &mut server, &mut tally)
                .await
                .unwrap();
            tally
        });
        let put = |text: &'static str, credit| {
            outbox.put(credit, |bytes| {
                bytes.extend_from_slice(text.as_bytes());
                Ok(())
            })
        };
        put("a\n", true).unwrap();
        // A line whose writing fails leaves nothing of itself behind.
        let failed = outbox.put(true, |bytes| {
            bytes.extend_from_slice(b"half");
            Err(io::ErrorKind::InvalidData.into())
        });
        assert!(failed.is_err());
        put("bb\n", false).unwrap();
        put("ccc\n", true).unwrap();
        outbox.close();
        assert_eq!(
            put("late\n", true).unwrap_err().kind(),
            io::ErrorKind::BrokenPipe,
            "a closed outbox takes nothing more"
        );
        let tally = writer.await.unwrap();
        let mut out = Vec::new();
        tokio::io::AsyncReadExt::read_to_end(&mut client, &mut out)
            .await
            .unwrap();
        assert_eq!(out, b"a\nbb\nccc\n", "every line put before the close, in order");
        assert_eq!(tally.bytes, 9);
        assert_eq!(
            tally.batches.iter().sum::<usize>(),
            2,
            "one credit per line that asked for one"
        );
    }

    #[tokio::test]
    async fn a_line_put_while_the_writer_waits_wakes_it() {
        let outbox = std::sync::Arc::new(Outbox::default());
        let (mut client, mut server) = tokio::io::duplex(1024);
        let writer_outbox = outbox.clone();
        tokio::spawn(async move { write_from(&mut &*writer_outbox, &mut server, &mut ()).await });
        // The writer is waiting on an empty outbox by now.
        tokio::time::sleep(std::time::Duration::from_millis(20)).await;
        outbox
            .put(false, |bytes| {
                bytes.extend_from_slice(b"x\n");
                Ok(())
            })
            .unwrap();
        let mut line = [0; 2];
        tokio::time::timeout(
            std::time::Duration::from_secs(5),
            tokio::io::AsyncReadExt::read_exact(&mut client, &mut line),
        )
        .await
        .expect("written without a close to push it")
        .unwrap();
        assert_eq!(&line, b"x\n");
    }
}
