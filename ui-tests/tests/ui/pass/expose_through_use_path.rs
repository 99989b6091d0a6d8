//! A surface declared in a module and named through a `use` path in `expose!`.

mod app {
    use schemars::JsonSchema;
    use serde::{Deserialize, Serialize};
    use std::convert::Infallible;
    use surface::surface;

    #[derive(Clone, Serialize, Deserialize, JsonSchema)]
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
        #[procedure("proc.kill")]
        async fn kill(&self, pid: u32) -> Result<u32, Infallible> {
            Ok(pid)
        }
    }
}

use app::Ops;
use surface::{Expose, Exposure, expose};

const EXPOSE: Expose<Ops> = expose!(Ops {
    load: resource,
    "proc.kill": tool(mutates),
});

fn main() {
    let entries = EXPOSE.entries();
    assert_eq!(entries.len(), 2);
    assert_eq!(entries[0].key, "load");
    assert_eq!(entries[0].exposure, Exposure::Resource);
    assert_eq!(entries[1].key, "proc.kill");
    assert_eq!(entries[1].exposure, Exposure::Tool { mutates: true });

    // The full path works too, and so does a `let` binding.
    let by_path = expose!(app::Ops { "proc.kill": tool(read_only) });
    assert_eq!(by_path.get("proc.kill"), Some(Exposure::Tool { mutates: false }));
    assert_eq!(by_path.get("load"), None);
}
