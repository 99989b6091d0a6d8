//! The bounds, permissions and grants of a served wire face ([`WireOptions`]), and who a
//! connection's peer is by them.

use crate::Principal;
use crate::audit::Audit;
use crate::expose::ErasedExpose;
use std::collections::BTreeMap;
use std::io;
use std::time::Duration;

/// The bounds, permissions and grants of a served wire face.
///
/// ```
/// use surface_runtime::wire::WireOptions;
/// let options = WireOptions::default().max_in_flight(16).socket_mode(0o660);
/// assert_eq!(options.get_max_in_flight(), 16);
/// assert_eq!(WireOptions::default().get_socket_mode(), 0o600);
/// // Granting uids opens the socket file to every uid; the grants decide who is served.
/// assert_eq!(WireOptions::default().grant(1000, ["ops.read"]).get_socket_mode(), 0o666);
/// ```
#[derive(Clone, Debug)]
#[must_use = "hand the options to `serve_unix_socket_with` or `serve_streams_with`"]
pub struct WireOptions {
    pub(super) max_in_flight: usize,
    pub(super) reply_queue: usize,
    pub(super) max_watches: usize,
    /// `None`: the default for the grants ([`WireOptions::get_socket_mode`]).
    pub(super) socket_mode: Option<u32>,
    pub(super) accept_backoff: Duration,
    pub(super) grants: BTreeMap<u32, Vec<String>>,
    pub(super) audit: Audit,
    pub(super) layers: crate::layer::Layers,
    pub(super) drain_timeout: Duration,
}

impl Default for WireOptions {
    fn default() -> Self {
        WireOptions {
            max_in_flight: Self::DEFAULT_MAX_IN_FLIGHT,
            reply_queue: Self::DEFAULT_REPLY_QUEUE,
            max_watches: Self::DEFAULT_MAX_WATCHES,
            socket_mode: None,
            accept_backoff: Self::DEFAULT_ACCEPT_BACKOFF,
            grants: BTreeMap::new(),
            audit: Audit::Off,
            layers: crate::layer::Layers::default(),
            drain_timeout: crate::drain::DEFAULT_DRAIN_TIMEOUT,
        }
    }
}

impl WireOptions {
    /// Default of [`max_in_flight`](Self::max_in_flight): 64 requests per connection.
    pub const DEFAULT_MAX_IN_FLIGHT: usize = 64;
    /// Default of [`reply_queue`](Self::reply_queue): 256 frames per connection.
    pub const DEFAULT_REPLY_QUEUE: usize = 256;
    /// Default of [`max_watches`](Self::max_watches): 1,024 watches per connection.
    pub const DEFAULT_MAX_WATCHES: usize = 1024;
    /// Default of [`socket_mode`](Self::socket_mode) without grants: `0o600`, the owner only.
    pub const DEFAULT_SOCKET_MODE: u32 = 0o600;
    /// Default of [`socket_mode`](Self::socket_mode) with grants: `0o666`, every uid may
    /// connect, and the grants decide which are served.
    pub const GRANTED_SOCKET_MODE: u32 = 0o666;
    /// Default of [`accept_backoff`](Self::accept_backoff): 100 ms.
    pub const DEFAULT_ACCEPT_BACKOFF: Duration = Duration::from_millis(100);

    /// How many requests of one connection may run at once (default
    /// [`DEFAULT_MAX_IN_FLIGHT`](Self::DEFAULT_MAX_IN_FLIGHT), at least 1). When that many
    /// run, the server stops reading the connection until one is answered: a client that
    /// writes without reading backs up into its own socket, not into the server's memory.
    /// What one connection can hold is then about `max_in_flight + reply_queue` answers: lower
    /// both where answers are large (whole members of megabytes).
    pub fn max_in_flight(mut self, n: usize) -> Self {
        self.max_in_flight = n.max(1);
        self
    }

    /// How many answer and change frames may wait for one connection's writer (default
    /// [`DEFAULT_REPLY_QUEUE`](Self::DEFAULT_REPLY_QUEUE), at least 1). A full queue holds
    /// back the requests that produce answers, and through them the reading.
    pub fn reply_queue(mut self, n: usize) -> Self {
        self.reply_queue = n.max(1);
        self
    }

