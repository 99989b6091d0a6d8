//! A rooted bundle: a core beside keyed tenant siblings whose roster changes live.
//!
//! `cargo run --example bundle` serves it over MCP on stdio (`-- --http 127.0.0.1:PORT`: over
//! Streamable HTTP). The root tools `roster_set` and
//! `roster_narrow` move the roster; agents then get `list_changed`, and names a past roster
//! served are refused by name.
//!
//! Built with the `redis` feature, `-- --http 127.0.0.1:PORT --redis redis://127.0.0.1:6379/`
//! keeps the roster in a shared log in Redis: several instances replay the same rosters in the
//! same order, so a reroster through any of them re-composes every one (each sends
//! `list_changed` to its own sessions) and a retired name is refused with the same sentence
//! everywhere.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use std::collections::{BTreeMap, BTreeSet};
use std::convert::Infallible;
use std::sync::{Arc, Mutex, OnceLock};
use surface::mcp::{BundleClient, CompositionError, McpServer, Member, ServedMcp, Siblings};
use surface::{Expose, Failure, FailureKind, expose, surface, tool};

/// The core: what every generation of this bundle serves.
#[surface]
pub struct Core {
    /// A greeting.
    #[cell]
    pub banner: String,
}

#[surface]
impl Core {
    /// Who answers: the core.
    #[procedure("who.get")]
    pub async fn who(&self) -> Result<String, Infallible> {
        Ok("core".to_owned())
    }
}

/// One tenant, served as a sibling under its name.
#[surface]
pub struct Tenant {
    /// How many entries the tenant has.
    #[cell]
    pub entries: u32,
    /// The tenant's rows.
    #[collection(key = String)]
    pub rows: String,
    name: String,
}

impl Tenant {
    /// A tenant called `name`, with one row `"<name>-row"` → `"<name>"`.
    pub fn new(name: &str) -> Self {
        Tenant {
            entries: surface::Cell::new(1),
            rows: [(format!("{name}-row"), name.to_owned())].into_iter().collect(),
            name: name.to_owned(),
        }
    }
}

#[surface]
impl Tenant {
    /// Runs the tenant's operation; answers the tenant's name.
    #[procedure("ops.run")]
    pub async fn run(&self) -> Result<String, Infallible> {
        Ok(self.name.clone())
    }
}

/// Where am I? Answers the tenant's name.
#[tool(read_only)]
pub async fn here(client: &TenantClient) -> Result<String, Failure> {
    client.ops().run().await
}

/// What a tenant exposes normally.
pub const TENANT: Expose<Tenant> = expose!(Tenant {
    entries: resource,
    rows: resource,
    "ops.run": tool(read_only),
});

/// What a narrowed tenant exposes.
pub const NARROW: Expose<Tenant> = expose!(Tenant { "ops.run": tool(read_only) });

/// What the core exposes.
pub const CORE: Expose<Core> = expose!(Core { banner: resource, "who.get": tool(read_only) });

/// The host: the live tenants and the served bundle it rerosters.
#[derive(Default)]
pub struct Host {
    tenants: Mutex<BTreeMap<String, Arc<Tenant>>>,
    narrowed: Mutex<BTreeSet<String>>,
    served: OnceLock<ServedMcp>,
    #[cfg(feature = "redis")]
    shared: OnceLock<shared::Roster>,
}

impl Host {
    /// The roster entry of every tenant standing now.
    pub fn siblings(&self) -> Siblings {
        let narrowed = self.narrowed.lock().unwrap();
        let tenants = self.tenants.lock().unwrap();
        tenants
            .keys()
            .map(|k| {
                let member = if narrowed.contains(k) {
                    Member::new(NARROW)
                } else {
                    Member::new(TENANT).tool(HereTool)
                };
                (k.clone(), member)
            })
            .collect()
    }

    /// The tenant standing under `key`, if any.
    pub fn tenant(&self, key: &str) -> Option<Arc<Tenant>> {
        self.tenants.lock().unwrap().get(key).cloned()
    }

    /// The live clients of the tenants standing now (the factory re-reads this every time).
    pub fn clients(self: &Arc<Self>, core: &Arc<Core>) -> BundleClient {
        let mut bundle = BundleClient::with_core(CoreClient::direct(core.clone())).with_host(self.clone());
        for (k, t) in self.tenants.lock().unwrap().iter() {
            bundle = bundle.sibling(k.clone(), TenantClient::direct(t.clone()));
        }
        bundle
    }

