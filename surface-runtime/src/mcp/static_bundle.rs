//! Static bundles: where the roster is known at compile time, its collisions are compile
//! errors. `bundle!` builds the roster and checks it in const evaluation with the same rules
//! (and the same sentences) the boot-time composition applies.
//!
//! The check answers the first problem and its [`Culprit`] — the part of the invocation the
//! user fixes — rather than panicking here: `bundle!` emits one `const` per part, spanned at
//! that part's tokens, which panics with the sentence when the culprit is that part. So the
//! error is one, at the user's token, and names nothing inside this crate.

use crate::bundle::{BundleClient, Member, RootTools, Siblings};
use crate::expose::{ExposeEntry, Exposure};
use crate::rules::str_eq;
use crate::spec::{MemberKind, SurfaceSpec};
use crate::surface::Surface;
use crate::{BespokeTool, Expose};

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

/// A static roster, checked at compile time by `bundle!`; hand it to
/// [`super::McpServer::roster`].
pub struct Roster {
    /// The core.
    pub core: Option<Member>,
    /// The siblings.
    pub siblings: Siblings,
    /// The bundle-root tools.
    pub root: RootTools,
}

impl Roster {
    #[doc(hidden)]
    pub fn __new() -> Self {
        Roster {
            core: None,
            siblings: Siblings::new(),
            root: RootTools::new(),
        }
    }
    #[doc(hidden)]
    pub fn __root<T: BespokeTool<Client = BundleClient>>(mut self, tool: T) -> Self {
        self.root = self.root.with(tool);
        self
    }
}

/// A tool name is a prefix (the sibling key, if any) and up to two words, joined by `_`.
#[derive(Clone, Copy)]
struct Name {
    parts: [&'static str; 3],
}

impl Name {
    const fn new(prefix: Option<&'static str>, a: &'static str, b: &'static str) -> Name {
        match prefix {
            Some(p) => Name { parts: [p, a, b] },
            None => Name { parts: ["", a, b] },
        }
    }

    const fn len(&self) -> usize {
        let mut n = 0;
        let mut i = 0;
        while i < 3 {
            if !self.parts[i].is_empty() {
                if n > 0 {
                    n += 1;
                }
                n += self.parts[i].len();
            }
            i += 1;
        }
        n
    }

    /// The byte at `at` of the joined name.
    const fn byte(&self, mut at: usize) -> u8 {
        let mut i = 0;
        let mut first = true;
        while i < 3 {
            let part = self.parts[i].as_bytes();
            if !part.is_empty() {
                if !first {
                    if at == 0 {
                        return b'_';
                    }
                    at -= 1;
                }
                if at < part.len() {
                    return part[at];
                }
                at -= part.len();
                first = false;
            }
            i += 1;
        }
        0
    }

