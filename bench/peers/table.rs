//! The process table every Rust peer serves: the same state and behaviour as `examples/ops.rs`
//! (a process table, the load it implies, a log that keeps every line, a diagnostic and a stray
//! line on stderr per spawn), written by hand. Keep it in step with the example's procedures.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::io::Write as _;
use std::sync::Mutex;
use std::sync::atomic::{AtomicU32, Ordering};

/// The machine's load.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Load {
    /// CPU use, 0.0 to 1.0 per core.
    pub cpu: f64,
    /// How many processes run.
    pub procs: u32,
}

/// One process.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Process {
    /// Its id.
    pub pid: u32,
    /// Its name.
    pub name: String,
    /// `running`, `sleeping`, ...
    pub state: String,
}

/// Input of `proc.spawn`.
#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]
pub struct Spawn {
    /// Name of the new process.
    pub name: String,
}

/// Input of `proc.kill`.
#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]
pub struct Kill {
    /// The process to kill.
    pub pid: u32,
}

/// What `proc.kill` answers.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Killed {
    /// Always true.
    pub ok: bool,
}

pub struct Table {
    processes: Mutex<BTreeMap<u32, Process>>,
    load: Mutex<Load>,
    log: Mutex<Vec<String>>,
    next_pid: AtomicU32,
}

impl Table {
    pub fn new() -> Self {
        let running = |pid: u32, name: &str| {
            (
                pid,
                Process {
                    pid,
                    name: name.into(),
                    state: "running".into(),
                },
            )
        };
        Table {
            processes: Mutex::new([running(1, "init"), running(2, "shell")].into_iter().collect()),
            load: Mutex::new(Load { cpu: 0.0, procs: 2 }),
            log: Mutex::new(Vec::new()),
            next_pid: AtomicU32::new(3),
        }
    }

    pub fn spawn(&self, name: String) -> Process {
        // What examples/ops.rs does first: a diagnostic line and a look at its test knob.
        eprintln!("ops: executing proc.spawn {name}");
        if let Some(ms) = std::env::var("OPS_SPAWN_DELAY_MS")
            .ok()
            .and_then(|v| v.parse::<u64>().ok())
        {
            std::thread::sleep(std::time::Duration::from_millis(ms));
        }
        let pid = self.next_pid.fetch_add(1, Ordering::Relaxed);
        let process = Process {
            pid,
            name,
            state: "running".into(),
        };
        let procs = {
            let mut table = self.processes.lock().unwrap();
            table.insert(pid, process.clone());
            table.len() as u32
        };
        self.load.lock().unwrap().procs = procs;
        self.log
            .lock()
            .unwrap()
            .push(format!("spawned {} as {pid}", process.name));
        // The same stray line the ops example prints (there it lands on stderr too).
        let line = format!("spawned {} as {pid}\n", process.name);
        let _ = std::io::stderr().write_all(line.as_bytes());
        process
    }

    pub fn kill(&self, pid: u32) -> Result<Killed, String> {
        let (process, procs) = {
            let mut table = self.processes.lock().unwrap();
            let Some(process) = table.remove(&pid) else {
                return Err(format!("there is no process {pid}"));
            };
            (process, table.len() as u32)
        };
        self.load.lock().unwrap().procs = procs;
        self.log
            .lock()
            .unwrap()
            .push(format!("killed {} ({})", process.pid, process.name));
        Ok(Killed { ok: true })
    }

    pub fn sample(&self) -> Load {
        self.load.lock().unwrap().clone()
    }
}
