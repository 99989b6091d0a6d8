//! Running a built command: who the invocation runs as, its dispatch to the reader commands
//! and the tools, and what it reaches (the roster over one link, dialled once).

use super::command::first_line;
use super::out::{Out, Stop, block_json, change_json, refuse, timed_out, usage, whole_answer};
use super::{BuiltCli, DEFAULT_TIMEOUT, MemberRow, Tool, check, exit, flags, progress};
use crate::audit::Audited;
use crate::blocks::OkContent;
use crate::blocks::{OkImage, ToolOutput};
use crate::bundle::BundleClient;
use crate::bundle::link::{Connection, Dial, Link, LinkedDispatch, Redial};
use crate::dispatch::Dispatch;
use crate::failure::{Failure, FailureKind};
use crate::layer::CallInfo;
use crate::member::{Change, ChangeStream};
use crate::schema;
use crate::scopes::listed;
use crate::spec::{MemberKind, SurfaceSpec};
use crate::table::ToolTarget;
use crate::wire::DialOptions;
use crate::{Principal, Scope};
use clap::ArgMatches;
use futures::StreamExt;
use serde_json::{Map, Value, json};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

/// Who one invocation runs as: the scopes it holds (`None`: it holds every scope).
pub(super) struct Caller(pub(super) Option<Principal>);

impl Caller {
    pub(super) fn reaches(&self, scope: Option<&Scope>) -> bool {
        crate::scopes::reaches(scope, self.0.as_ref())
    }

    /// Refuses `what` unless the caller reaches `scope`: one sentence, the refused exit code.
    pub(super) fn check(&self, what: &str, scope: Option<&Scope>) -> Result<(), Stop> {
        match (scope, &self.0) {
            (Some(scope), Some(p)) if !self.reaches(Some(scope)) => Err(refuse(&Failure::new(
                FailureKind::Refused,
                format!(
                    "{what} is out of reach: it needs the scope {}, and this command holds {}",
                    scope.wire,
                    listed(p.scopes())
                ),
            ))),
            _ => Ok(()),
        }
    }

    /// The options a dial of this invocation takes.
    pub(super) fn dial_options(&self) -> DialOptions {
        match &self.0 {
            Some(p) => DialOptions::default().scopes(p.scopes().to_vec()),
            None => DialOptions::default(),
        }
    }
}

impl BuiltCli {
    /// Runs the command on this process's arguments in a fresh runtime, and answers its exit
    /// code (see [`exit`]).
    ///
    /// The process is the command's: once the arguments parse, its stdout is kept for the
    /// command's data and file descriptor 1 points at stderr, so a handler's `println!` can
    /// neither land before the JSON nor fail on a reader that closed the pipe.
    pub fn main(mut self) -> std::process::ExitCode {
        self.owns_stdout = true;
        let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build();
        match runtime {
            Ok(rt) => std::process::ExitCode::from(rt.block_on(self.run(std::env::args_os()))),
            Err(e) => {
                eprintln!(
                    "{}",
                    json!({"message": format!("no runtime: {e}"), "kind": "error"})
                );
                std::process::ExitCode::from(exit::REFUSED)
            }
        }
    }

    /// Runs the command on `args` (the first is the binary's name) and answers its exit code.
    /// Ctrl-C ends it with [`exit::INTERRUPTED`].
    pub async fn run<I, T>(&self, args: I) -> u8
    where
        I: IntoIterator<Item = T>,
        T: Into<std::ffi::OsString> + Clone,
    {
        let matches = match self.command().try_get_matches_from(args) {
            Ok(m) => m,
            Err(e) => {
                // Help and version go to stdout with 0; usage errors to stderr with 2.
                let _ = e.print();
                return e.exit_code().clamp(0, 255) as u8;
            }
        };
        let out = Out::new(self.owns_stdout);
        let caller = self.caller(&matches);
        tokio::select! {
            code = self.dispatch(&matches, &caller, &out) => code.unwrap_or_else(|Stop(code)| code),
            _ = tokio::signal::ctrl_c() => exit::INTERRUPTED,
        }
    }

