//! [`DialOptions`]: how a dial waits — for the greeting, for each answer — and the scopes it
//! narrows itself to.

use std::time::Duration;

/// How a dial waits: for the greeting, and for each answer.
///
/// ```
/// use std::time::Duration;
/// use surface_runtime::wire::DialOptions;
/// let options = DialOptions::default().call_timeout(Duration::from_secs(5));
/// assert_eq!(options.get_call_timeout(), Duration::from_secs(5));
/// assert_eq!(DialOptions::default().get_call_timeout(), DialOptions::DEFAULT_CALL_TIMEOUT);
/// ```
#[derive(Clone, Debug)]
#[must_use = "hand the options to `dial_unix_socket_with` or `dial_child_with`"]
pub struct DialOptions {
    pub(super) greeting_timeout: Duration,
    pub(super) call_timeout: Duration,
    pub(super) watch_buffer: usize,
    pub(super) scopes: Option<Vec<String>>,
}

impl Default for DialOptions {
    fn default() -> Self {
        DialOptions {
            greeting_timeout: Self::DEFAULT_GREETING_TIMEOUT,
            call_timeout: Self::DEFAULT_CALL_TIMEOUT,
            watch_buffer: Self::DEFAULT_WATCH_BUFFER,
            scopes: None,
        }
    }
}

impl DialOptions {
    /// Default of [`greeting_timeout`](Self::greeting_timeout): 10 s.
    pub const DEFAULT_GREETING_TIMEOUT: Duration = Duration::from_secs(10);
    /// Default of [`call_timeout`](Self::call_timeout): 30 s.
    pub const DEFAULT_CALL_TIMEOUT: Duration = Duration::from_secs(30);
    /// Default of [`watch_buffer`](Self::watch_buffer): 256 changes, as a served member's own
    /// feed keeps.
    pub const DEFAULT_WATCH_BUFFER: usize = 256;

    /// How many changes of one watch wait for a consumer that has not read them (default
    /// [`DEFAULT_WATCH_BUFFER`](Self::DEFAULT_WATCH_BUFFER), at least 1). Past that, changes
    /// are dropped and counted, and once the consumer has read what was buffered it gets one
    /// [`Change::Lagged`](crate::member::Change::Lagged) with the count — re-read the member — as a local feed does.
    pub fn watch_buffer(mut self, n: usize) -> Self {
        self.watch_buffer = n.max(1);
        self
    }

    /// How long a dial waits for the served side's greeting (default
    /// [`DEFAULT_GREETING_TIMEOUT`](Self::DEFAULT_GREETING_TIMEOUT)).
    pub fn greeting_timeout(mut self, timeout: Duration) -> Self {
        self.greeting_timeout = timeout;
        self
    }

    /// How long a request (a read, a call, the opening of a watch) waits for its answer
    /// (default [`DEFAULT_CALL_TIMEOUT`](Self::DEFAULT_CALL_TIMEOUT)); then it fails with
    /// [`FailureKind::TimedOut`](crate::FailureKind::TimedOut), its outcome unknown. A call's progress restarts it: a
    /// procedure that keeps reporting (`ctx.progress`) waits as long as it reports. An open
    /// watch's changes have no timeout.
    pub fn call_timeout(mut self, timeout: Duration) -> Self {
        self.call_timeout = timeout;
        self
    }

    /// Dials with these scopes only (wire strings, e.g. `ops.read`): once greeted, the
    /// connection gives up every other scope its uid was granted, so the served side answers
    /// anything outside them as if it did not exist. A connection can only narrow: a scope its
    /// uid was not granted stays out of reach. Default: every scope the uid holds.
    ///
    /// ```
    /// use surface_runtime::wire::DialOptions;
    /// let options = DialOptions::default().scopes(["ops.read"]);
    /// assert_eq!(options.get_scopes(), Some(&["ops.read".to_owned()][..]));
    /// ```
    pub fn scopes<S: Into<String>>(mut self, scopes: impl IntoIterator<Item = S>) -> Self {
        self.scopes = Some(scopes.into_iter().map(Into::into).collect());
        self
    }

    /// See [`call_timeout`](Self::call_timeout).
    pub fn get_call_timeout(&self) -> Duration {
        self.call_timeout
    }

    /// See [`scopes`](Self::scopes).
    pub fn get_scopes(&self) -> Option<&[String]> {
        self.scopes.as_deref()
    }
}

/// How many progress frames of one call wait for its caller; past that, they are dropped.
pub(super) const PROGRESS_BUFFER: usize = 16;

/// `1.5 s`, `30 s`, `250 ms`: a timeout as a sentence says it.
pub(super) fn spoken(d: Duration) -> String {
    if d.as_millis().is_multiple_of(1000) {
        format!("{} s", d.as_secs())
    } else if d >= Duration::from_secs(1) {
        format!("{:.1} s", d.as_secs_f64())
    } else {
        format!("{} ms", d.as_millis())
    }
}
