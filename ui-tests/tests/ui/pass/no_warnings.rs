//! The expansion of every macro is free of warnings, even under `deny(warnings, missing_docs)`
//! and with a private surface whose generated helpers go unused.

#![deny(warnings, missing_docs)]

mod app {
    use std::convert::Infallible;
    use surface::{CancellationToken, Expose, expose, surface, tool};

    /// A private surface.
    #[surface]
    pub(crate) struct Ops {
        /// The load.
        #[cell]
        pub(crate) load: u32,
        /// Never compiled in.
        #[cfg(any())]
        #[stream]
        pub(crate) log: String,
    }

    #[surface]
    impl Ops {
        /// Reads the load.
        #[procedure("load.sample")]
        async fn sample(&self) -> Result<u32, Infallible> {
            Ok(self.load.get())
        }
    }

    /// Resets the load.
    #[tool(mutates)]
    pub(crate) async fn reset(
        client: &OpsClient,
        _cancel: CancellationToken,
    ) -> Result<(), surface::Failure> {
        client.load().set(&0).await
    }

    /// What agents may touch.
    pub(crate) const EXPOSE: Expose<Ops> = expose!(Ops { load: resource, "load.sample": tool(read_only) });
}

fn main() {
    assert_eq!(app::EXPOSE.entries().len(), 2);
    assert_eq!(surface::BespokeTool::descriptor(&app::ResetTool).name, "reset");
    assert_eq!(app::Ops::SPEC.members.len(), 1);
}