    /// The scopes this invocation holds: the command's, narrowed by `--scope`.
    fn caller(&self, matches: &ArgMatches) -> Caller {
        let asked: Option<Vec<&String>> = matches
            .try_get_many::<String>("scope")
            .ok()
            .flatten()
            .map(Iterator::collect);
        let all = || {
            self.declared
                .iter()
                .map(|s| s.wire.to_owned())
                .collect::<Vec<_>>()
        };
        let held = match (&self.scopes, asked) {
            (None, None) => return Caller(None),
            (Some(held), None) => held.clone(),
            (held, Some(asked)) => {
                crate::scopes::narrow(&self.declared, &held.clone().unwrap_or_else(all), &asked)
            }
        };
        Caller(Some(Principal::new("cli", self.name.clone()).with_scopes(held)))
    }

    async fn dispatch(&self, matches: &ArgMatches, caller: &Caller, out: &Out) -> Result<u8, Stop> {
        let (name, sub) = matches.subcommand().expect("a subcommand is required");
        match name {
            "list" => out
                .value(&self.list(sub.get_flag("json"), caller))
                .map(|()| exit::OK),
            "completions" => {
                let shell = match sub.get_one::<String>("shell").map(String::as_str) {
                    Some("zsh") => clap_complete::Shell::Zsh,
                    Some("fish") => clap_complete::Shell::Fish,
                    _ => clap_complete::Shell::Bash,
                };
                let mut script = Vec::new();
                clap_complete::generate(shell, &mut self.command(), self.name.clone(), &mut script);
                out.raw(&script).map(|()| exit::OK)
            }
            "get" | "keys" | "watch" => {
                let member = sub.get_one::<String>("member").expect("required");
                let row = self
                    .members
                    .iter()
                    .find(|m| &m.name == member)
                    .expect("clap checked it");
                caller.check(&format!("member `{}`", row.name), row.scope)?;
                let link = self.link(matches, caller)?;
                let timeout = timeout(matches);
                match name {
                    "keys" => {
                        let keys = link
                            .within(timeout, |d| async move { d.read(row.member).await }, row)
                            .await?;
                        out.value(&keys).map(|()| exit::OK)
                    }
                    "watch" => {
                        let changes = link
                            .within(timeout, |d| async move { d.watch(row.member).await }, row)
                            .await?;
                        follow(changes, out, |c| Some(change_json(c))).await
                    }
                    _ => self.get(row, sub, &link, timeout, out).await,
                }
            }
            tool => {
                let tool = self
                    .tools
                    .iter()
                    .find(|t| t.row.name == tool)
                    .expect("clap checked it");
                caller.check(&format!("tool `{}`", tool.row.name), tool.row.entry.scope)?;
                self.call(tool, sub, matches, caller, out).await
            }
        }
    }

    async fn get(
        &self,
        row: &MemberRow,
        sub: &ArgMatches,
        link: &Reach,
        timeout: Duration,
        out: &Out,
    ) -> Result<u8, Stop> {
        let key = sub.get_one::<String>("key");
        let follows = sub.get_flag("follow");
        match (row.kind, key) {
            (MemberKind::Collection, Some(key)) if !follows => {
                let item = link
                    .within(
                        timeout,
                        |d| async move { d.read_item(row.member, key).await },
                        row,
                    )
                    .await?;
                out.value(&item).map(|()| exit::OK)
            }
            (MemberKind::Collection, _) => Err(usage(format!(
                "`{}` is a collection: `keys {0}` lists its keys, `get {0} <KEY>` reads one item (without --follow)",
                row.name
            ))),
            (_, Some(_)) => Err(usage(format!(
                "`{}` is a {}: it has no items, so takes no key",
                row.name,
                row.kind.word()
            ))),
            (MemberKind::Cell, None) if !follows => {
                let value = link
                    .within(timeout, |d| async move { d.read(row.member).await }, row)
                    .await?;
                out.value(&value).map(|()| exit::OK)
            }
            (kind, None) => {
                // Watch before reading, so no change between the read and the watch is lost.
                let changes = if follows {
                    Some(
                        link.within(timeout, |d| async move { d.watch(row.member).await }, row)
                            .await?,
                    )
                } else {
                    None
                };
                let now = link
                    .within(timeout, |d| async move { d.read(row.member).await }, row)
                    .await?;
                let first: Vec<Value> = match (kind, now) {
                    (MemberKind::Stream, Value::Array(chunks)) => chunks,
                    (_, value) => vec![value],
                };
                for v in &first {
                    out.line(v)?;
                }
                match changes {
                    None => Ok(exit::OK),
                    Some(changes) => {
                        follow(changes, out, |c| match c {
                            Change::Set(v) | Change::Chunk(v) => Some(v),
                            Change::Lagged(n) => Some(json!({"lagged": n})),
                            _ => None,
                        })
                        .await
                    }
                }
            }
        }
    }

