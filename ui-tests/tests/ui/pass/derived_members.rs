//! Derived members of every kind compile free of warnings, are filled from a source, read
//! through the member and the typed client, and are served like any other member.

#![deny(warnings, missing_docs)]

use std::collections::BTreeMap;
use std::convert::Infallible;
use std::sync::Arc;
use surface::project::{Relayed, Source};
use surface::{MemberKind, surface};

/// The source.
#[surface]
pub struct Ops {
    /// The load.
    #[cell]
    pub load: u32,
    /// Processes by pid.
    #[collection(key = u32)]
    pub processes: String,
    /// The log.
    #[stream]
    pub log: String,
    /// Autosaves.
    #[event]
    pub saved: u32,
}

#[surface]
impl Ops {
    /// Reads the load.
    #[procedure("load.sample")]
    async fn sample(&self) -> Result<u32, Infallible> {
        Ok(self.load.get())
    }
}

/// The projection.
#[surface]
pub struct View {
    /// Twice the load.
    #[cell(derived)]
    pub double: u32,
    /// Names in upper case.
    #[collection(key = u32, derived)]
    pub names: String,
    /// The last line.
    #[stream(derived)]
    pub log: String,
    /// Autosaves.
    #[event(derived)]
    pub saved: u32,
    /// How many processes.
    #[cell(derived)]
    pub count: usize,
    source: Source<OpsClient>,
}

#[surface]
impl View {
    /// The load, on the source.
    #[procedure("load.sample")]
    async fn sample(&self) -> Result<u32, Relayed> {
        Ok(self.source.client().procedures().load().sample().await?)
    }
}

#[tokio::main(flavor = "current_thread")]
async fn main() {
    let ops = Arc::new(Ops {
        load: surface::Cell::new(2),
        processes: [(1, "init".to_string())].into_iter().collect(),
        log: surface::Stream::new(),
        saved: surface::Event::new(),
    });
    ops.log.push("a".into());
    ops.log.push("b".into());
    let source = Source::new(OpsClient::direct(ops.clone()));
    let view = Arc::new(View {
        double: source.cell(OpsClient::load, |n: u32| n * 2).await.unwrap(),
        names: source.collection(OpsClient::processes, |_, n: String| n.to_uppercase()).await.unwrap(),
        log: source.stream(OpsClient::log, 1, |l: String| l).await.unwrap(),
        saved: source.event(OpsClient::saved, |n: u32| n).await.unwrap(),
        count: source.cell_of(OpsClient::processes, |t: &BTreeMap<u32, String>| t.len()).await.unwrap(),
        source,
    });
    assert_eq!(view.double.value(), 4);
    assert_eq!(view.names.get(&1).as_deref(), Some("INIT"));
    assert_eq!(view.log.snapshot(), ["b"]);
    assert_eq!(view.count.value(), 1);
    assert_eq!(View::SPEC.member("names").unwrap().kind, MemberKind::Collection);
    let client = ViewClient::direct(view.clone());
    assert_eq!(client.double().value().await.unwrap(), 4);
    assert_eq!(client.names().get(&1).await.unwrap().as_deref(), Some("INIT"));
    assert_eq!(client.log().snapshot().await.unwrap(), ["b"]);
    assert!(client.saved().watch().await.is_ok());
    assert_eq!(client.procedures().load().sample().await.unwrap(), 2);
}
