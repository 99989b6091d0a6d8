//! What every live member offers a face, erased of its types ([`LiveMember`]), and what a
//! backend binds: a surface's members by name ([`LiveMembers`]).

use super::backing::{Backend, Backing};
use super::change::{Change, ChangeStream, Write, feed};
use crate::failure::{Failure, FailureKind};
use crate::spec::{MemberKind, MemberSpec};
use futures::stream::StreamExt;
use serde_json::Value;

/// What every live member offers a face, erased of its types.
pub trait LiveMember: Send + Sync {
    /// Its kind.
    fn kind(&self) -> MemberKind;
    /// The whole member as JSON: a cell's value, a collection's keys, a stream's snapshot,
    /// `null` for an event.
    fn read(&self) -> Value;
    /// One item of a collection, addressed by its URI-shaped id.
    fn read_item(&self, id: &str) -> Result<Value, Failure> {
        let _ = id;
        Err(Failure::new(
            FailureKind::Unknown,
            format!("a {} has no items", self.kind().word()),
        ))
    }
    /// Applies a write that arrived erased (from a client over a dispatch).
    fn write(&self, write: Write) -> Result<(), Failure>;
    /// Its change feed.
    fn changes(&self) -> ChangeStream;
    /// Which of its items changed since the last read, each once with its last change (what
    /// a watcher that re-reads needs, such as the MCP face's `resources/updated`). The same
    /// as [`changes`](LiveMember::changes) for a member that does not coalesce.
    ///
    /// ```
    /// use futures::{FutureExt, StreamExt};
    /// use surface_runtime::{Change, Collection, LiveMember};
    /// let names: Collection<u32, String> = Collection::new();
    /// let mut touched = names.touched();
    /// names.upsert(1, "init".into());
    /// names.upsert(1, "shell".into());
    /// // Item 1 changed twice since the last read: the feed names it once.
    /// let upserted = Change::Upserted { id: "1".into() };
    /// assert_eq!(touched.next().now_or_never(), Some(Some(upserted)));
    /// assert!(touched.next().now_or_never().is_none());
    /// ```
    fn touched(&self) -> ChangeStream {
        self.changes()
    }
    /// Moves the member's value into `backing` (what a backend's attach calls).
    #[doc(hidden)]
    fn bind(&self, backing: Backend) -> Result<(), String> {
        let _ = backing;
        Err(format!("a {} cannot live in a store", self.kind().word()))
    }
    /// Hands the member a change its backing's feed heard (`entry`: where a stream chunk is
    /// stored).
    #[doc(hidden)]
    fn deliver(&self, change: Change, entry: Option<&str>) {
        let _ = (change, entry);
    }
}

/// `changes`, plus one `Lagged` each time a backing's feed reconnects.
pub(super) fn with_lag(changes: ChangeStream, backing: Option<&dyn Backing>) -> ChangeStream {
    match backing {
        Some(b) => futures::stream::select(changes, feed(b.lagged(), Change::Lagged)).boxed(),
        None => changes,
    }
}

/// What a backend binds: a surface's members, by name. Every `#[surface]` struct is one.
#[doc(hidden)]
pub trait LiveMembers: Send + Sync + 'static {
    /// Every member, in declaration order.
    fn specs() -> &'static [MemberSpec];
    /// The live member called `name`.
    fn live(&self, name: &str) -> Option<&dyn LiveMember>;
}