    async fn call(
        &self,
        tool: &Tool,
        sub: &ArgMatches,
        matches: &ArgMatches,
        caller: &Caller,
        out: &Out,
    ) -> Result<u8, Stop> {
        let arguments = match sub.get_one::<String>("input") {
            Some(text) => {
                let text = if text == "-" {
                    std::io::read_to_string(std::io::stdin())
                        .map_err(|e| usage(format!("stdin could not be read: {e}")))?
                } else {
                    text.clone()
                };
                match serde_json::from_str::<Value>(&text) {
                    Ok(Value::Object(o)) => o,
                    Ok(other) => return Err(usage(format!("--input must be one JSON object, not {other}"))),
                    Err(e) => return Err(usage(format!("--input is not JSON: {e}"))),
                }
            }
            None => flags::object(&tool.fields, sub),
        };
        let input = &tool.row.entry.input;
        let target = &tool.row.entry.target;
        // A procedure's input is decoded here by the served side's own decoder, into its Rust
        // type: what the served side would refuse on arrival is refused before any dial, in
        // its words, including what the schema cannot say (`4294967296` for a `u32`). Other
        // tools are checked against the schema they advertise (a bespoke or root tool then
        // decodes into its own type, in this process, before its client dials).
        let decode = match target {
            ToolTarget::Procedure { decode, .. } => *decode,
            _ => None,
        };
        if decode.is_none()
            && let Err(m) = check::check(
                &Value::Object(arguments.clone()),
                &Value::Object(input.schema.clone()),
            )
        {
            return Err(refuse(&Failure::new(
                FailureKind::InvalidInput {
                    field: m.field.clone(),
                },
                if m.field.is_empty() {
                    format!("invalid arguments: {}", m.message)
                } else {
                    format!("invalid argument `{}`: {}", m.field, m.message)
                },
            )));
        }
        // Kept for the layers as given (only when there are layers: a copy per call otherwise).
        let given = (!self.layers.is_empty()).then(|| arguments.clone());
        let value = schema::unwrap_input(input, Some(arguments)).map_err(|e| {
            refuse(&Failure::new(
                FailureKind::InvalidInput {
                    field: e.field.clone(),
                },
                format!("invalid argument `{}`: {}", e.field, e.message),
            ))
        })?;
        if let Some(decode) = decode {
            decode(&value).map_err(|f| refuse(&f))?;
        }
        if let Some(given) = &given {
            let who = self.invoker_holding(caller);
            let call = CallInfo::new(&tool.row.name, Some(&who), Some(given));
            if let Err(refusal) = self.layers.admit(&call) {
                return Err(refuse(&Failure::new(FailureKind::Refused, refusal)));
            }
        }
        let link = self.link(matches, caller)?;
        let bundle = link.bundle();
        let audited = Audited::start(self.audit, tool.row.mutates, || value.to_string());
        let answer = progress::drawn(timeout(matches), |cancel| async move {
            target.run(&bundle, value, &cancel).await
        })
        .await
        .unwrap_or_else(|| Err(timed_out(timeout(matches))))
        .map_err(|f| link.judge(f));
        if let Some(audited) = audited {
            audited.answered(Some(&invoker()), &tool.row.name, &answer);
        }
        if sub.get_flag("json") {
            out.value(&whole_answer(&answer))?;
        }
        match answer {
            Ok(output) => {
                if !sub.get_flag("json") {
                    out.value(&match output {
                        ToolOutput::Value(v) => v,
                        ToolOutput::Image(OkImage { detail, .. }) => detail,
                        // The value when the answer has one, else its blocks as MCP carries them.
                        ToolOutput::Content(OkContent { value: Some(v), .. }) => v,
                        ToolOutput::Content(OkContent { blocks, value: None }) => {
                            Value::Array(blocks.iter().map(block_json).collect())
                        }
                    })?;
                }
                Ok(exit::OK)
            }
            Err(f) => Err(refuse(&f)),
        }
    }