    /// Rerosters to exactly `keys`, creating tenants that do not exist yet. A refused roster
    /// leaves both the host and the served bundle as they were.
    pub async fn set(&self, keys: &[String]) -> Result<Vec<String>, CompositionError> {
        let before = {
            let mut tenants = self.tenants.lock().unwrap();
            let before = tenants.clone();
            let next: BTreeMap<String, Arc<Tenant>> = keys
                .iter()
                .map(|k| {
                    (
                        k.clone(),
                        before.get(k).cloned().unwrap_or_else(|| Arc::new(Tenant::new(k))),
                    )
                })
                .collect();
            *tenants = next;
            before
        };
        self.narrowed.lock().unwrap().retain(|k| keys.contains(k));
        self.apply(move |host| *host.tenants.lock().unwrap() = before)
            .await
    }

    /// Narrows `key` to expose only `ops.run`.
    pub async fn narrow(&self, key: &str) -> Result<Vec<String>, CompositionError> {
        let added = self.narrowed.lock().unwrap().insert(key.to_owned());
        let key = key.to_owned();
        self.apply(move |host| {
            if added {
                host.narrowed.lock().unwrap().remove(&key);
            }
        })
        .await
    }

    async fn apply(&self, undo: impl FnOnce(&Host)) -> Result<Vec<String>, CompositionError> {
        let served = self.served.get().expect("the host serves a bundle");
        let result = served.reroster(self.siblings()).await;
        if result.is_err() {
            undo(self);
        }
        result
    }
}

/// Input of `roster_set`.
#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]
pub struct RosterSet {
    /// The tenants to serve, exactly.
    pub keys: Vec<String>,
}

/// Input of `roster_narrow`.
#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]
pub struct RosterNarrow {
    /// The tenant that stays but exposes only `ops.run`.
    pub key: String,
}

fn host_of(client: &BundleClient) -> Result<Arc<Host>, Failure> {
    client
        .host::<Host>()
        .ok_or_else(|| Failure::new(FailureKind::Error, "this bundle has no host"))
}

fn refused(e: CompositionError) -> Failure {
    Failure::new(FailureKind::Refused, e.to_string())
}

/// Serve exactly these tenants; answers the new list of sibling keys.
#[tool(mutates)]
pub async fn roster_set(args: RosterSet, client: &BundleClient) -> Result<Vec<String>, Failure> {
    let host = host_of(client)?;
    #[cfg(feature = "redis")]
    if let Some(roster) = host.shared.get() {
        return roster.propose(serde_json::json!({ "set": args.keys })).await;
    }
    host.set(&args.keys).await.map_err(refused)
}

/// Keep this tenant but expose only its `ops.run`; answers the new list of sibling keys.
#[tool(mutates)]
pub async fn roster_narrow(args: RosterNarrow, client: &BundleClient) -> Result<Vec<String>, Failure> {
    let host = host_of(client)?;
    #[cfg(feature = "redis")]
    if let Some(roster) = host.shared.get() {
        return roster.propose(serde_json::json!({ "narrow": args.key })).await;
    }
    host.narrow(&args.key).await.map_err(refused)
}

/// The roster in a shared log (feature `redis`): every instance applies every roster change in
/// the log's order, the one that proposed it included, so all of them compose the same
/// generations and hold the same tombstones.
#[cfg(feature = "redis")]
pub mod shared {
    use super::{Host, refused};
    use serde_json::Value;
    use std::collections::HashMap;
    use std::sync::{Arc, Mutex};
    use std::time::Duration;
    use surface::store::SharedLog;
    use surface::{Failure, FailureKind};

    /// The log and what applying each generation answered here.
    pub struct Roster {
        log: SharedLog,
        answers: Mutex<HashMap<u64, Result<Vec<String>, Failure>>>,
        applied: tokio::sync::watch::Sender<u64>,
    }

    impl Roster {
        /// Appends a roster change and answers what applying it answered on this instance
        /// (every instance answers the same).
        pub async fn propose(&self, change: Value) -> Result<Vec<String>, Failure> {
            let generation = self
                .log
                .append(&change)
                .map_err(|e| Failure::new(FailureKind::Error, e.to_string()))?;
            let mut applied = self.applied.subscribe();
            let waited =
                tokio::time::timeout(Duration::from_secs(10), applied.wait_for(|g| *g >= generation)).await;
            if !matches!(waited, Ok(Ok(_))) {
                return Err(Failure::new(
                    FailureKind::Error,
                    format!("roster generation {generation} was not applied here within 10 s"),
                ));
            }
            self.answers
                .lock()
                .unwrap()
                .remove(&generation)
                .unwrap_or_else(|| Err(Failure::new(FailureKind::Error, "roster answer lost")))
        }
    }

