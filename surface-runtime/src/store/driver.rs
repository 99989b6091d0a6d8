//! The store's runtime: one current-thread tokio runtime driven by a thread of its own, where
//! the connection, the change feed and resumed streams live.
//!
//! One thread, not a pool: a round trip's answer then wakes the caller straight from the
//! thread that read it, with no second worker woken to steal the connection's task (on 2 cores
//! that hand-off cost more than Redis's own work per command).

/// The store's runtime, running on its own thread until dropped.
pub(crate) struct Driver {
    handle: tokio::runtime::Handle,
    /// Dropped with the driver, which ends the thread (its tasks are dropped there, never
    /// waited for: every write is acknowledged before its call answers).
    _stop: tokio::sync::oneshot::Sender<()>,
}

impl Driver {
    /// Starts the runtime on a thread named `surface-store`.
    pub(crate) fn start() -> std::io::Result<Driver> {
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()?;
        let handle = runtime.handle().clone();
        let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
        std::thread::Builder::new()
            .name("surface-store".into())
            .spawn(move || {
                // Ends when the driver (its sender) is dropped; the runtime is dropped here, on
                // its own thread, never inside a caller's runtime (where dropping one panics).
                let _ = runtime.block_on(stopped);
            })?;
        Ok(Driver { handle, _stop: stop })
    }

    /// Where the store's futures run.
    pub(crate) fn handle(&self) -> &tokio::runtime::Handle {
        &self.handle
    }
}
