//! [`Notices`]: the notifications a test client hears, routed to the streams that wait for them.

use crate::sync::lock;
use rmcp::model::{
    ClientCapabilities, ClientConfig, Implementation, ProtocolVersion, ResourceUpdatedNotificationParam,
};
use rmcp::service::NotificationContext;
use rmcp::{ClientHandler, RoleClient};
use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tokio::sync::mpsc;

/// A notice the server sent.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Notice {
    /// `notifications/resources/updated` for this URI.
    Updated(String),
    /// `notifications/tools/list_changed`.
    ToolsChanged,
    /// `notifications/resources/list_changed`.
    ResourcesChanged,
    /// A 2026-07-28 listen stream ended with this error (e.g. its URI is not served).
    Ended(String),
}

impl Notice {
    /// The URI of an `Updated` notice.
    ///
    /// ```
    /// # use surface_runtime::testing::Notice;
    /// assert_eq!(Notice::Updated("surface://cells/load".into()).uri(), Some("surface://cells/load"));
    /// assert_eq!(Notice::ToolsChanged.uri(), None);
    /// ```
    pub fn uri(&self) -> Option<&str> {
        match self {
            Notice::Updated(uri) => Some(uri),
            _ => None,
        }
    }
}

/// A stream of notices (from [`TestClient::subscribe`](super::TestClient::subscribe) or [`TestClient::watch_lists`](super::TestClient::watch_lists)). Dropping
/// it stops listening on the client side.
pub struct Notices {
    pub(super) heard: mpsc::UnboundedReceiver<Notice>,
}

impl Notices {
    /// How long [`Notices::next`] waits: well past the server's 200 ms debounce.
    pub const WAIT: Duration = Duration::from_secs(5);

    /// The next notice, waiting up to [`Notices::WAIT`]; `None` when none came or the stream
    /// ended.
    pub async fn next(&mut self) -> Option<Notice> {
        self.next_within(Self::WAIT).await
    }

    /// The next notice, waiting up to `wait`.
    pub async fn next_within(&mut self, wait: Duration) -> Option<Notice> {
        tokio::time::timeout(wait, self.heard.recv()).await.ok().flatten()
    }

    /// Every notice until none has come for `quiet` (what a burst of writes coalesced into).
    pub async fn until_quiet(&mut self, quiet: Duration) -> Vec<Notice> {
        let mut heard = Vec::new();
        while let Some(notice) = self.next_within(quiet).await {
            heard.push(notice);
        }
        heard
    }
}

type Senders = Vec<mpsc::UnboundedSender<Notice>>;

/// Where the notifications of a legacy session go: `updated` by URI, list changes to every
/// list watcher.
#[derive(Default)]
pub(super) struct Routes {
    pub(super) updated: HashMap<String, Senders>,
    pub(super) lists: Senders,
}

#[derive(Clone)]
pub(super) struct Router {
    pub(super) routes: Arc<Mutex<Routes>>,
}

impl Router {
    fn send(senders: &mut Senders, notice: &Notice) {
        senders.retain(|s| s.send(notice.clone()).is_ok());
    }

    fn updated(&self, uri: String) {
        let mut routes = lock(&self.routes);
        if let Some(senders) = routes.updated.get_mut(&uri) {
            Self::send(senders, &Notice::Updated(uri));
        }
    }

    fn lists(&self, notice: Notice) {
        Self::send(&mut lock(&self.routes).lists, &notice);
    }
}

impl ClientHandler for Router {
    async fn on_resource_updated(
        &self,
        params: ResourceUpdatedNotificationParam,
        _context: NotificationContext<RoleClient>,
    ) {
        self.updated(params.uri);
    }
    async fn on_tool_list_changed(&self, _context: NotificationContext<RoleClient>) {
        self.lists(Notice::ToolsChanged);
    }
    async fn on_resource_list_changed(&self, _context: NotificationContext<RoleClient>) {
        self.lists(Notice::ResourcesChanged);
    }
    fn get_info(&self) -> ClientConfig {
        ClientConfig::new(
            ClientCapabilities::default(),
            Implementation::new("surface-testing", env!("CARGO_PKG_VERSION")),
        )
        .with_protocol_version(ProtocolVersion::LATEST_WITH_INITIALIZE)
    }
}
