//! One connection's write buffer for the MCP stdio transport: what answers and notifications
//! are serialized into, in the order sent, and what its writer (`crate::batch::write_from`)
//! takes whole.

use crate::batch::Source;
use std::io;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Mutex, MutexGuard, TryLockError};
use tokio::sync::Notify;

/// One connection's write buffer, shared by everything that answers on it: a sender serializes
/// its line straight into it, in the order sent, and the writer takes all of it at once by
/// swapping buffers — no allocation, channel hop or copy per line. Unbounded as a channel would
/// be: what bounds it is what its senders hold (the stdio transport's permits).
#[derive(Default)]
pub(crate) struct WriteBuffer {
    pending: Mutex<Pending>,
    /// Bytes arrived in an empty buffer, or the buffer closed.
    ready: Notify,
    /// Every byte ever put, for a sender to tell how much it has put since it last let the
    /// writer run ([`put_so_far`](Self::put_so_far)).
    put_so_far: AtomicU64,
}

#[derive(Default)]
struct Pending {
    bytes: Vec<u8>,
    credits: usize,
    closed: bool,
}

impl WriteBuffer {
    fn lock(&self) -> MutexGuard<'_, Pending> {
        crate::sync::lock(&self.pending)
    }

    /// Appends the line `write` writes (its newline included), `credit` counted for its batch;
    /// `Err` (nothing kept) once the buffer is closed or when `write` fails.
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
        // Written under the lock, so no other sender's count can come between the read and the
        // write: a plain store, no locked instruction.
        let so_far = self.put_so_far.load(Ordering::Relaxed);
        self.put_so_far
            .store(so_far + (pending.bytes.len() - start) as u64, Ordering::Relaxed);
        drop(pending);
        if start == 0 {
            self.ready.notify_one();
        }
        Ok(())
    }

    /// How many bytes have been put so far, all told.
    pub(crate) fn put_so_far(&self) -> u64 {
        self.put_so_far.load(Ordering::Relaxed)
    }

    /// Takes no more lines; the writer still writes those it holds.
    pub(crate) fn close(&self) {
        self.lock().closed = true;
        self.ready.notify_one();
    }
}

impl Source for &WriteBuffer {
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
    use crate::batch::{Tally, write_from};

    #[tokio::test]
    async fn a_write_buffer_writes_its_lines_in_order_with_their_credits_once_flushed() {
        let buffer = std::sync::Arc::new(WriteBuffer::default());
        let (mut client, mut server) = tokio::io::duplex(1024);
        let writer_buffer = buffer.clone();
        let writer = tokio::spawn(async move {
            let mut tally = Tally::default();
            write_from(&mut &*writer_buffer, &mut server, &mut tally)
                .await
                .unwrap();
            tally
        });
        let put = |text: &'static str, credit| {
            buffer.put(credit, |bytes| {
                bytes.extend_from_slice(text.as_bytes());
                Ok(())
            })
        };
        put("a\n", true).unwrap();
        // A line whose writing fails leaves nothing of itself behind.
        let failed = buffer.put(true, |bytes| {
            bytes.extend_from_slice(b"half");
            Err(io::ErrorKind::InvalidData.into())
        });
        assert!(failed.is_err());
        put("bb\n", false).unwrap();
        put("ccc\n", true).unwrap();
        buffer.close();
        assert_eq!(
            put("late\n", true).unwrap_err().kind(),
            io::ErrorKind::BrokenPipe,
            "a closed buffer takes nothing more"
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
        let buffer = std::sync::Arc::new(WriteBuffer::default());
        let (mut client, mut server) = tokio::io::duplex(1024);
        let writer_buffer = buffer.clone();
        tokio::spawn(async move { write_from(&mut &*writer_buffer, &mut server, &mut ()).await });
        // The writer is waiting on an empty buffer by now.
        tokio::time::sleep(std::time::Duration::from_millis(20)).await;
        buffer
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