    /// The user running the command, holding the scopes this invocation holds: who a layer
    /// sees call.
    fn invoker_holding(&self, caller: &Caller) -> Principal {
        let scopes: Vec<String> = match &caller.0 {
            Some(p) => p.scopes().to_vec(),
            None => self.declared.iter().map(|s| s.wire.to_owned()).collect(),
        };
        invoker().with_scopes(scopes)
    }

    fn list(&self, whole: bool, caller: &Caller) -> Value {
        let tools = || self.tools.iter().filter(|t| caller.reaches(t.row.entry.scope));
        let members = || self.members.iter().filter(|m| caller.reaches(m.scope));
        if whole {
            let tools: Vec<Value> = tools()
                .map(|t| {
                    let mut o = Map::new();
                    o.insert("name".into(), t.row.name.clone().into());
                    if let Some(title) = t.row.title {
                        o.insert("title".into(), title.into());
                    }
                    if !t.row.description.is_empty() {
                        o.insert("description".into(), t.row.description.into());
                    }
                    o.insert(
                        "inputSchema".into(),
                        Value::Object(t.row.entry.input.schema.clone()),
                    );
                    o.insert(
                        "annotations".into(),
                        json!({"readOnlyHint": !t.row.mutates, "destructiveHint": t.row.mutates}),
                    );
                    Value::Object(o)
                })
                .collect();
            let members: Vec<Value> = members()
                .map(|m| {
                    let mut o = Map::new();
                    o.insert("name".into(), m.name.clone().into());
                    o.insert("kind".into(), m.kind.word().into());
                    o.insert("uri".into(), m.uri().into());
                    if !m.doc().is_empty() {
                        o.insert("description".into(), m.doc().into());
                    }
                    Value::Object(o)
                })
                .collect();
            let mut whole = json!({"tools": tools, "members": members});
            // Only when there are any: a roster without them lists as it always did.
            if !self.prompts.is_empty() {
                whole["prompts"] = Value::Array(self.prompts.clone());
            }
            if !self.views.is_empty() {
                whole["views"] = Value::Array(self.views.clone());
            }
            whole
        } else {
            let tools = tools().map(
                |t| json!({"name": t.row.name, "kind": "tool", "description": first_line(t.row.description)}),
            );
            let members = members()
                .map(|m| json!({"name": m.name, "kind": m.kind.word(), "description": first_line(m.doc())}));
            Value::Array(tools.chain(members).collect())
        }
    }

    /// The connection this invocation uses: in-process, or `--socket PATH` dialled on first
    /// use — once: a command that fails its local checks dials nothing, and a bespoke tool
    /// decodes its input before its client dials.
    fn link(&self, matches: &ArgMatches, caller: &Caller) -> Result<Reach, Stop> {
        let socket = self.socket.as_ref().and_then(|f| {
            matches
                .get_one::<PathBuf>("socket")
                .map(|p| (f.clone(), p.clone()))
        });
        let dial: Dial = match (socket, &self.local) {
            (Some((dial, path)), _) => {
                let (options, limit) = (caller.dial_options(), timeout(matches));
                Box::new(move || {
                    let answer = tokio::time::timeout(limit, dial(path.clone(), options.clone()));
                    let path = path.clone();
                    Box::pin(async move {
                        match answer.await {
                            Ok(Ok(mut owned)) => {
                                let dispose = owned.dispose.take();
                                Ok(Connection::new(owned.bundle.clone(), None, dispose))
                            }
                            // The daemon refused this caller (a uid it does not grant): its sentence.
                            Ok(Err(e)) if e.kind == FailureKind::Refused => Err(e),
                            Ok(Err(e)) => Err(unreachable(&path, &e.message)),
                            Err(_) => Err(unreachable(
                                &path,
                                &format!("no greeting within {} s", limit.as_secs()),
                            )),
                        }
                    })
                })
            }
            (None, Some(local)) => {
                let local = local.clone();
                Box::new(move || {
                    let bundle = local();
                    Box::pin(async move { Ok(Connection::new(bundle, None, None)) })
                })
            }
            (None, None) => return Err(usage("no served surface to reach: pass --socket PATH".to_owned())),
        };
        Ok(Reach {
            link: Link::new(Redial::Once, dial),
            specs: self.specs.clone(),
        })
    }
}

