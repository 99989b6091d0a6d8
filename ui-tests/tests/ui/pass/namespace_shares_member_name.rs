//! A cell `load` and a procedure namespace `load` live side by side on the client.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use std::convert::Infallible;
use std::sync::Arc;
use surface::surface;

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Load {
    pub cpu: f64,
}

#[surface]
pub struct Ops {
    #[cell]
    pub load: Load,
}

#[surface]
impl Ops {
    #[procedure("load.sample")]
    async fn sample(&self) -> Result<Load, Infallible> {
        Ok(Load {
            cpu: self.load.get().cpu * 2.0,
        })
    }
}

fn main() {
    let ops = Ops {
        load: surface::Cell::new(Load { cpu: 0.25 }),
    };
    let client = OpsClient::direct(Arc::new(ops));
    let runtime = tokio::runtime::Builder::new_current_thread().build().unwrap();
    runtime.block_on(async {
        // The member wins the short name ...
        assert_eq!(client.load().get().await.unwrap(), Load { cpu: 0.25 });
        // ... and the namespace is always reachable through `procedures()`.
        assert_eq!(
            client.procedures().load().sample().await.unwrap(),
            Load { cpu: 0.5 }
        );
    });
}
