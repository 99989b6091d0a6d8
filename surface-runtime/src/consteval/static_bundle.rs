//! Static bundles: where the roster is known at compile time, its collisions are compile
//! errors. `bundle!` builds the roster and checks it in const evaluation with the same rules
//! and the same sentences the boot-time composition applies: both call [`crate::rules`].
//!
//! The check answers the first problem and its [`Culprit`] — the part of the invocation the
//! user fixes — rather than panicking here: `bundle!` emits one `const` per part, spanned at
//! that part's tokens, which panics with the sentence when the culprit is that part. So the
//! error is one, at the user's token, and names nothing inside this crate.

use super::rules::{Name, NameOf, Origin, Place, Problem, mirror_verbs, sibling_key_ok, str_eq};
use super::sentence::Sentence;
use crate::Expose;
use crate::expose::{ExposeEntry, Exposure};
use crate::spec::{MemberKind, SurfaceSpec};
use crate::surface::Surface;

/// One surface of a static bundle, as const evaluation sees it.
#[doc(hidden)]
#[derive(Clone, Copy)]
pub struct StaticMember {
    pub spec: &'static SurfaceSpec,
    pub entries: &'static [ExposeEntry],
    pub mirrored: &'static [&'static str],
    pub tools: &'static [&'static str],
}

#[doc(hidden)]
pub const fn static_member<S: Surface>(expose: Expose<S>, tools: &'static [&'static str]) -> StaticMember {
    StaticMember {
        spec: S::SPEC_REF,
        entries: expose.entries(),
        mirrored: expose.mirrored(),
        tools,
    }
}

/// A whole static bundle, as const evaluation sees it.
#[doc(hidden)]
#[derive(Clone, Copy)]
pub struct StaticBundle {
    pub core: Option<StaticMember>,
    pub siblings: &'static [(&'static str, StaticMember)],
    pub root: &'static [&'static str],
}

/// The part of a `bundle!` invocation a problem is reported at (indices in the order written).
#[doc(hidden)]
#[derive(Clone, Copy)]
pub enum Culprit {
    /// The invocation as a whole (a bundle with neither core nor sibling).
    Whole,
    /// Sibling `i`'s key.
    Key(usize),
    /// The expose map of the core (`None`) or of sibling `i`: its procedures and mirrors.
    Expose(Option<usize>),
    /// Tool `t` handed to the core (`None`) or to sibling `i`.
    Tool(Option<usize>, usize),
    /// Root tool `r`.
    Root(usize),
}

impl Culprit {
    const fn is(self, other: Culprit) -> bool {
        match (self, other) {
            (Culprit::Whole, Culprit::Whole) => true,
            (Culprit::Key(a), Culprit::Key(b)) | (Culprit::Root(a), Culprit::Root(b)) => a == b,
            (Culprit::Expose(a), Culprit::Expose(b)) => same_place(a, b),
            (Culprit::Tool(a, t), Culprit::Tool(b, u)) => same_place(a, b) && t == u,
            _ => false,
        }
    }
}

const fn same_place(a: Option<usize>, b: Option<usize>) -> bool {
    match (a, b) {
        (None, None) => true,
        (Some(a), Some(b)) => a == b,
        _ => false,
    }
}

/// A tool name, what produced it (for the sentence) and the part of the invocation to blame.
#[derive(Clone, Copy)]
struct NameClaim {
    name: Name<'static>,
    origin: Origin<'static>,
    culprit: Culprit,
}

const MAX_CLAIMS: usize = 512;

/// The claims of a whole bundle, in `tools/list` order.
struct Claims {
    list: [Option<NameClaim>; MAX_CLAIMS],
    n: usize,
    /// More tools than `list` holds.
    overflow: bool,
}

impl Claims {
    const fn push(&mut self, name: Name<'static>, origin: Origin<'static>, culprit: Culprit) {
        if self.n >= MAX_CLAIMS {
            self.overflow = true;
            return;
        }
        self.list[self.n] = Some(NameClaim {
            name,
            origin,
            culprit,
        });
        self.n += 1;
    }

    const fn get(&self, i: usize) -> NameClaim {
        match self.list[i] {
            Some(claim) => claim,
            None => panic!("a claim below n is always set"),
        }
    }