    /// How many watches one connection may hold open (default
    /// [`DEFAULT_MAX_WATCHES`](Self::DEFAULT_MAX_WATCHES)); one more is refused with a
    /// sentence saying so.
    pub fn max_watches(mut self, n: usize) -> Self {
        self.max_watches = n;
        self
    }

    /// The permission bits of the socket file, whatever the umask. Without grants the default
    /// is [`DEFAULT_SOCKET_MODE`](Self::DEFAULT_SOCKET_MODE), owner only: then anyone who can
    /// connect can call every exposed procedure, so widen it (`0o660` for a group) only on
    /// purpose. With grants the default is [`GRANTED_SOCKET_MODE`](Self::GRANTED_SOCKET_MODE):
    /// who is served is decided by the peer's uid, not by the file.
    pub fn socket_mode(mut self, mode: u32) -> Self {
        self.socket_mode = Some(mode & 0o777);
        self
    }

    /// Serves connections from `uid` with `scopes` (wire strings a `scopes!` declaration
    /// declares, e.g. `ops.read`; a broader one implies the narrower ones it is declared
    /// over). Repeat for more uids; granting one uid twice adds the scopes up.
    ///
    /// A connection is identified by its peer's credentials (`SO_PEERCRED` on Linux), as the
    /// principal `uid:<n>`, which reaches exactly the exposures its scopes reach (one without a
    /// scope: every served uid). With grants:
    /// - a uid without a grant is refused when it connects (one refusal frame, then the
    ///   connection closes) — except the daemon's own uid, which reaches everything unless it
    ///   is granted something itself;
    /// - the socket file becomes connectable by every uid
    ///   ([`GRANTED_SOCKET_MODE`](Self::GRANTED_SOCKET_MODE), unless
    ///   [`socket_mode`](Self::socket_mode) says otherwise); the granted uids also need search
    ///   permission on the directories above it.
    ///
    /// Without grants, the owner-only socket is the rule and every connection reaches
    /// everything exposed. A scope the served expose map's surface does not declare is refused
    /// when serving starts. Grants apply to unix sockets; a pair of streams
    /// ([`serve_streams_with`](super::serve_streams_with)) is its parent's, which is trusted with everything.
    ///
    /// ```
    /// use surface_runtime::wire::WireOptions;
    /// // uid 1000 may read; uid 1001 may read and administer.
    /// let options = WireOptions::default().grant(1000, ["ops.read"]).grant(1001, ["ops.admin"]);
    /// assert_eq!(options.get_grant(1000), Some(&["ops.read".to_owned()][..]));
    /// assert_eq!(options.get_grant(1002), None);
    /// ```
    pub fn grant<S: Into<String>>(mut self, uid: u32, scopes: impl IntoIterator<Item = S>) -> Self {
        let granted = self.grants.entry(uid).or_default();
        for scope in scopes {
            let scope = scope.into();
            if !granted.contains(&scope) {
                granted.push(scope);
            }
        }
        self
    }

    /// Records every mutating call (a procedure exposed `tool(mutates)`) as one `tracing`
    /// event: subject (`uid:<n>`), procedure, outcome, duration — see [`crate::audit`].
    /// Default [`Audit::Off`].
    pub fn audit(mut self, audit: Audit) -> Self {
        self.audit = audit;
        self
    }

    /// Adds a [`CallLayer`](crate::layer::CallLayer): every procedure call on the wire passes
    /// it before it runs (layers in the order added); one it refuses answers the caller the
    /// layer's sentence as a refusal, and the procedure never runs. The layer sees the call as
    /// the MCP face names it (`proc_kill` for `"proc.kill"`) and the caller's principal
    /// (`uid:<n>` on a socket), so the layer an `McpServer` takes works here unchanged.
    ///
    /// ```
    /// use surface_runtime::layer::{CallInfo, CallLayer};
    /// use surface_runtime::wire::WireOptions;
    /// struct NoKills;
    /// impl CallLayer for NoKills {
    ///     fn admit(&self, call: &CallInfo<'_>) -> Result<(), String> {
    ///         match call.tool() {
    ///             "proc_kill" => Err("kills are paused during the freeze".into()),
    ///             _ => Ok(()),
    ///         }
    ///     }
    /// }
    /// let options = WireOptions::default().layer(NoKills);
    /// # let _ = options;
    /// ```
    pub fn layer(mut self, layer: impl crate::layer::CallLayer) -> Self {
        self.layers.push(layer);
        self
    }

