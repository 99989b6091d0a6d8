//! An `ops --socket PATH` daemon as a child process, and waiting for a condition to hold.

use std::path::{Path, PathBuf};
use std::time::Duration;

/// Waits (at most 5 s, every 10 ms) until `done` holds; answers whether it did.
pub async fn settle(mut done: impl FnMut() -> bool) -> bool {
    let deadline = tokio::time::Instant::now() + Duration::from_secs(5);
    while !done() {
        if tokio::time::Instant::now() > deadline {
            return false;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    true
}

/// A fresh directory for one test's socket.
pub fn socket_dir(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("surface-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// The real `ops --socket PATH` daemon, killed on drop.
pub struct Daemon(std::process::Child);

impl Daemon {
    /// Starts it and waits until its socket answers.
    pub async fn start(path: &Path) -> Daemon {
        Daemon::start_with(path, &[]).await
    }

    /// Starts `ops --socket PATH ARGS` (e.g. `--grant 1000=ops.read`) and waits until its
    /// socket answers.
    pub async fn start_with(path: &Path, args: &[&str]) -> Daemon {
        let child = std::process::Command::new(super::ops_binary())
            .arg("--socket")
            .arg(path)
            .args(args)
            .stderr(std::process::Stdio::null())
            .spawn()
            .expect("ops starts");
        let daemon = Daemon(child);
        assert!(settle(|| std::os::unix::net::UnixStream::connect(path).is_ok()).await);
        daemon
    }
}

impl Drop for Daemon {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}