/// Who runs the command, as the audit names them: `uid:<n>` (from Linux's `/proc`; `-` where
/// it cannot be read).
pub(super) fn invoker() -> Principal {
    use std::os::unix::fs::MetadataExt;
    let subject =
        std::fs::metadata("/proc/self").map_or_else(|_| "-".to_owned(), |m| format!("uid:{}", m.uid()));
    Principal::new("unix", subject)
}

pub(super) fn timeout(matches: &ArgMatches) -> Duration {
    matches
        .get_one::<u64>("timeout")
        .map_or(DEFAULT_TIMEOUT, |s| Duration::from_secs(*s))
}

/// Prints each change `show` keeps as one JSON line until the feed ends (the served side went
/// away: unreachable) or the reader closes stdout (done).
pub(super) async fn follow(
    mut changes: ChangeStream,
    out: &Out,
    show: impl Fn(Change) -> Option<Value>,
) -> Result<u8, Stop> {
    while let Some(change) = changes.next().await {
        if let Some(v) = show(change) {
            out.line(&v)?;
        }
    }
    Err(refuse(&Failure::new(
        FailureKind::Transport {
            outcome_unknown: false,
        },
        "the served surface ended the watch (it closed or went away)",
    )))
}

pub(super) fn unreachable(path: &Path, why: &str) -> Failure {
    Failure::new(
        FailureKind::Transport {
            outcome_unknown: false,
        },
        format!(
            "the served surface at {} could not be reached: {why}",
            path.display()
        ),
    )
}

/// What one invocation reaches: the surfaces of the roster over one link, dialled once.
pub(super) struct Reach {
    link: Arc<Link>,
    specs: Vec<(Option<String>, &'static SurfaceSpec)>,
}

impl Reach {
    /// A bundle of dispatches over the link: the first request of any dials (once, shared).
    pub(super) fn bundle(&self) -> BundleClient {
        let mut core = None;
        let mut siblings = BTreeMap::new();
        for (owner, spec) in &self.specs {
            let dispatch: Arc<dyn Dispatch> =
                Arc::new(LinkedDispatch::new(spec, owner.clone(), self.link.clone()));
            match owner {
                None => core = Some(dispatch),
                Some(k) => {
                    siblings.insert(k.clone(), dispatch);
                }
            }
        }
        BundleClient::from_dispatches(core, siblings)
    }

    /// A tool's failure as the command reports it: the served side unreachable if it was
    /// (whatever a bespoke tool's `?` made of that), so "cannot reach" exits the same for
    /// every command.
    pub(super) fn judge(&self, f: Failure) -> Failure {
        match self.link.lost() {
            Some(lost) if !matches!(f.kind, FailureKind::Transport { .. }) => lost.clone(),
            _ => f,
        }
    }

    /// One request to `row`'s surface, bounded by `timeout`; a failure is printed and stops.
    pub(super) async fn within<F, Fut, T>(
        &self,
        timeout: Duration,
        request: F,
        row: &MemberRow,
    ) -> Result<T, Stop>
    where
        F: FnOnce(Arc<dyn Dispatch>) -> Fut,
        Fut: std::future::Future<Output = Result<T, Failure>>,
    {
        let run = async {
            let dispatch = self
                .link
                .get()
                .await?
                .bundle
                .dispatch_for(row.owner.as_deref())?
                .clone();
            request(dispatch).await
        };
        match tokio::time::timeout(timeout, run).await {
            Ok(Ok(v)) => Ok(v),
            Ok(Err(f)) => Err(refuse(&f)),
            Err(_) => Err(refuse(&timed_out(timeout))),
        }
    }
}