    /// How long a graceful shutdown ([`WireServer::shutdown`](super::WireServer::shutdown)) waits for the calls in flight
    /// to be answered, and then for each connection's answers to be written (default
    /// [`DEFAULT_DRAIN_TIMEOUT`](crate::drain::DEFAULT_DRAIN_TIMEOUT), 10 s, as on every face).
    /// Past it, the calls still running are dropped and the connections close.
    ///
    /// ```
    /// # use std::time::Duration;
    /// use surface_runtime::wire::WireOptions;
    /// let options = WireOptions::default().drain_timeout(Duration::from_secs(3));
    /// assert_eq!(options.get_drain_timeout(), Duration::from_secs(3));
    /// ```
    pub fn drain_timeout(mut self, timeout: Duration) -> Self {
        self.drain_timeout = timeout;
        self
    }

    /// See [`drain_timeout`](Self::drain_timeout).
    pub fn get_drain_timeout(&self) -> Duration {
        self.drain_timeout
    }

    /// The scopes granted to `uid`, if it was granted any.
    pub fn get_grant(&self, uid: u32) -> Option<&[String]> {
        self.grants.get(&uid).map(Vec::as_slice)
    }

    /// How long to pause after a failed `accept` (out of file descriptors and the like)
    /// before accepting again (default [`DEFAULT_ACCEPT_BACKOFF`](Self::DEFAULT_ACCEPT_BACKOFF));
    /// the pause doubles while failures repeat, up to ten times this.
    pub fn accept_backoff(mut self, pause: Duration) -> Self {
        self.accept_backoff = pause;
        self
    }

    /// See [`max_in_flight`](Self::max_in_flight).
    pub fn get_max_in_flight(&self) -> usize {
        self.max_in_flight
    }

    /// The socket file's mode: [`socket_mode`](Self::socket_mode)'s, or its default for the
    /// grants.
    pub fn get_socket_mode(&self) -> u32 {
        match (self.socket_mode, self.grants.is_empty()) {
            (Some(mode), _) => mode,
            (None, true) => Self::DEFAULT_SOCKET_MODE,
            (None, false) => Self::GRANTED_SOCKET_MODE,
        }
    }

    /// Who a connection from `uid` calls as (`None`: a pair of streams, its parent's), or the
    /// sentence refusing it. `owner` is the daemon's own uid.
    pub(super) fn admit(
        &self,
        expose: &ErasedExpose,
        uid: Option<u32>,
        owner: u32,
    ) -> Result<Principal, String> {
        let everything = || expose.scopes().iter().map(|s| s.wire);
        let Some(uid) = uid else {
            return Ok(Principal::new(PEER_ISSUER, "stdio").with_scopes(everything()));
        };
        let who = Principal::new(PEER_ISSUER, format!("uid:{uid}"));
        match self.grants.get(&uid) {
            Some(scopes) => Ok(who.with_scopes(scopes.iter().cloned())),
            None if self.grants.is_empty() || uid == owner => Ok(who.with_scopes(everything())),
            None => Err(format!(
                "uid {uid} is not granted this socket: the daemon serves its owner and the uids it grants (`--grant {uid}=SCOPE`)"
            )),
        }
    }

    /// Refuses a grant naming a scope the served surface does not declare.
    pub(super) fn check_grants(&self, expose: &ErasedExpose) -> io::Result<()> {
        for (uid, scopes) in &self.grants {
            if let Some(scope) = crate::scopes::undeclared(expose.scopes(), scopes) {
                return Err(io::Error::new(
                    io::ErrorKind::InvalidInput,
                    format!(
                        "the grant to uid {uid} names the scope \"{scope}\", which the served surface does not declare (it declares: {})",
                        crate::scopes::listed(expose.scopes().iter().map(|s| s.wire))
                    ),
                ));
            }
        }
        Ok(())
    }
}

/// The issuer of a wire principal: the kernel, which vouches for a socket peer's uid.
pub(super) const PEER_ISSUER: &str = "unix";
