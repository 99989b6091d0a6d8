//! A surface's SPEC lists kinds, names and docs; its generated client calls procedures.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use std::convert::Infallible;
use std::sync::Arc;
use surface::{MemberKind, ToolFailure, surface};

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Process {
    pub pid: u32,
    pub name: String,
}

#[derive(Serialize, Deserialize, JsonSchema)]
pub struct Spawn {
    pub name: String,
}

#[derive(Debug, Serialize, Deserialize, JsonSchema)]
pub struct NoSuchProcess {
    pub pid: u32,
}

/// Processes on one machine.
#[surface]
pub struct Ops {
    /// Every process, by pid.
    #[collection(key = u32)]
    pub processes: Process,
    /// The log.
    #[stream]
    pub log: String,
    /// Published on save.
    #[event]
    pub saved: u32,
    next: std::sync::atomic::AtomicU32,
}

#[surface]
impl Ops {
    /// Start a process.
    #[procedure("proc.spawn")]
    async fn spawn(&self, input: Spawn) -> Result<Process, Infallible> {
        let pid = self.next.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let process = Process {
            pid,
            name: input.name,
        };
        self.processes.upsert(pid, process.clone());
        Ok(process)
    }

    /// Stop a process.
    #[procedure(ns = "proc")]
    async fn kill(&self, pid: u32) -> Result<bool, ToolFailure<NoSuchProcess>> {
        match self.processes.remove(&pid) {
            Some(_) => Ok(true),
            None => Err(ToolFailure::new(
                format!("no process {pid}"),
                NoSuchProcess { pid },
            )),
        }
    }
}

fn main() {
    let spec = Ops::SPEC;
    assert_eq!(spec.name, "Ops");
    assert_eq!(spec.doc, "Processes on one machine.");
    let members: Vec<_> = spec.members.iter().map(|m| (m.name, m.kind, m.doc)).collect();
    assert_eq!(
        members,
        [
            ("processes", MemberKind::Collection, "Every process, by pid."),
            ("log", MemberKind::Stream, "The log."),
            ("saved", MemberKind::Event, "Published on save."),
        ]
    );
    assert_eq!(spec.member("processes").unwrap().key.unwrap().rust, "u32");
    assert_eq!(spec.member("processes").unwrap().value.rust, "Process");
    let procedures: Vec<_> = spec
        .procedures
        .iter()
        .map(|p| (p.name, p.namespace, p.verb, p.doc))
        .collect();
    assert_eq!(
        procedures,
        [
            ("proc.spawn", "proc", "spawn", "Start a process."),
            ("proc.kill", "proc", "kill", "Stop a process."),
        ]
    );
    assert_eq!(spec.procedure("proc.spawn").unwrap().input.unwrap().rust, "Spawn");
    assert_eq!(spec.procedure("proc.spawn").unwrap().output.rust, "Process");
    let json = spec.to_json();
    assert_eq!(json["members"][0]["kind"], "collection");
    assert_eq!(json["procedures"][1]["kind"], "procedure");

    let ops = Ops {
        processes: surface::Collection::default(),
        log: surface::Stream::new(),
        saved: surface::Event::new(),
        next: 7.into(),
    };
    let client = OpsClient::direct(Arc::new(ops));
    let runtime = tokio::runtime::Builder::new_current_thread().build().unwrap();
    runtime.block_on(async {
        let spawned = client.proc().spawn(Spawn { name: "demo".into() }).await.unwrap();
        assert_eq!(
            spawned,
            Process {
                pid: 7,
                name: "demo".into()
            }
        );
        assert_eq!(client.processes().get(&7).await.unwrap(), Some(spawned));
        assert_eq!(client.procedures().proc().kill(7).await.unwrap(), true);
        let refusal = client.proc().kill(7).await.unwrap_err();
        assert_eq!(refusal.message, "no process 7");
    });
}