    /// Adds `member`'s tool names in the order boot-time composition lists them (`at`: the
    /// sibling's index, `None` for the core): its exposed procedures, its mirrors, its tools.
    const fn member(&mut self, member: &StaticMember, sibling: Option<&'static str>, at: Option<usize>) {
        let place = Place::of(sibling);
        let mut i = 0;
        while i < member.entries.len() {
            let entry = member.entries[i];
            if let Exposure::Tool { .. } = entry.exposure {
                let mut p = 0;
                while p < member.spec.procedures.len() {
                    let proc = &member.spec.procedures[p];
                    if str_eq(proc.name, entry.key) {
                        let origin = Origin {
                            what: "procedure",
                            word: proc.name,
                            place,
                        };
                        let name = Name::new(sibling, proc.namespace, proc.verb);
                        self.push(name, origin, Culprit::Expose(at));
                    }
                    p += 1;
                }
            }
            i += 1;
        }
        // `resource(mirror)`: the names `table::mirror_tool_names` gives, from the same verbs.
        let mut k = 0;
        while k < member.mirrored.len() {
            let mut m = 0;
            while m < member.spec.members.len() {
                let spec = &member.spec.members[m];
                if str_eq(spec.name, member.mirrored[k]) {
                    let verbs = mirror_verbs(spec.kind);
                    let mut v = 0;
                    while v < verbs.len() {
                        let origin = Origin {
                            what: "the mirror of",
                            word: spec.name,
                            place,
                        };
                        let name = Name::new(sibling, spec.name, verbs[v]);
                        self.push(name, origin, Culprit::Expose(at));
                        v += 1;
                    }
                }
                m += 1;
            }
            k += 1;
        }
        let mut t = 0;
        while t < member.tools.len() {
            self.bespoke(sibling, member.tools[t], place, Culprit::Tool(at, t));
            t += 1;
        }
    }

    /// A bespoke tool `word`, named under `prefix` (a sibling key) if any.
    const fn bespoke(
        &mut self,
        prefix: Option<&'static str>,
        word: &'static str,
        place: Place<'static>,
        culprit: Culprit,
    ) {
        let origin = Origin {
            what: "bespoke",
            word,
            place,
        };
        self.push(Name::new(prefix, word, ""), origin, culprit);
    }

    /// Every tool of `bundle`: the core's, each sibling's, then the root's.
    const fn of(bundle: &StaticBundle) -> Claims {
        let mut claims = Claims {
            list: [None; MAX_CLAIMS],
            n: 0,
            overflow: false,
        };
        if let Some(core) = &bundle.core {
            claims.member(core, None, None);
        }
        let mut s = 0;
        while s < bundle.siblings.len() {
            let (key, member) = &bundle.siblings[s];
            claims.member(member, Some(*key), Some(s));
            s += 1;
        }
        let mut r = 0;
        while r < bundle.root.len() {
            claims.bespoke(None, bundle.root[r], Place::Root, Culprit::Root(r));
            r += 1;
        }
        claims
    }
}

/// Whether `core` exposes a collection called `key` as a resource.
const fn core_collection(core: &StaticMember, key: &str) -> bool {
    let mut e = 0;
    while e < core.entries.len() {
        let entry = core.entries[e];
        let mut m = 0;
        while m < core.spec.members.len() {
            let member = &core.spec.members[m];
            if matches!(member.kind, MemberKind::Collection)
                && matches!(entry.exposure, Exposure::Resource)
                && str_eq(member.name, entry.key)
                && str_eq(member.name, key)
            {
                return true;
            }
            m += 1;
        }
        e += 1;
    }
    false
}

/// Whether `claim` is a bespoke tool whose own name already breaks the limits: `#[tool]` (the
/// only implementor of `StaticTool`) said so at the function's name, so the roster does not
/// say it again at the tool in its list. Boot-time composition still refuses it.
const fn reported_by_tool(claim: &NameClaim) -> bool {
    str_eq(claim.origin.what, "bespoke") && !Name::new(None, claim.origin.word, "").ok()
}

/// The problems blamed on one part of the invocation, as one sentence list.
struct Report {
    at: Culprit,
    text: Sentence,
}