    const fn eq(&self, other: &Name) -> bool {
        let n = self.len();
        if n != other.len() {
            return false;
        }
        let mut i = 0;
        while i < n {
            if self.byte(i) != other.byte(i) {
                return false;
            }
            i += 1;
        }
        true
    }
}

/// Where a tool comes from.
#[derive(Clone, Copy)]
enum Place {
    Core,
    Sibling(&'static str),
    Root,
}

impl Place {
    const fn of(sibling: Option<&'static str>) -> Place {
        match sibling {
            Some(k) => Place::Sibling(k),
            None => Place::Core,
        }
    }
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

/// A tool name with where it comes from, for the sentence.
#[derive(Clone, Copy)]
struct Claim {
    name: Name,
    /// `"procedure"`, `"bespoke"` or `"the mirror of"`.
    what: &'static str,
    /// The procedure's or tool's own name.
    word: &'static str,
    place: Place,
    culprit: Culprit,
}

/// A problem's sentence, built in const evaluation.
#[doc(hidden)]
pub struct Message {
    buf: [u8; 512],
    len: usize,
}

impl Message {
    const fn new() -> Message {
        Message {
            buf: [0; 512],
            len: 0,
        }
    }
    const fn push(mut self, s: &str) -> Message {
        let bytes = s.as_bytes();
        let mut i = 0;
        while i < bytes.len() && self.len < self.buf.len() {
            self.buf[self.len] = bytes[i];
            self.len += 1;
            i += 1;
        }
        self
    }
    const fn push_name(mut self, name: &Name) -> Message {
        let n = name.len();
        let mut i = 0;
        while i < n && self.len < self.buf.len() {
            self.buf[self.len] = name.byte(i);
            self.len += 1;
            i += 1;
        }
        self
    }
    const fn push_origin(self, c: &Claim) -> Message {
        let m = self.push(c.what).push(" ").push(c.word);
        match c.place {
            Place::Sibling(k) => m.push(" on sibling \"").push(k).push("\""),
            Place::Core => m.push(" on the core"),
            Place::Root => m.push(" at the bundle root"),
        }
    }
    /// The sentence (`push` stops at a byte limit, so a cut character ends it early).
    pub const fn as_str(&self) -> &str {
        let (mut head, _) = self.buf.split_at(self.len);
        loop {
            match core::str::from_utf8(head) {
                Ok(s) => return s,
                Err(e) => head = head.split_at(e.valid_up_to()).0,
            }
        }
    }
}

const MAX_CLAIMS: usize = 512;

/// The sentence for a bundle with more tools than the check holds.
const fn too_large() -> Message {
    Message::new().push(
        "a static bundle of more than 512 tools is too large to check at compile time: compose it at boot",
    )
}

/// Adds `member`'s tool names to `claims` (`at`: the sibling's index, `None` for the core);
/// `None` when they do not fit.
const fn collect(
    claims: &mut [Option<Claim>; MAX_CLAIMS],
    mut n: usize,
    member: &StaticMember,
    sibling: Option<&'static str>,
    at: Option<usize>,
) -> Option<usize> {
    let mut i = 0;
    while i < member.entries.len() {
        let entry = member.entries[i];
        if let Exposure::Tool { .. } = entry.exposure {
            let mut p = 0;
            while p < member.spec.procedures.len() {
                let proc = &member.spec.procedures[p];
                if str_eq(proc.name, entry.key) {
                    if n >= MAX_CLAIMS {
                        return None;
                    }
                    claims[n] = Some(Claim {
                        name: Name::new(sibling, proc.namespace, proc.verb),
                        what: "procedure",
                        word: proc.name,
                        place: Place::of(sibling),
                        culprit: Culprit::Expose(at),
                    });
                    n += 1;
                }
                p += 1;
            }
        }
        i += 1;
    }
    // `resource(mirror)`: the names `table::mirror_tool_names` gives.
    let mut k = 0;
    while k < member.mirrored.len() {
        let mut m = 0;
        while m < member.spec.members.len() {
            let spec = &member.spec.members[m];
            if str_eq(spec.name, member.mirrored[k]) {
                let verbs: &[&str] = match spec.kind {
                    MemberKind::Cell => &["get"],
                    MemberKind::Collection => &["keys", "get"],
                    MemberKind::Stream => &["read"],
                    MemberKind::Event => &[],
                };
                let mut v = 0;
                while v < verbs.len() {
                    if n >= MAX_CLAIMS {
                        return None;
                    }
                    claims[n] = Some(Claim {
                        name: Name::new(sibling, spec.name, verbs[v]),
                        what: "the mirror of",
                        word: spec.name,
                        place: Place::of(sibling),
                        culprit: Culprit::Expose(at),
                    });
                    n += 1;
                    v += 1;
                }
            }
            m += 1;
        }
        k += 1;
    }
    let mut t = 0;
    while t < member.tools.len() {
        if n >= MAX_CLAIMS {
            return None;
        }
        claims[n] = Some(Claim {
            name: Name::new(sibling, member.tools[t], ""),
            what: "bespoke",
            word: member.tools[t],
            place: Place::of(sibling),
            culprit: Culprit::Tool(at, t),
        });
        n += 1;
        t += 1;
    }
    Some(n)
}

/// The sentence of the first problem the boot-time composition would refuse `bundle` for,
/// when `at` is its culprit (`bundle!` asks once per part of the invocation, each spanned at
/// that part).
#[doc(hidden)]
pub const fn problem_at(bundle: &StaticBundle, at: Culprit) -> Option<Message> {
    match first_problem(bundle) {
        Some((culprit, why)) if culprit.is(at) => Some(why),
        _ => None,
    }
}

/// The first problem of `bundle`, with its culprit.
const fn first_problem(bundle: &StaticBundle) -> Option<(Culprit, Message)> {
    if bundle.core.is_none() && bundle.siblings.is_empty() {
        let why = Message::new()
            .push("a rooted bundle needs a core or at least one sibling, and this one has neither");
        return Some((Culprit::Whole, why));
    }
    if let Some(core) = &bundle.core {
        let mut s = 0;
        while s < bundle.siblings.len() {
            let key = bundle.siblings[s].0;
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
                        let why = Message::new()
                            .push("sibling key \"")
                            .push(key)
                            .push("\" equals the core collection \"")
                            .push(key)
                            .push("\": surface://collections/")
                            .push(key)
                            .push("/{id} would address both — rename the sibling");
                        return Some((Culprit::Key(s), why));
                    }
                    m += 1;
                }
                e += 1;
            }
            s += 1;
        }
    }
    let mut claims: [Option<Claim>; MAX_CLAIMS] = [None; MAX_CLAIMS];
    let mut n = 0;
    if let Some(core) = &bundle.core {
        match collect(&mut claims, n, core, None, None) {
            Some(m) => n = m,
            None => return Some((Culprit::Whole, too_large())),
        }
    }
    let mut s = 0;
    while s < bundle.siblings.len() {
        let (key, member) = &bundle.siblings[s];
        match collect(&mut claims, n, member, Some(*key), Some(s)) {
            Some(m) => n = m,
            None => return Some((Culprit::Whole, too_large())),
        }
        s += 1;
    }
    let mut r = 0;
    while r < bundle.root.len() {
        if n >= MAX_CLAIMS {
            return Some((Culprit::Whole, too_large()));
        }
        claims[n] = Some(Claim {
            name: Name::new(None, bundle.root[r], ""),
            what: "bespoke",
            word: bundle.root[r],
            place: Place::Root,
            culprit: Culprit::Root(r),
        });
        n += 1;
        r += 1;
    }
    let mut i = 0;
    while i < n {
        let Some(a) = claims[i] else { unreachable!() };
        if a.name.len() > 64 {
            let why = Message::new()
                .push("tool name \"")
                .push_name(&a.name)
                .push("\" (from ")
                .push_origin(&a)
                .push(") breaks the client limits of at most 64 characters of [A-Za-z0-9_.-] — shorten or rename it");
            return Some((a.culprit, why));
        }
        let mut j = i + 1;
        while j < n {
            let Some(b) = claims[j] else { unreachable!() };
            if a.name.eq(&b.name) {
                let why = Message::new()
                    .push("tool name \"")
                    .push_name(&a.name)
                    .push("\" is produced by both ")
                    .push_origin(&a)
                    .push(" and ")
                    .push_origin(&b)
                    .push(" — rename one");
                return Some((b.culprit, why));
            }
            j += 1;
        }
        i += 1;
    }
    None
}
