//! A procedure may return its `Result` through a type alias: the client still has its method.

use std::convert::Infallible;
use std::sync::Arc;
use surface::surface;

/// What `load.double` answers.
type Doubled = Result<u32, Infallible>;

/// An alias whose first argument is the error, not the success type: the client and the spec
/// must still find `u64`.
type Answer<E> = Result<u64, E>;

#[surface]
pub struct Ops {
    #[cell]
    pub base: u32,
}

#[surface]
impl Ops {
    #[procedure("load.double")]
    async fn double(&self) -> Doubled {
        Ok(self.base.get() * 2)
    }

    #[procedure("load.wide")]
    async fn wide(&self) -> Answer<std::io::Error> {
        Ok(u64::from(self.base.get()) << 33)
    }

    #[procedure("load.plus")]
    async fn plus(&self, n: u32) -> std::io::Result<u32> {
        Ok(self.base.get() + n)
    }
}

fn main() {
    assert_eq!(Ops::SPEC.procedure("load.double").unwrap().output.rust, "Doubled");
    let wide = Ops::SPEC.procedure("load.wide").unwrap();
    assert_eq!(wide.output.rust, "Answer<std::io::Error>");
    // The schema is the success type's, an integer, not the error's.
    assert_eq!((wide.output.schema)()["type"], "integer");
    let client = OpsClient::direct(Arc::new(Ops {
        base: surface::Cell::new(21),
    }));
    let runtime = tokio::runtime::Builder::new_current_thread().build().unwrap();
    runtime.block_on(async {
        assert_eq!(client.load().double().await.unwrap(), 42);
        let wide: u64 = client.load().wide().await.unwrap();
        assert_eq!(wide, 21 << 33);
        assert_eq!(client.procedures().load().plus(1).await.unwrap(), 22);
    });
}
