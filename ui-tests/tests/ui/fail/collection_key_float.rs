//! An `f64` key: one error at the key, saying a float is not a key. The collection is then read
//! as keyed by `u64`, so its methods and client still resolve (code passing a float key is
//! rustc's own mismatch; README: rustc's own errors).
use std::convert::Infallible;
use std::sync::Arc;
use surface::{Expose, expose, surface};

#[surface]
pub struct Ops {
    #[collection(key = f64)]
    pub processes: String,
}

#[surface]
impl Ops {
    #[procedure("proc.count")]
    async fn count(&self) -> Result<usize, Infallible> {
        Ok(self.processes.len())
    }
}

const EXPOSE: Expose<Ops> = expose!(Ops { processes: resource, "proc.count": tool });

fn main() {
    let _ = EXPOSE;
    let ops = Arc::new(Ops { processes: surface::Collection::new() });
    let client = OpsClient::direct(ops);
    let _ = async move {
        let _ = client.processes().keys().await;
    };
}
