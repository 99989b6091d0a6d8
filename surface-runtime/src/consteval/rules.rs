//! The composition rules of a rooted bundle, written once: const-evaluable predicates and one
//! [`Problem`] type whose sentence is built by a `const fn`. Boot-time composition (`table.rs`,
//! every reroster) and `bundle!`'s compile-time check (`consteval/static_bundle.rs`) both call these,
//! so one rule has one function and one wording.
//!
//! ```
//! use surface_runtime::rules::{Problem, sibling_key_ok};
//! const _: () = assert!(sibling_key_ok("tenant-a") && !sibling_key_ok("a b") && !sibling_key_ok(""));
//! let p = Problem::BadSiblingKey { key: "a b" };
//! assert!(p.sentence().as_str().starts_with("sibling key \"a b\" must be non-empty"));
//! ```

pub use super::sentence::Sentence;
use crate::spec::MemberKind;

/// Tool names hosts accept: at most this many characters of `[A-Za-z0-9_.-]`.
pub const MAX_TOOL_NAME: usize = 64;

/// What joins the sentences of a bundle refused for several problems.
pub const PROBLEM_SEPARATOR: &str = "; ";

/// The verbs of the read-only tools mirroring a member (`resource(mirror)`), each joined to
/// the member's key: a cell `<k>_get`, a collection `<k>_keys` and `<k>_get`, a stream
/// `<k>_read`; an event has none.
///
/// ```
/// use surface_runtime::{MemberKind, rules::mirror_verbs};
/// const COLLECTION: &[&str] = mirror_verbs(MemberKind::Collection);
/// assert_eq!(COLLECTION, ["keys", "get"]);
/// ```
pub const fn mirror_verbs(kind: MemberKind) -> &'static [&'static str] {
    match kind {
        MemberKind::Cell => &["get"],
        MemberKind::Collection => &["keys", "get"],
        MemberKind::Stream => &["read"],
        MemberKind::Event => &[],
    }
}

/// Whether `b` may appear in a tool name (`[A-Za-z0-9_.-]`).
pub const fn tool_name_byte_ok(b: u8) -> bool {
    b.is_ascii_alphanumeric() || matches!(b, b'_' | b'.' | b'-')
}

/// Whether a sibling key is non-empty and only `[A-Za-z0-9_-]`: it becomes a URI segment and a
/// tool-name prefix.
pub const fn sibling_key_ok(key: &str) -> bool {
    let bytes = key.as_bytes();
    if bytes.is_empty() {
        return false;
    }
    let mut i = 0;
    while i < bytes.len() {
        if !(bytes[i].is_ascii_alphanumeric() || matches!(bytes[i], b'_' | b'-')) {
            return false;
        }
        i += 1;
    }
    true
}

/// Byte equality of two strings, in const evaluation.
pub const fn str_eq(a: &str, b: &str) -> bool {
    let (a, b) = (a.as_bytes(), b.as_bytes());
    if a.len() != b.len() {
        return false;
    }
    let mut i = 0;
    while i < a.len() {
        if a[i] != b[i] {
            return false;
        }
        i += 1;
    }
    true
}

/// A tool name as a prefix (a sibling key, or empty) and up to two words, joined by `_` — how
/// const evaluation spells `t_ns_verb` without allocating. At boot the whole name is the first
/// part.
#[derive(Clone, Copy, Debug)]
pub struct Name<'a> {
    parts: [&'a str; 3],
}

impl<'a> Name<'a> {
    /// `prefix_a_b`, leaving out empty parts.
    pub const fn new(prefix: Option<&'a str>, a: &'a str, b: &'a str) -> Name<'a> {
        match prefix {
            Some(p) => Name { parts: [p, a, b] },
            None => Name { parts: ["", a, b] },
        }
    }

    /// A name already joined.
    pub const fn whole(name: &'a str) -> Name<'a> {
        Name {
            parts: [name, "", ""],
        }
    }

    /// Its length in bytes.
    pub const fn len(&self) -> usize {
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

    /// Whether it is empty.
    pub const fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The byte at `at` of the joined name.
    pub const fn byte(&self, mut at: usize) -> u8 {
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

    /// Whether both spell the same name.
    pub const fn eq(&self, other: &Name) -> bool {
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

    /// Whether hosts accept it: non-empty, at most [`MAX_TOOL_NAME`] bytes of `[A-Za-z0-9_.-]`.
    pub const fn ok(&self) -> bool {
        let n = self.len();
        if n == 0 || n > MAX_TOOL_NAME {
            return false;
        }
        let mut i = 0;
        while i < n {
            if !tool_name_byte_ok(self.byte(i)) {
                return false;
            }
            i += 1;
        }
        true
    }
}

/// Where a tool comes from.
#[derive(Clone, Copy, Debug)]
pub enum Place<'a> {
    /// The core.
    Core,
    /// The sibling under this key.
    Sibling(&'a str),
    /// The bundle root.
    Root,
}

impl<'a> Place<'a> {
    /// The core (`None`) or a sibling.
    pub const fn of(sibling: Option<&'a str>) -> Place<'a> {
        match sibling {
            Some(k) => Place::Sibling(k),
            None => Place::Core,
        }
    }
}

/// What produced a tool name: `procedure ns.verb on sibling "t"`, `bespoke count on the core`.
#[derive(Clone, Copy, Debug)]
pub struct Origin<'a> {
    /// `"procedure"` or `"bespoke"`.
    pub what: &'a str,
    /// The procedure's or tool's own name.
    pub word: &'a str,
    /// Where it is declared.
    pub place: Place<'a>,
}

impl std::fmt::Display for Origin<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.write(Sentence::new()).as_str())
    }
}

/// One reason a bundle is refused; [`Problem::sentence`] says it, naming what collides and how
/// to fix it.
#[derive(Clone, Copy, Debug)]
pub enum Problem<'a> {
    /// Neither a core nor a sibling.
    Empty,
    /// A sibling key breaks [`sibling_key_ok`].
    BadSiblingKey {
        /// The key.
        key: &'a str,
    },
    /// The same sibling key twice.
    DuplicateSibling {
        /// The key.
        key: &'a str,
    },
    /// A sibling key equal to a core collection: its item URIs would address both.
    SiblingIsCoreCollection {
        /// The key.
        key: &'a str,
    },
    /// A tool or prompt name hosts refuse (see [`Name::ok`]).
    NameLimits {
        /// A tool's name or a prompt's.
        of: NameOf,
        /// The name.
        name: Name<'a>,
        /// What produced it.
        origin: Origin<'a>,
    },
    /// Two tools (or two prompts) with one name.
    NameTwice {
        /// A tool's name or a prompt's.
        of: NameOf,
        /// The name.
        name: Name<'a>,
        /// Its first claimant.
        first: Origin<'a>,
        /// The second.
        second: Origin<'a>,
    },
}

/// Which namespace a name is in: tools and prompts follow the same name rules, each in its own
/// namespace.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum NameOf {
    /// `tools/list`.
    Tool,
    /// `prompts/list`.
    Prompt,
}

