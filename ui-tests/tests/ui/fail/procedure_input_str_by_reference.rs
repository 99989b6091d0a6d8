//! A procedure borrowing its input as `&'a str` (with the lifetime declared for it): one error,
//! at the `&'a str`, saying the owned type to write; the lifetime is not a second mistake.
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
    #[procedure("proc.find")]
    async fn find<'a>(&'a self, input: &'a str) -> Result<u32, Infallible> {
        Ok(input.len() as u32 + self.load.get())
    }
}

const EXPOSE: Expose<Ops> = expose!(Ops { "proc.find": tool(read_only) });

fn main() {
    let _ = EXPOSE;
    let client = OpsClient::direct(Arc::new(Ops { load: surface::Cell::new(1) }));
    let _ = async move {
        let _ = client.proc().find("init".to_string()).await;
    };
}
