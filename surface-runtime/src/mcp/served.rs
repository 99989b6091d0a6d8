//! The served state every session reads: the current [`Generation`] (swapped whole by a
//! reroster), the tombstones of names past rosters served, and the live sessions to move onto
//! each new generation — held only as [`Follower`]s, so this module names no session
//! (`session.rs` opens them and enlists each here).

use super::config::{Factory, Instructions, Settings, server_config};
use super::generation::{self, CompositionError, Fixed, Generation};
use super::results::branded;
use crate::bundle::Siblings;
use crate::sync::{lock, read, write};
use futures::future::BoxFuture;
use rmcp::model::{Implementation, ServerConfig};
use std::collections::HashMap;
use std::sync::{Arc, Mutex, RwLock, Weak};
use tokio_util::sync::CancellationToken;

/// A name an earlier roster served, and the sibling that served it.
struct Tombstone {
    sibling: String,
}

/// A live session, moved onto each new generation by a reroster (`session.rs` implements it).
pub(crate) trait Follower: Send + Sync {
    /// Moves onto `generation`: its watches re-open on it, and its host hears the lists changed.
    fn follow<'a>(&'a self, generation: &'a Arc<Generation>) -> BoxFuture<'a, ()>;
}

/// One served bundle, shared by all its connections.
pub(crate) struct Shared {
    pub(crate) info: ServerConfig,
    /// The MCP tasks its tools run (tasks.rs).
    pub(crate) tasks: super::tasks::Tasks,
    pub(crate) instructions: Instructions,
    pub(crate) settings: Settings,
    fixed: Fixed,
    factory: Factory,
    generation: RwLock<Arc<Generation>>,
    reroster: tokio::sync::Mutex<()>,
    tombstones: Mutex<HashMap<String, Tombstone>>,
    sessions: Mutex<Vec<Weak<dyn Follower>>>,
    pub(crate) closed: CancellationToken,
    /// Cancelled by `ServedMcp::shutdown`: every connection over our transport drains.
    pub(crate) draining: CancellationToken,
}

impl Shared {
    pub(crate) fn boot(
        identity: Implementation,
        instructions: Instructions,
        fixed: Fixed,
        siblings: Siblings,
        factory: Factory,
        settings: Settings,
    ) -> Result<Arc<Shared>, CompositionError> {
        let closed = CancellationToken::new();
        let generation = generation::compose(&fixed, siblings, || factory.link(&closed))?;
        let mut info = server_config(identity);
        super::views::advertise(&mut info.capabilities, &fixed.ui);
        // The tasks extension, when a tool can run as a task (`tasks/*` are served only then).
        if generation
            .tools
            .values()
            .any(|t| t.task != crate::tool::TaskSupport::Never)
        {
            info.capabilities
                .extensions
                .get_or_insert_with(Default::default)
                .insert(rmcp::model::TASKS_EXTENSION_ID.to_owned(), Default::default());
        }
        // The skills extension, when a member serves a skill (`skills/*` are served only then).
        if !generation.skills.is_empty() {
            info.capabilities
                .extensions
                .get_or_insert_with(Default::default)
                .insert(rmcp::model::SKILLS_EXTENSION_ID.to_owned(), Default::default());
        }
        Ok(Arc::new(Shared {
            tasks: super::tasks::Tasks::new(settings.tasks),
            info,
            instructions,
            settings,
            fixed,
            factory,
            generation: RwLock::new(Arc::new(generation)),
            reroster: tokio::sync::Mutex::new(()),
            tombstones: Mutex::new(HashMap::new()),
            sessions: Mutex::new(Vec::new()),
            closed,
            draining: CancellationToken::new(),
        }))
    }

    /// The generation every request of this moment reads, whole.
    pub(crate) fn current(&self) -> Arc<Generation> {
        read(&self.generation).clone()
    }

    pub(crate) async fn reroster(&self, siblings: Siblings) -> Result<Vec<String>, CompositionError> {
        let _one_at_a_time = self.reroster.lock().await;
        let next = Arc::new(generation::compose(&self.fixed, siblings, || {
            self.factory.link(&self.closed)
        })?);
        // Tombstones first: a call that reads the new generation and misses a name it dropped
        // finds that name's tombstone already (rerosters are one at a time, so the current
        // generation is the one replaced).
        self.retire(&self.current(), &next);
        *write(&self.generation) = next.clone();
        for session in self.live_sessions() {
            session.follow(&next).await;
        }
        Ok(next.sibling_keys())
    }

    /// Records a tombstone for every sibling name the previous roster served and this one
    /// does not. Ownership is recorded here, never parsed back out of a name.
    fn retire(&self, previous: &Generation, next: &Generation) {
        let now = generation::served_names(next);
        let mut tombstones = lock(&self.tombstones);
        for (name, owner) in generation::served_names(previous) {
            if let Some(sibling) = owner
                && !now.contains_key(&name)
            {
                tombstones.insert(name, Tombstone { sibling });
            }
        }
    }

    /// The refusal for a retired name, chosen at answer time.
    pub(crate) fn tombstone(&self, what: &str, name: &str, generation: &Generation) -> Option<String> {
        let tombstones = lock(&self.tombstones);
        let stone = tombstones.get(name).or_else(|| {
            // An item URI retires with its collection's template (`prefix{id}suffix`).
            tombstones.iter().find_map(|(t, stone)| {
                let (prefix, suffix) = t.split_once("{id}")?;
                crate::resource::match_template(prefix, suffix, name).map(|_| stone)
            })
        })?;
        let why = if generation.siblings.contains_key(&stone.sibling) {
            format!("the sibling \"{}\" no longer exposes it", stone.sibling)
        } else {
            format!(
                "the sibling \"{}\" was dropped from this rooted bundle",
                stone.sibling
            )
        };
        Some(branded(&format!(
            "{what} \"{name}\" is no longer served — {why} — re-read the list"
        )))
    }

    fn live_sessions(&self) -> Vec<Arc<dyn Follower>> {
        let mut sessions = lock(&self.sessions);
        sessions.retain(|s| s.strong_count() > 0);
        sessions.iter().filter_map(Weak::upgrade).collect()
    }

    /// Enlists a session opened on this bundle, to follow each reroster while it lives.
    pub(crate) fn enlist(&self, session: Weak<dyn Follower>) {
        let mut sessions = lock(&self.sessions);
        // A stateless HTTP request opens a session of its own: drop the dead ones before the
        // list would grow, or each request leaves its emptied allocation behind a `Weak`.
        if sessions.len() == sessions.capacity() {
            sessions.retain(|s| s.strong_count() > 0);
        }
        sessions.push(session);
    }
}
