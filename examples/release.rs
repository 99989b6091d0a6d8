//! A tool that asks its host before it acts: cutting a release needs the user's confirmation
//! (a form), release notes from the host's model (sampling) and the place to write them (the
//! host's roots). The procedure it calls reports progress through the face-neutral call context.
//!
//! `cargo run --example release` serves it over MCP on stdio. A legacy host (one that opens with `initialize`) is sent
//! `elicitation/create`, `sampling/createMessage` and `roots/list` while the tool waits; a
//! 2026-07-28 host gets one `input_required` result asking all three, and calls again with the
//! answers. A host that cannot elicit gets the tool's refusal (on 2026-07-28, -32021 naming
//! `elicitation`). `publish` sends the user to the registry's sign-in page with a URL-mode
//! elicitation: what they type there never passes through the agent.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use std::convert::Infallible;
use std::sync::Arc;
use surface::ask::{Elicitation, Sample, UrlRequired};
use surface::context::{LogLevel, ToolContext};
use surface::mcp::{CompositionError, McpServer, Member, ServedMcp};
use surface::{Elicit, Expose, Failure, FailureKind, expose, surface, tool};

/// A project's releases.
#[surface]
pub struct Releases {
    /// The version released last.
    #[cell]
    pub version: String,
    /// Every release so far: its notes.
    #[stream]
    pub notes: String,
}

/// A release to cut.
#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]
pub struct Cut {
    /// The new version.
    pub version: String,
    /// Its notes.
    pub notes: String,
}

#[surface]
impl Releases {
    /// Records a release (what the `release` tool does once everyone agreed).
    #[procedure("release.cut")]
    pub async fn cut(&self, input: Cut) -> Result<String, Infallible> {
        // Any code a call runs reaches the call's context: the host hears the steps as progress.
        let ctx = ToolContext::current();
        ctx.progress_with(1.0, Some(2.0), "recording the version").await;
        self.version.set(input.version.clone());
        ctx.progress_with(2.0, Some(2.0), "publishing the notes").await;
        self.notes.push(input.notes);
        Ok(input.version)
    }
}

/// How big a release is.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize, JsonSchema, Elicit)]
#[serde(rename_all = "lowercase")]
pub enum Bump {
    /// Fixes only
    Patch,
    /// New features
    Minor,
    /// Breaking changes
    Major,
}

/// What the user confirms before a release is cut: a flat form (checked by the derive).
#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema, Elicit)]
pub struct Confirm {
    /// How big the release is.
    pub bump: Bump,
    /// Whether to announce it.
    #[serde(default)]
    pub announce: bool,
}

/// Input of `release`.
#[derive(Clone, Debug, Deserialize, JsonSchema)]
pub struct ReleaseArgs {
    /// What changed, in a few words.
    pub changes: String,
}

/// The next version after `version` for a `bump`.
fn next(version: &str, bump: Bump) -> String {
    let mut parts: Vec<u64> = version.split('.').map(|p| p.parse().unwrap_or(0)).collect();
    parts.resize(3, 0);
    let i = match bump {
        Bump::Major => 0,
        Bump::Minor => 1,
        Bump::Patch => 2,
    };
    parts[i] += 1;
    parts[i + 1..].iter_mut().for_each(|p| *p = 0);
    format!("{}.{}.{}", parts[0], parts[1], parts[2])
}

/// Cuts a release: asks the user to confirm its size, the model to write its notes and the host
/// where the project lives, then records it.
#[tool(mutates)]
pub async fn release(
    args: ReleaseArgs,
    client: &ReleasesClient,
    ctx: ToolContext,
) -> Result<String, Failure> {
    let current = client.version().get().await?;
    // One round on 2026-07-28: all three questions go out together.
    let (confirm, notes, roots) = futures::join!(
        ctx.elicit::<Confirm>(format!("Release after {current}: {}?", args.changes))
            .key("confirm"),
        ctx.sample(
            Sample::user(format!("Write one line of release notes for: {}", args.changes)).max_tokens(200)
        )
        .key("notes"),
        ctx.roots().key("roots"),
    );
    let confirm = match confirm? {
        Elicitation::Accept(c) => c,
        other => {
            return Err(Failure::new(
                FailureKind::Refused,
                format!("not released: the user chose to {}", other.action()),
            ));
        }
    };
    let notes = notes?.text.unwrap_or_else(|| args.changes.clone());
    let place = roots?
        .first()
        .map(|r| r.uri.clone())
        .unwrap_or_else(|| "(no root)".into());
    ctx.log(LogLevel::Info, format!("releasing in {place}")).await;
    let version = next(&current, confirm.bump);
    client
        .release()
        .cut(Cut {
            version,
            notes: notes.clone(),
        })
        .await?;
    let announced = if confirm.announce { ", announced" } else { "" };
    Ok(format!(
        "released {} in {place}{announced}: {notes}",
        next(&current, confirm.bump)
    ))
}

/// Publishes the version released last. The registry wants the user signed in on its own page,
/// which neither the agent nor its model may see: a URL-mode elicitation (a host that did not
/// declare URL mode gets the refusal; on 2026-07-28 it is one `input_required` round). With
/// `{"wait": false}` the call does not wait: it ends with the error -32042 naming the page, for
/// the host to show and retry.
#[tool(mutates)]
pub async fn publish(
    args: PublishArgs,
    client: &ReleasesClient,
    ctx: ToolContext,
) -> Result<String, Failure> {
    let version = client.version().get().await?;
    let url = format!("https://registry.example.com/sign-in?package=release&version={version}");
    let message = format!("Sign in to the registry to publish {version}");
    if !args.wait {
        return Err(UrlRequired::new(url, message).into());
    }
    let answer = ctx.elicit_url(url, message).key("sign_in").await?;
    if answer.action != Elicitation::Accept(()) {
        return Err(Failure::new(
            FailureKind::Refused,
            format!("not published: the user chose to {}", answer.action.action()),
        ));
    }
    // A real registry's sign-in callback says when the user finished; here accepting is enough.
    // Telling the host lets it close the page it opened (a host that cannot hear it is fine).
    let _ = ctx.elicitation_complete(&answer.id).await;
    Ok(format!("published {version}"))
}

/// Input of `publish`.
#[derive(Clone, Debug, Deserialize, JsonSchema)]
pub struct PublishArgs {
    /// Whether to wait for the sign-in (the default), or end at once with -32042 naming it.
    #[serde(default = "yes")]
    pub wait: bool,
}

fn yes() -> bool {
    true
}

/// What agents see.
pub const EXPOSE: Expose<Releases> = expose!(Releases {
    version: resource,
    notes: resource,
    "release.cut": tool(mutates),
});

/// The release server over `releases`, started.
pub fn start(releases: Arc<Releases>) -> Result<ServedMcp, CompositionError> {
    McpServer::new("release", env!("CARGO_PKG_VERSION"))
        .instructions("Cut releases with the `release` tool; it asks before it acts.")
        .core(Member::new(EXPOSE).tool(ReleaseTool).tool(PublishTool))
        .client(move || surface::mcp::BundleClient::with_core(ReleasesClient::direct(releases.clone())))
        .start()
}

impl Releases {
    /// A project at `version` with no notes yet.
    pub fn at(version: &str) -> Self {
        Releases {
            version: surface::Cell::new(version.to_owned()),
            notes: surface::Stream::new(),
        }
    }
}

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    surface::mcp::init_tracing();
    start(Arc::new(Releases::at("1.4.2")))?.serve_stdio().await?;
    Ok(())
}
