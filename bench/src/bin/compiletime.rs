//! Compile-time cost: build time of a generated crate with N procedures through `#[surface]`
//! (+ `expose!` + an `McpServer`) against the same N tools through rmcp's `#[tool_router]`
//! (+ `#[tool_handler]`), every size and both front ends rebuilt in interleaved rounds, medians.
//!
//! ```text
//! compiletime --dir bench/.cache/compile --surface /work/main --lock bench/Cargo.lock \
//!             --sizes 10,100,1000 --rounds 3 --out results.json
//! ```
//!
//! Dependencies are built once first; each measured build touches only the generated crate
//! (`cargo build -p <crate>`, the dev profile a developer iterates in). Every procedure takes
//! the same input type and answers the same output type, so the figures are the macros'
//! expansion and the code it generates, not serde derives.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Instant;

struct Config {
    dir: PathBuf,
    surface: PathBuf,
    lock: Option<PathBuf>,
    sizes: Vec<usize>,
    rounds: usize,
    out: Option<PathBuf>,
}

fn parse_args() -> Config {
    let mut c = Config {
        dir: PathBuf::from("bench/.cache/compile"),
        surface: PathBuf::from("."),
        lock: None,
        sizes: vec![10, 100, 1000],
        rounds: 3,
        out: None,
    };
    let mut args = std::env::args().skip(1);
    while let Some(a) = args.next() {
        let mut val = || args.next().unwrap_or_else(|| panic!("{a} needs a value"));
        match a.as_str() {
            "--dir" => c.dir = val().into(),
            "--surface" => c.surface = val().into(),
            "--lock" => c.lock = Some(val().into()),
            "--sizes" => {
                c.sizes = val()
                    .split(',')
                    .map(|s| s.parse().expect("--sizes 10,100"))
                    .collect()
            }
            "--rounds" => c.rounds = val().parse().expect("--rounds N"),
            "--out" => c.out = Some(val().into()),
            other => panic!("unknown argument {other:?}"),
        }
    }
    c.surface = std::fs::canonicalize(&c.surface).expect("--surface exists");
    c
}

const PRELUDE: &str = r#"#![allow(dead_code, unused_imports)]
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// The input every procedure takes.
#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]
pub struct Arg {
    /// A number.
    pub n: u32,
}

/// What every procedure answers.
#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]
pub struct Out {
    /// A number.
    pub n: u32,
}
"#;