impl NameOf {
    /// `"tool name \""` or `"prompt name \""`: how a sentence about it starts.
    const fn opening(self) -> &'static str {
        match self {
            NameOf::Tool => "tool name \"",
            NameOf::Prompt => "prompt name \"",
        }
    }
}

impl Problem<'_> {
    /// The sentence, built in const evaluation (for `bundle!`'s compile error) or at boot.
    pub const fn sentence(&self) -> Sentence {
        self.write(Sentence::new())
    }

    /// Appends the sentence to `s`.
    pub const fn write(&self, s: Sentence) -> Sentence {
        match *self {
            Problem::Empty => {
                s.push("a rooted bundle needs a core or at least one sibling, and this one has neither")
            }
            Problem::BadSiblingKey { key } => s.push("sibling key \"").push(key).push(
                "\" must be non-empty and use only letters, digits, `_` and `-`: it becomes a URI segment and a tool-name prefix",
            ),
            Problem::DuplicateSibling { key } => s
                .push("sibling key \"")
                .push(key)
                .push("\" is given twice — each sibling needs a key of its own"),
            Problem::SiblingIsCoreCollection { key } => s
                .push("sibling key \"")
                .push(key)
                .push("\" equals the core collection \"")
                .push(key)
                .push("\": surface://collections/")
                .push(key)
                .push("/{id} would address both — rename the sibling"),
            Problem::NameLimits { of, name, origin } => origin
                .write(name.write(s.push(of.opening())).push("\" (from "))
                .push(") breaks the client limits of at most ")
                .push_usize(MAX_TOOL_NAME)
                .push(" characters of [A-Za-z0-9_.-] — shorten or rename it"),
            Problem::NameTwice {
                of,
                name,
                first,
                second,
            } => second
                .write(
                    first
                        .write(name.write(s.push(of.opening())).push("\" is produced by both "))
                        .push(" and "),
                )
                .push(" — rename one"),
        }
    }
}

impl std::fmt::Display for Problem<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.sentence().as_str())
    }
}

// What each piece appends to a sentence is written here, by the piece, so a sentence
// (sentence.rs) knows no rule.

impl Problem<'_> {
    /// Appends this problem's sentence to the list `s`, after [`PROBLEM_SEPARATOR`] unless it
    /// is the first: the list a refused bundle names, as boot-time composition joins it.
    pub const fn append_to(&self, s: Sentence) -> Sentence {
        let s = if s.is_empty() {
            s
        } else {
            s.push(PROBLEM_SEPARATOR)
        };
        self.write(s)
    }
}

impl Name<'_> {
    /// Appends this name joined, whole or not at all.
    const fn write(&self, mut s: Sentence) -> Sentence {
        let n = self.len();
        if n > s.room() {
            return s;
        }
        let mut i = 0;
        while i < n {
            s = s.push_byte(self.byte(i));
            i += 1;
        }
        s
    }
}

impl Origin<'_> {
    /// Appends where this name comes from.
    const fn write(&self, s: Sentence) -> Sentence {
        let s = s.push(self.what).push(" ").push(self.word);
        match self.place {
            Place::Sibling(k) => s.push(" on sibling \"").push(k).push("\""),
            Place::Core => s.push(" on the core"),
            Place::Root => s.push(" at the bundle root"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_and_keys_follow_one_rule() {
        assert!(Name::new(Some("t"), "proc", "kill").eq(&Name::whole("t_proc_kill")));
        assert!(Name::whole("proc_kill").ok());
        assert!(!Name::whole("proc kill").ok());
        assert!(!Name::whole("").ok());
        assert!(!Name::whole(&"x".repeat(65)).ok());
        assert!(sibling_key_ok("a_b-1") && !sibling_key_ok("a.b") && !sibling_key_ok("é"));
        let origin = Origin {
            what: "procedure",
            word: "proc.kill",
            place: Place::Sibling("t"),
        };
        let p = Problem::NameLimits {
            of: NameOf::Tool,
            name: Name::whole("t_proc kill"),
            origin,
        };
        assert_eq!(
            p.to_string(),
            "tool name \"t_proc kill\" (from procedure proc.kill on sibling \"t\") breaks the client limits of at most 64 characters of [A-Za-z0-9_.-] — shorten or rename it"
        );
    }
}
