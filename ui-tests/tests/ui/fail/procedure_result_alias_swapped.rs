//! A local `Result` alias whose arguments are swapped: written `Result<Refusal, Killed>`, the
//! procedure succeeds with `Killed`, not `Refusal`. The client would decode the wrong type, so
//! it is one error at the success type as written.
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use surface::surface;

type Result<E, T> = std::result::Result<T, E>;

#[derive(Debug, Serialize, Deserialize, JsonSchema)]
pub struct Killed {
    pub ok: bool,
}

#[derive(Debug)]
pub struct Refusal;

impl std::fmt::Display for Refusal {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("refused")
    }
}

impl std::error::Error for Refusal {}

#[surface]
pub struct Ops {
    #[cell]
    pub load: u32,
}

#[surface]
impl Ops {
    #[procedure("proc.kill")]
    async fn kill(&self) -> Result<Refusal, Killed> {
        Ok(Killed { ok: true })
    }
}

fn main() {
    let _ = Ops::SPEC;
}