impl Report {
    const fn add(mut self, culprit: Culprit, problem: &Problem) -> Report {
        if culprit.is(self.at) {
            self.text = problem.append_to(self.text);
        }
        self
    }
}

/// Every problem the boot-time composition would refuse `bundle` for, through the same rules
/// and in the same order (`roster_problems`, then `tool_table`), that is blamed on `at`; `None`
/// when there is none. `bundle!` asks once per part of the invocation, each in a const spanned
/// at that part, so each problem is one error at the part to change.
#[doc(hidden)]
pub const fn problem_at(bundle: &StaticBundle, at: Culprit) -> Option<Sentence> {
    let mut report = Report {
        at,
        text: Sentence::new(),
    };
    if bundle.core.is_none() && bundle.siblings.is_empty() {
        report = report.add(Culprit::Whole, &Problem::Empty);
    }
    let mut s = 0;
    while s < bundle.siblings.len() {
        let key = bundle.siblings[s].0;
        if let Some(core) = &bundle.core
            && core_collection(core, key)
        {
            report = report.add(Culprit::Key(s), &Problem::SiblingIsCoreCollection { key });
        }
        if !sibling_key_ok(key) {
            report = report.add(Culprit::Key(s), &Problem::BadSiblingKey { key });
        }
        // At boot the siblings are a map, so a key given twice cannot reach it.
        let mut t = 0;
        while t < s {
            if str_eq(bundle.siblings[t].0, key) {
                report = report.add(Culprit::Key(s), &Problem::DuplicateSibling { key });
                break;
            }
            t += 1;
        }
        s += 1;
    }
    let claims = Claims::of(bundle);
    if claims.overflow {
        let too_large = Sentence::new()
            .push("a static bundle of more than ")
            .push_usize(MAX_CLAIMS)
            .push(" tools is too large to check at compile time: compose it at boot");
        return if Culprit::Whole.is(at) {
            Some(too_large)
        } else {
            None
        };
    }
    // As `table::tool_table`: each name's limits, then each later claimant against the first.
    let mut j = 0;
    while j < claims.n {
        let b = claims.get(j);
        if !b.name.ok() && !reported_by_tool(&b) {
            let problem = Problem::NameLimits {
                of: NameOf::Tool,
                name: b.name,
                origin: b.origin,
            };
            report = report.add(b.culprit, &problem);
        }
        let mut i = 0;
        while i < j {
            let a = claims.get(i);
            if a.name.eq(&b.name) {
                let problem = Problem::NameTwice {
                    of: NameOf::Tool,
                    name: b.name,
                    first: a.origin,
                    second: b.origin,
                };
                report = report.add(b.culprit, &problem);
                break;
            }
            i += 1;
        }
        j += 1;
    }
    if report.text.is_empty() {
        None
    } else {
        Some(report.text)
    }
}

/// The problem, if any, of a tool bound to a view the static roster does not declare.
/// `bundle!` asks once per tool, in a const spanned at the tool, so the error lands on it.
#[doc(hidden)]
pub const fn view_problem(
    tool: &'static str,
    view: Option<&'static str>,
    declared: &[&'static str],
) -> Option<Sentence> {
    let Some(view) = view else { return None };
    let mut i = 0;
    while i < declared.len() {
        if str_eq(declared[i], view) {
            return None;
        }
        i += 1;
    }
    Some(
        Sentence::new()
            .push("tool \"")
            .push(tool)
            .push("\" is bound to the view ")
            .push(view)
            .push(", which this bundle does not declare — add the view's const to `views: [..]` after `root: [..];`"),
    )
}

/// The problem, if any, of two declared views at one URI.
#[doc(hidden)]
pub const fn views_problem(declared: &[&'static str]) -> Option<Sentence> {
    let mut i = 0;
    while i < declared.len() {
        let mut j = i + 1;
        while j < declared.len() {
            if str_eq(declared[i], declared[j]) {
                return Some(
                    Sentence::new()
                        .push("the view ")
                        .push(declared[i])
                        .push(" is declared twice — keep one"),
                );
            }
            j += 1;
        }
        i += 1;
    }
    None
}
