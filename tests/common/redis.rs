//! `redis-server`s of a test's own (Debian's package): one server, or a local Redis Cluster.
//! Each runs on a free loopback port in a temp dir and is killed (its dir removed) on drop.
//! Without `redis-server` on the PATH a test prints why it skips.

use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// Whether `redis-server` can run here; prints why `test` skips when not.
pub fn installed(test: &str) -> bool {
    let there = Command::new("redis-server")
        .arg("--version")
        .stdout(Stdio::null())
        .status()
        .is_ok();
    if !there {
        println!("SKIP {test}: redis-server is not installed (apt-get install redis-server)");
    }
    there
}

/// A free loopback port (free when asked; the server binds it right after).
pub fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

/// One `redis-server`.
pub struct Redis {
    pub child: Option<Child>,
    pub port: u16,
    dir: PathBuf,
    /// Its own flags, after port, bind and dir.
    flags: Vec<String>,
}

impl Redis {
    /// One with an append-only file fsynced on every write (a restart keeps what was
    /// acknowledged), or prints why not and answers `None` (no `redis-server` installed).
    pub fn start(test: &str) -> Option<Redis> {
        Redis::start_with(test, "always")
    }

    /// [`Redis::start`] with `appendfsync` `fsync` (`always`, `everysec`, `no`).
    pub fn start_with(test: &str, fsync: &str) -> Option<Redis> {
        installed(test).then(|| {
            Redis::launched(
                &["--save", "", "--appendonly", "yes", "--appendfsync", fsync],
                "redis",
            )
        })
    }