fn surface_crate(n: usize) -> String {
    let mut s = String::from(PRELUDE);
    s.push_str(
        r#"use std::convert::Infallible;
use std::sync::Arc;
use surface::mcp::{BundleClient, McpServer, Member};
use surface::{Expose, expose, surface};

/// A generated surface.
#[surface]
pub struct Gen {
    /// A counter.
    #[cell]
    pub count: u32,
}

#[surface]
impl Gen {
"#,
    );
    for i in 0..n {
        let _ = write!(
            s,
            "    /// Procedure {i}.\n    #[procedure(\"ns.p{i}\")]\n    pub async fn p{i}(&self, input: Arg) -> Result<Out, Infallible> {{\n        Ok(Out {{ n: input.n + {i} }})\n    }}\n"
        );
    }
    s.push_str("}\n\n/// Every procedure, as a tool.\npub const EXPOSE: Expose<Gen> = expose!(Gen {\n");
    for i in 0..n {
        let _ = writeln!(s, "    \"ns.p{i}\": tool,");
    }
    s.push_str(
        r#"});

/// The MCP server.
pub fn server() -> McpServer {
    let state = Arc::new(Gen { count: surface::Cell::new(0) });
    McpServer::new("gen", "0.0.0")
        .core(Member::new(EXPOSE))
        .client(move || BundleClient::with_core(GenClient::direct(state.clone())))
}
"#,
    );
    s
}

fn rmcp_crate(n: usize) -> String {
    let mut s = String::from(PRELUDE);
    s.push_str(
        r#"use rmcp::handler::server::router::tool::ToolRouter;
use rmcp::handler::server::wrapper::{Json, Parameters};
use rmcp::{ServerHandler, tool, tool_handler, tool_router};
use std::sync::Arc;
use std::sync::atomic::AtomicU32;

/// A generated server.
#[derive(Clone)]
pub struct Gen {
    count: Arc<AtomicU32>,
    tool_router: ToolRouter<Self>,
}

#[tool_router]
impl Gen {
    /// The server.
    pub fn new() -> Self {
        Gen { count: Arc::new(AtomicU32::new(0)), tool_router: Self::tool_router() }
    }

"#,
    );
    for i in 0..n {
        let _ = write!(
            s,
            "    /// Procedure {i}.\n    #[tool(name = \"ns_p{i}\")]\n    pub async fn p{i}(&self, Parameters(input): Parameters<Arg>) -> Json<Out> {{\n        Json(Out {{ n: input.n + {i} }})\n    }}\n"
        );
    }
    s.push_str(
        r#"}

#[tool_handler(router = self.tool_router)]
impl ServerHandler for Gen {}
"#,
    );
    s
}

fn write(path: &Path, text: &str) {
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    // Keep the mtime when nothing changed, so a rerun does not rebuild what it need not.
    if std::fs::read_to_string(path).ok().as_deref() != Some(text) {
        std::fs::write(path, text).unwrap();
    }
}

fn generate(c: &Config) -> Vec<(String, &'static str, usize)> {
    let mut crates = Vec::new();
    for &n in &c.sizes {
        for front in ["surface", "rmcp"] {
            let name = format!("gen-{front}-{n}");
            let deps = match front {
                "surface" => format!(
                    "mcp-surface = {{ path = {:?} }}\nserde = {{ version = \"1\", features = [\"derive\"] }}\nschemars = \"1\"\n",
                    c.surface.display().to_string()
                ),
                _ => "rmcp = { version = \"3.11\", default-features = false, features = [\"server\", \"macros\"] }\nserde = { version = \"1\", features = [\"derive\"] }\nschemars = \"1\"\n".to_owned(),
            };
            write(
                &c.dir.join(&name).join("Cargo.toml"),
                &format!(
                    "[package]\nname = \"{name}\"\nversion = \"0.0.0\"\nedition = \"2024\"\npublish = false\n\n[dependencies]\n{deps}"
                ),
            );
            let src = if front == "surface" {
                surface_crate(n)
            } else {
                rmcp_crate(n)
            };
            write(&c.dir.join(&name).join("src/lib.rs"), &src);
            crates.push((name, front, n));
        }
    }
    let members: Vec<String> = crates.iter().map(|(n, _, _)| format!("{n:?}")).collect();
    write(
        &c.dir.join("Cargo.toml"),
        &format!(
            "[workspace]\nresolver = \"3\"\nmembers = [{}]\n",
            members.join(", ")
        ),
    );
    if let Some(lock) = &c.lock
        && !c.dir.join("Cargo.lock").exists()
    {
        std::fs::copy(lock, c.dir.join("Cargo.lock")).expect("the lockfile copies");
    }
    crates
}

fn cargo(dir: &Path, args: &[&str]) -> f64 {
    let t = Instant::now();
    let status = Command::new(std::env::var("CARGO").unwrap_or_else(|_| "cargo".into()))
        .args(args)
        .current_dir(dir)
        .env("CARGO_TARGET_DIR", dir.join("target"))
        .env_remove("RUSTFLAGS")
        // A whole compile of the crate each time, not an incremental reuse of the last one.
        .env("CARGO_INCREMENTAL", "0")
        .status()
        .expect("cargo runs");
    assert!(status.success(), "cargo {args:?} failed in {}", dir.display());
    t.elapsed().as_secs_f64()
}

fn touch(path: &Path) {
    let f = std::fs::File::options().append(true).open(path).unwrap();
    f.set_modified(std::time::SystemTime::now()).unwrap();
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(|a, b| a.partial_cmp(b).unwrap());
    let m = v.len() / 2;
    if v.len() % 2 == 1 {
        v[m]
    } else {
        (v[m - 1] + v[m]) / 2.0
    }
}

fn main() {
    let c = parse_args();
    let crates = generate(&c);
    eprintln!("compiletime: building the dependencies (and every generated crate) once");
    cargo(&c.dir, &["build", "--quiet", "--workspace"]);
    let mut times: BTreeMap<String, Vec<f64>> = BTreeMap::new();
    for round in 1..=c.rounds {
        let k = crates.len();
        for i in 0..k {
            let (name, _, _) = &crates[(i + round - 1) % k];
            // Bring the dependencies up to date first (the path dependency on surface may have
            // moved since), so the timed build compiles the generated crate alone.
            cargo(&c.dir, &["build", "--quiet", "-p", name]);
            touch(&c.dir.join(name).join("src/lib.rs"));
            let s = cargo(&c.dir, &["build", "--quiet", "-p", name]);
            eprintln!("round {round} {name:<18} {s:>7.2} s");
            times.entry(name.clone()).or_default().push(s);
        }
    }
    let med = |front: &str, n: usize| median(times[&format!("gen-{front}-{n}")].clone());
    // Per-round ratio surface ÷ rmcp, then the median.
    let ratio = |n: usize| {
        let s = &times[&format!("gen-surface-{n}")];
        let r = &times[&format!("gen-rmcp-{n}")];
        median(s.iter().zip(r).map(|(a, b)| a / b).collect())
    };
    let mut out = String::new();
    let _ = writeln!(
        out,
        "compile time of one generated crate (`cargo build -p`, dev profile, dependencies built), {} rounds, medians\n",
        c.rounds
    );
    let _ = writeln!(
        out,
        "| procedures | `#[surface]` s | `#[tool_router]` s | surface ÷ rmcp |"
    );
    let _ = writeln!(out, "|---:|---:|---:|---:|");
    for &n in &c.sizes {
        let _ = writeln!(
            out,
            "| {n} | {:.2} | {:.2} | {:.2} |",
            med("surface", n),
            med("rmcp", n),
            ratio(n)
        );
    }
    let mut slopes = serde_json::Map::new();
    if c.sizes.len() >= 2 {
        let _ = writeln!(
            out,
            "\nmarginal cost per procedure (ms) between sizes, and how it grows:\n"
        );
        let _ = writeln!(
            out,
            "| between | `#[surface]` ms/proc | `#[tool_router]` ms/proc |"
        );
        let _ = writeln!(out, "|---|---:|---:|");
        for w in c.sizes.windows(2) {
            let (a, b) = (w[0], w[1]);
            let per = |front: &str| (med(front, b) - med(front, a)) * 1000.0 / (b - a) as f64;
            let _ = writeln!(out, "| {a} → {b} | {:.1} | {:.1} |", per("surface"), per("rmcp"));
            slopes.insert(
                format!("{a}-{b}"),
                serde_json::json!({"surface_ms_per_proc": per("surface"), "rmcp_ms_per_proc": per("rmcp")}),
            );
        }
    }
    print!("{out}");
    if let Some(path) = &c.out {
        let json = serde_json::json!({
            "rounds": c.rounds, "sizes": c.sizes, "seconds": times, "slopes": slopes, "table": out,
        });
        std::fs::write(path, serde_json::to_string_pretty(&json).unwrap()).unwrap();
    }
}
