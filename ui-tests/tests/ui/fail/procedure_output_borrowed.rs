//! A procedure answering a borrowed `&str`: one error at it, naming the owned `String`; the
//! client keeps the method.
use std::convert::Infallible;
use std::sync::Arc;
use surface::{Expose, expose, surface};

#[surface]
pub struct Ops {
    #[cell]
    pub load: u32,
}

#[surface]
impl Ops {
    #[procedure("proc.name")]
    async fn name(&self) -> Result<&str, Infallible> {
        Ok("ops")
    }
}

const EXPOSE: Expose<Ops> = expose!(Ops { "proc.name": tool(read_only) });

fn main() {
    let _ = EXPOSE;
    let client = OpsClient::direct(Arc::new(Ops { load: surface::Cell::new(1) }));
    let _ = async move {
        let _: Result<String, surface::Failure> = client.proc().name().await;
    };
}
