//! Expansion snapshots: the ops example (`examples/ops.rs`) expanded by each macro, formatted
//! with prettyplease and compared with `tests/expand/*.rs.snap`.
//!
//! The snapshots are for reading: generated code should look like careful hand-written code.
//! After an intended change, regenerate them with `SURFACE_BLESS=1 cargo test -p surface-macros`
//! and read the diff.
//!
//! The inputs are the example's declarations with the procedure bodies shortened (bodies pass
//! through unchanged, so they only add noise here).

use proc_macro2::TokenStream;
use quote::quote;
use std::path::PathBuf;

/// Formats `tokens` (a whole file) and compares it with `tests/expand/<name>.rs.snap`, or
/// writes it there when `SURFACE_BLESS=1`.
fn check(name: &str, tokens: TokenStream) {
    let file: syn::File = syn::parse2(tokens.clone())
        .unwrap_or_else(|e| panic!("the expansion of {name} is not a file: {e}\n{tokens}"));
    let actual = prettyplease::unparse(&file);
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/expand")
        .join(format!("{name}.rs.snap"));
    if std::env::var_os("SURFACE_BLESS").is_some_and(|v| v == "1") {
        std::fs::create_dir_all(path.parent().expect("a parent")).expect("create tests/expand");
        std::fs::write(&path, &actual).expect("write the snapshot");
        return;
    }
    let expected = std::fs::read_to_string(&path).unwrap_or_else(|e| {
        panic!(
            "cannot read {}: {e}\nrun `SURFACE_BLESS=1 cargo test -p surface-macros` to write it",
            path.display()
        )
    });
    if actual != expected {
        let first = actual
            .lines()
            .zip(expected.lines())
            .position(|(a, e)| a != e)
            .unwrap_or_else(|| actual.lines().count().min(expected.lines().count()));
        panic!(
            "the expansion of {name} changed (first at line {}); if intended, run \
             `SURFACE_BLESS=1 cargo test -p surface-macros` and read the diff of {}\n\n{actual}",
            first + 1,
            path.display()
        );
    }
}

#[test]
fn ops_struct() {
    let item = quote! {
        /// Processes on one machine.
        pub struct Ops {
            /// The machine's load.
            #[cell]
            pub load: Load,
            /// Every process, by pid.
            #[collection(key = u32)]
            pub processes: Process,
            /// The log: every line so far, then each new line.
            #[stream]
            pub log: String,
            /// Published when the process table is saved.
            #[event]
            pub autosave: Saved,
            next_pid: AtomicU32,
        }
    };
    check("ops_struct", crate::expand_surface(TokenStream::new(), item));
}

/// The observer example's struct: derived members are `ReadOnly`, and so are their client
/// accessors.
#[test]
fn observer_struct() {
    let item = quote! {
        /// What an observer may see of ops, and nothing it may change.
        pub struct Observer {
            /// Every process with its verdict (`red`: not running), in pid order.
            #[cell(derived)]
            pub processes: Vec<Verdict>,
            /// The last 100 lines of ops' log, then each new line.
            #[stream(derived)]
            pub log: String,
            /// The machine's load, as ops reports it.
            #[cell(derived)]
            pub load: Load,
            source: Source<OpsClient>,
        }
    };
    check("observer_struct", crate::expand_surface(TokenStream::new(), item));
}

#[test]
fn ops_impl() {
    let item = quote! {
        impl Ops {
            /// Start a process.
            #[procedure("proc.spawn")]
            pub async fn spawn(&self, input: Spawn) -> Result<Process, Infallible> {
                Ok(self.start(input.name))
            }

            /// Stop a process.
            #[procedure("proc.kill")]
            pub async fn kill(&self, input: Kill) -> Result<Killed, ToolFailure<KillRefusal>> {
                self.stop(input.pid)
            }

            /// Change a process's niceness. Never exposed to agents.
            #[procedure("proc.configure")]
            pub async fn configure(&self, input: Configure) -> Result<Killed, ToolFailure> {
                Ok(Killed { ok: true })
            }

            /// The current load.
            #[procedure("load.sample")]
            pub async fn sample(&self) -> Result<Load, Infallible> {
                Ok(self.load.get())
            }
        }
    };
    check("ops_impl", crate::expand_surface(TokenStream::new(), item));
}

#[test]
fn ops_count_tool() {
    let args = quote!(read_only, title = "Count processes");
    let item: syn::ItemFn = syn::parse_quote! {
        /// Count processes, optionally only those in one state.
        pub async fn count(
            args: CountArgs,
            client: &OpsClient,
            _cancel: CancellationToken,
        ) -> Result<u32, surface::Failure> {
            let mut n = 0;
            for pid in client.processes().keys().await? {
                let Some(p) = client.processes().get(&pid).await? else {
                    continue;
                };
                if args.state.as_deref().is_none_or(|s| s == p.state) {
                    n += 1;
                }
            }
            Ok(n)
        }
    };
    check("ops_count_tool", crate::tool::expand(args, item));
}

#[test]
fn ops_expose() {
    let input: crate::expose::ExposeInput = syn::parse_quote! {
        Ops {
            load: resource,
            processes: resource,
            log: resource,
            autosave: resource,
            "proc.spawn": tool,
            "proc.kill": tool(mutates),
            "load.sample": tool(read_only),
        }
    };
    // `expose!` expands to an expression: shown where the example puts it.
    let expr = crate::expose::expand(input);
    check(
        "ops_expose",
        quote! {
            /// What agents may touch: everything but `proc.configure`.
            pub const EXPOSE: Expose<Ops> = #expr;
        },
    );
}