    async fn apply(host: &Host, change: &Value) -> Result<Vec<String>, Failure> {
        if let Some(keys) = change.get("set") {
            let keys: Vec<String> = serde_json::from_value(keys.clone()).unwrap_or_default();
            host.set(&keys).await.map_err(refused)
        } else if let Some(key) = change.get("narrow").and_then(Value::as_str) {
            host.narrow(key).await.map_err(refused)
        } else {
            Err(Failure::new(
                FailureKind::Error,
                format!("not a roster change: {change}"),
            ))
        }
    }

    /// Replays the log's history onto `host` (so it composes what every other instance does),
    /// then follows it.
    pub async fn share(host: Arc<Host>, log: SharedLog) -> Result<(), surface::store::StoreError> {
        let (history, mut later) = log.follow()?;
        let mut generation = 0;
        for change in &history {
            generation += 1;
            let _ = apply(&host, change).await;
        }
        let roster = Roster {
            log,
            answers: Mutex::new(HashMap::new()),
            applied: tokio::sync::watch::channel(generation).0,
        };
        let _ = host.shared.set(roster);
        tokio::spawn(async move {
            loop {
                match later.recv().await {
                    Ok((generation, change)) => {
                        let answer = apply(&host, &change).await;
                        let roster = host.shared.get().expect("set above");
                        roster.answers.lock().unwrap().insert(generation, answer);
                        roster.applied.send_replace(generation);
                    }
                    Err(tokio::sync::broadcast::error::RecvError::Lagged(n)) => {
                        eprintln!("bundle: {n} roster changes were missed; restart this instance");
                    }
                    Err(tokio::sync::broadcast::error::RecvError::Closed) => return,
                }
            }
        });
        Ok(())
    }
}

/// The bundle served over `host`, with tenants `a` and `b` standing.
pub fn start(host: Arc<Host>) -> Result<ServedMcp, CompositionError> {
    let core = Arc::new(Core {
        banner: surface::Cell::new("hello".to_owned()),
    });
    {
        let mut tenants = host.tenants.lock().unwrap();
        for k in ["a", "b"] {
            tenants.insert(k.to_owned(), Arc::new(Tenant::new(k)));
        }
    }
    let factory_host = host.clone();
    let served = McpServer::new("bundle", env!("CARGO_PKG_VERSION"))
        .instructions(surface::mcp::Instructions::dynamic({
            let host = host.clone();
            move || {
                let keys: Vec<String> = host.tenants.lock().unwrap().keys().cloned().collect();
                format!("Tenants standing now: {}.", keys.join(", "))
            }
        }))
        .core(Member::new(CORE))
        .siblings(host.siblings())
        .root_tool(RosterSetTool)
        .root_tool(RosterNarrowTool)
        .client(move || factory_host.clients(&core))
        .start()?;
    let _ = host.served.set(served.clone());
    Ok(served)
}

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    // Warnings to stderr (stdout may carry the protocol); the library installs no subscriber.
    surface::mcp::init_tracing();
    let host = Arc::new(Host::default());
    let served = start(host.clone())?;
    match std::env::args().skip(1).collect::<Vec<_>>().as_slice() {
        [] => served.serve_stdio().await?,
        [flag, addr, redis, url] if flag == "--http" && redis == "--redis" => {
            #[cfg(feature = "redis")]
            {
                let store = surface::store::RedisStore::connect(url, "bundle")?;
                shared::share(host, store.log("roster")?).await?;
                let options = surface::mcp::HttpOptions::new(addr.parse::<std::net::SocketAddr>()?);
                let http = served.serve_http(options).await?;
                eprintln!(
                    "surface-mcp: serving MCP over Streamable HTTP at {} (roster in {url})",
                    http.url()
                );
                http.waiting().await?;
            }
            #[cfg(not(feature = "redis"))]
            {
                let _ = (host, addr, url);
                eprintln!(
                    "bundle: --redis needs the `redis` feature: cargo run --features redis --example bundle -- --http ADDR --redis URL"
                );
                std::process::exit(2);
            }
        }
        [flag, addr] if flag == "--http" => {
            let http = served
                .serve_http(surface::mcp::HttpOptions::new(
                    addr.parse::<std::net::SocketAddr>()?,
                ))
                .await?;
            eprintln!("surface-mcp: serving MCP over Streamable HTTP at {}", http.url());
            http.waiting().await?;
        }
        _ => {
            eprintln!("usage: bundle [--http ADDR [--redis URL]]   (no flag: MCP on stdio)");
            std::process::exit(2);
        }
    }
    Ok(())
}
