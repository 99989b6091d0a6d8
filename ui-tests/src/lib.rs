//! Surfaces and tools the trybuild cases share, so each case holds only its mistake.
//!
//! `ops`: a surface with a cell `load` and a procedure `proc.kill`, and a tool input `CountArgs`. `tenant`: a surface with a
//! cell `entries`, a procedure `ops.run`, the bespoke tool `HereTool` over its client and its
//! expose map `TENANT`.

/// A surface with one member and one procedure.
pub mod ops {
    use schemars::JsonSchema;
    use serde::{Deserialize, Serialize};
    use std::convert::Infallible;
    use surface::surface;

    /// The input of `proc.kill`.
    #[derive(Serialize, Deserialize, JsonSchema)]
    pub struct Kill {
        /// The process.
        pub pid: u32,
    }

    /// The input of a tool that counts.
    #[derive(Deserialize, JsonSchema)]
    pub struct CountArgs {
        /// The least count.
        pub min: u32,
    }

    /// Processes.
    #[surface]
    pub struct Ops {
        /// The load.
        #[cell]
        pub load: u32,
    }

    #[surface]
    impl Ops {
        /// Stops a process.
        #[procedure("proc.kill")]
        async fn kill(&self, input: Kill) -> Result<u32, Infallible> {
            Ok(input.pid)
        }
    }
}

/// A surface served as a bundle's sibling, with a bespoke tool.
pub mod tenant {
    use std::convert::Infallible;
    use surface::{Expose, expose, surface, tool};

    /// One tenant.
    #[surface]
    pub struct Tenant {
        /// Its entries.
        #[cell]
        pub entries: u32,
    }

    #[surface]
    impl Tenant {
        /// Runs.
        #[procedure("ops.run")]
        async fn run(&self) -> Result<u32, Infallible> {
            Ok(1)
        }
    }

    /// Where am I?
    #[tool(read_only)]
    pub async fn here(client: &TenantClient) -> Result<u32, surface::Failure> {
        client.ops().run().await
    }

    /// The tenant's expose map.
    pub const TENANT: Expose<Tenant> = expose!(Tenant { entries: resource, "ops.run": tool });
}