    /// A server with `flags` in a new temp dir named after `what`.
    pub fn launched(flags: &[&str], what: &str) -> Redis {
        let port = free_port();
        let dir = std::env::temp_dir().join(format!("surface-{what}-{}-{port}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let mut redis = Redis {
            child: None,
            port,
            dir,
            flags: flags.iter().map(|f| f.to_string()).collect(),
        };
        redis.launch();
        redis
    }

    pub fn launch(&mut self) {
        let child = Command::new("redis-server")
            .args(["--port", &self.port.to_string(), "--bind", "127.0.0.1"])
            .arg("--dir")
            .arg(&self.dir)
            .args(&self.flags)
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("redis-server starts");
        self.child = Some(child);
        let deadline = Instant::now() + Duration::from_secs(10);
        while !self.answers() {
            assert!(Instant::now() < deadline, "redis-server answers PING within 10 s");
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    pub fn answers(&self) -> bool {
        self.command(&["PING"]).is_some_and(|a| a.starts_with("+PONG"))
    }

    /// One command, its raw answer (RESP), or `None` when the server does not answer within 10 s.
    pub fn command(&self, args: &[&str]) -> Option<String> {
        use std::io::{Read, Write};
        let mut s = std::net::TcpStream::connect(("127.0.0.1", self.port)).ok()?;
        s.set_read_timeout(Some(Duration::from_secs(10))).ok()?;
        let mut request = format!("*{}\r\n", args.len());
        for a in args {
            request.push_str(&format!("${}\r\n{a}\r\n", a.len()));
        }
        s.write_all(request.as_bytes()).ok()?;
        let mut buf = vec![0u8; 64 * 1024];
        let n = s.read(&mut buf).ok()?;
        Some(String::from_utf8_lossy(&buf[..n]).into_owned())
    }

    pub fn url(&self) -> String {
        format!("redis://127.0.0.1:{}/", self.port)
    }

    /// Kills it (SIGKILL: what it acknowledged is in its fsynced append-only file).
    pub fn kill(&mut self) {
        if let Some(mut child) = self.child.take() {
            let _ = child.kill();
            let _ = child.wait();
        }
    }

    pub fn restart(&mut self) {
        self.kill();
        self.launch();
    }
}

impl Drop for Redis {
    fn drop(&mut self) {
        self.kill();
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

/// `redis-cli -p port args…`: its output, or `None` when it fails (a node that is down).
pub fn cli(port: u16, args: &[&str]) -> Option<String> {
    let out = Command::new("redis-cli")
        .args(["-p", &port.to_string()])
        .args(args)
        .stderr(Stdio::null())
        .output()
        .ok()?;
    let text = String::from_utf8_lossy(&out.stdout).into_owned();
    (out.status.success() && !text.starts_with("Could not connect")).then_some(text)
}

/// Polls `done` every 100 ms for up to `within`; whether it came true.
pub fn eventually(within: Duration, mut done: impl FnMut() -> bool) -> bool {
    let deadline = Instant::now() + within;
    while Instant::now() < deadline {
        if done() {
            return true;
        }
        std::thread::sleep(Duration::from_millis(100));
    }
    done()
}

/// A local Redis Cluster: three masters, a replica each (`--cluster-replicas 1`), failure
/// detected after two seconds of silence.
pub struct Cluster {
    pub nodes: Vec<Redis>,
}

impl Cluster {
    /// Starts six `redis-server --cluster-enabled yes` and joins them with `redis-cli --cluster
    /// create`; or prints why not and answers `None` (no `redis-server` installed).
    pub fn start(test: &str) -> Option<Cluster> {
        if !installed(test) {
            return None;
        }
        let nodes: Vec<Redis> = (0..6)
            .map(|_| {
                let bus = free_port().to_string();
                let flags = [
                    "--cluster-enabled",
                    "yes",
                    "--cluster-config-file",
                    "nodes.conf",
                    "--cluster-node-timeout",
                    "2000",
                    "--cluster-port",
                    &bus,
                    "--appendonly",
                    "yes",
                    "--save",
                    "",
                    // A replica syncs at once instead of after Redis' default 5 s.
                    "--repl-diskless-sync-delay",
                    "0",
                ];
                Redis::launched(&flags, "redis-cluster")
            })
            .collect();
        let created = Command::new("redis-cli")
            .args(["--cluster", "create"])
            .args(nodes.iter().map(|n| format!("127.0.0.1:{}", n.port)))
            .args(["--cluster-replicas", "1", "--cluster-yes"])
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .status()
            .expect("redis-cli runs");
        assert!(
            created.success(),
            "redis-cli --cluster create joins the six nodes"
        );
        let cluster = Cluster { nodes };
        assert!(
            eventually(Duration::from_secs(60), || cluster.ok()),
            "every node reports cluster_state:ok within 60 s"
        );
        assert!(
            eventually(Duration::from_secs(60), || cluster.synced_replicas() == 3),
            "each master's replica is in sync within 60 s"
        );
        Some(cluster)
    }

    /// Every live node's URL.
    pub fn urls(&self) -> Vec<String> {
        self.nodes.iter().map(Redis::url).collect()
    }

    /// Whether every running node sees the whole cluster serving.
    pub fn ok(&self) -> bool {
        self.nodes
            .iter()
            .filter(|n| n.child.is_some())
            .all(|n| cli(n.port, &["CLUSTER", "INFO"]).is_some_and(|i| i.contains("cluster_state:ok")))
    }

    /// The slot of the hash tag `tag`.
    pub fn slot(&self, tag: &str) -> u16 {
        let text = cli(self.nodes[0].port, &["CLUSTER", "KEYSLOT", tag]).expect("a node answers");
        text.trim().parse().expect("a slot number")
    }

    /// Which node serves `slot` as its master now, as every running node sees it (`None` until
    /// they agree on a live one).
    pub fn master_of(&self, slot: u16) -> Option<usize> {
        let mut seen = None;
        for node in self.nodes.iter().filter(|n| n.child.is_some()) {
            let text = cli(node.port, &["CLUSTER", "NODES"])?;
            let port = text.lines().find_map(|line| {
                let fields: Vec<&str> = line.split_whitespace().collect();
                let flags = *fields.get(2)?;
                let serves = fields.iter().skip(8).any(|range| {
                    let (lo, hi) = range.split_once('-').unwrap_or((range, range));
                    lo.parse::<u16>().is_ok_and(|lo| lo <= slot)
                        && hi.parse::<u16>().is_ok_and(|hi| slot <= hi)
                });
                (flags.contains("master") && !flags.contains("fail") && serves)
                    .then(|| fields[1].split(['@', ':']).nth(1)?.parse::<u16>().ok())?
            })?;
            let at = self.nodes.iter().position(|n| n.port == port)?;
            if seen.is_some_and(|s| s != at) {
                return None;
            }
            seen = Some(at);
        }
        seen.filter(|&at| self.nodes[at].child.is_some())
    }

    /// How many running nodes are replicas with their link to their master up.
    pub fn synced_replicas(&self) -> usize {
        self.nodes
            .iter()
            .filter(|n| n.child.is_some())
            .filter(|n| {
                cli(n.port, &["INFO", "replication"])
                    .is_some_and(|i| i.contains("role:slave") && i.contains("master_link_status:up"))
            })
            .count()
    }

    /// How many replicas the node `at` has connected and in sync.
    pub fn replicas_of(&self, at: usize) -> usize {
        cli(self.nodes[at].port, &["INFO", "replication"]).map_or(0, |info| {
            info.lines()
                .filter(|l| l.starts_with("slave") && l.contains("state=online"))
                .count()
        })
    }
}

/// `surface` with its members (and its counter `counter`) in the Redis at `url`, through a
/// connection and change feed of its own: one instance, as far as the store can tell.
#[cfg(feature = "redis")]
pub fn in_store<S: surface::LiveMembers>(
    url: &str,
    surface: S,
    counter: impl FnOnce(&S) -> (&str, &surface::Counter),
) -> (std::sync::Arc<S>, surface::store::RedisStore) {
    let surface = std::sync::Arc::new(surface);
    let store = surface::store::RedisStore::connect(url, "ops").expect("the store connects");
    store.attach(&surface).expect("the members move into the store");
    let (name, counter) = counter(&surface);
    store
        .bind_counter(name, counter)
        .expect("the counter moves into the store");
    (surface, store)
}

/// `surface_redis_round_trips_total` as `metrics` (the test binary's recorder) renders it.
pub fn round_trips(metrics: &metrics_exporter_prometheus::PrometheusHandle) -> u64 {
    metrics
        .render()
        .lines()
        .find_map(|l| l.strip_prefix("surface_redis_round_trips_total "))
        .map_or(0, |v| v.trim().parse::<u64>().unwrap())
}

/// `ops` built with the `redis` feature (cargo's own build, so the example is fresh).
pub fn ops_binary() -> PathBuf {
    let status = Command::new(env!("CARGO"))
        .args(["build", "--quiet", "--features", "redis", "--example", "ops"])
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .status()
        .expect("cargo runs");
    assert!(status.success(), "ops builds with the redis feature");
    std::env::current_exe()
        .unwrap()
        .parent()
        .unwrap()
        .parent()
        .unwrap()
        .join("examples/ops")
}
