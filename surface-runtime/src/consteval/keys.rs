//! `expose!`'s key lookup, run in const evaluation: a key naming nothing stops the build with
//! a sentence that names the surface, the key and the closest declared name.
//!
//! `expose!` emits, per key and spanned at it,
//! `const _: () = if let Some(why) = member_problem(…, "lod") { panic!("{}", why.as_str()) };`
//! so the panic (and rustc's error) is at the user's key, and the spec is the one source of
//! truth for what a surface declares.

use super::rules::str_eq;
use super::sentence::Sentence;
use crate::spec::MemberSpec;

/// Why `key` names no member of a surface called `surface`, if it does not.
///
/// ```
/// # use surface_runtime::{MemberKind, MemberSpec, TypeSpec};
/// # use surface_runtime::__private::keys::member_problem;
/// const T: TypeSpec = TypeSpec { rust: "u32", schema: || serde_json::Value::Null };
/// const MEMBERS: &[MemberSpec] = &[MemberSpec {
///     name: "load", kind: MemberKind::Cell, doc: "", value: T, key: None,
/// }];
/// assert!(member_problem("Ops", MEMBERS, &[], "load").is_none());
/// let why = member_problem("Ops", MEMBERS, &[], "lod").unwrap();
/// assert_eq!(why.as_str(), "`Ops` has no member `lod`: did you mean `load`?");
/// let why = member_problem("Ops", MEMBERS, &[("next_pid", false)], "next_pid").unwrap();
/// assert_eq!(
///     why.as_str(),
///     "`next_pid` is a field of `Ops` without `#[cell]`, `#[collection]`, `#[stream]` or `#[event]`, not a member: its members are `load`"
/// );
/// ```
pub const fn member_problem(
    surface: &str,
    members: &[MemberSpec],
    fields: &[(&str, bool)],
    key: &str,
) -> Option<Sentence> {
    let mut names: [&str; 64] = [""; 64];
    let mut n = 0;
    while n < members.len() && n < names.len() {
        names[n] = members[n].name;
        n += 1;
    }
    let (names, _) = names.split_at(n);
    if contains(names, key) {
        return None;
    }
    let mut f = 0;
    while f < fields.len() {
        let (field, compiled_out) = fields[f];
        if str_eq(field, key) {
            let head = Sentence::new().push("`").push(key);
            if compiled_out {
                return Some(head.push("` is a member of `").push(surface).push(
                    "` compiled out under the current cfg (its `#[cfg]` leaves it out of this build): expose it in a build that has it",
                ));
            }
            let head = head
                .push("` is a field of `")
                .push(surface)
                .push("` without `#[cell]`, `#[collection]`, `#[stream]` or `#[event]`, not a member");
            return Some(if names.is_empty() {
                head.push(": it declares no members")
            } else {
                list(head.push(": its members are "), names, "`")
            });
        }
        f += 1;
    }
    let head = Sentence::new()
        .push("`")
        .push(surface)
        .push("` has no member `")
        .push(key)
        .push("`");
    Some(match closest(key, names) {
        Some(near) => head.push(": did you mean `").push(near).push("`?"),
        None if names.is_empty() => head.push(": it declares no members"),
        None => list(head.push(": its members are "), names, "`"),
    })
}

/// Why member `key` cannot be written `resource(mirror)`: only cells, collections and streams
/// have a read a tool can mirror (an event is heard, not read). A key naming no member is
/// [`member_problem`]'s to report.
///
/// ```
/// # use surface_runtime::{MemberKind, MemberSpec, TypeSpec};
/// # use surface_runtime::__private::keys::mirror_problem;
/// const T: TypeSpec = TypeSpec { rust: "u32", schema: || serde_json::Value::Null };
/// const MEMBERS: &[MemberSpec] = &[
///     MemberSpec { name: "load", kind: MemberKind::Cell, doc: "", value: T, key: None },
///     MemberSpec { name: "saved", kind: MemberKind::Event, doc: "", value: T, key: None },
/// ];
/// assert!(mirror_problem(MEMBERS, "load").is_none());
/// assert_eq!(
///     mirror_problem(MEMBERS, "saved").unwrap().as_str(),
///     "`saved` is an event: only cells, collections and streams are mirrored as tools — write `saved: resource`"
/// );
/// ```
pub const fn mirror_problem(members: &[MemberSpec], key: &str) -> Option<Sentence> {
    let mut i = 0;
    while i < members.len() {
        if str_eq(members[i].name, key) && matches!(members[i].kind, crate::spec::MemberKind::Event) {
            return Some(
                Sentence::new()
                    .push("`")
                    .push(key)
                    .push(
                        "` is an event: only cells, collections and streams are mirrored as tools — write `",
                    )
                    .push(key)
                    .push(": resource`"),
            );
        }
        i += 1;
    }
    None
}

/// Why `key` names no procedure among the names `declared` by a surface called `surface`.
///
/// A declared `""` stands for a name `#[surface]` could not read (and reported): any key is
/// then taken as that procedure's, so the one mistake is not reported again at the key.
///
/// ```
/// # use surface_runtime::__private::keys::procedure_problem;
/// const DECLARED: &[&str] = &["proc.kill", "proc.spawn"];
/// assert!(procedure_problem("Ops", DECLARED, "proc.kill").is_none());
/// // An unsorted list is read whole: only slower.
/// assert!(procedure_problem("Ops", &["proc.spawn", "proc.kill"], "proc.kill").is_none());
/// let why = procedure_problem("Ops", DECLARED, "porc.kill").unwrap();
/// assert_eq!(why.as_str(), "`Ops` has no procedure \"porc.kill\": did you mean \"proc.kill\"?");
/// ```
pub const fn procedure_problem(surface: &str, declared: &[&str], key: &str) -> Option<Sentence> {
    // One lookup per `expose!` key: a binary search (the macro sorts `declared`), so a map of
    // n procedures costs n log n steps of const evaluation, not n².
    if sorted_contains(declared, key) || contains(declared, "") {
        return None;
    }
    undeclared(
        surface,
        "` has no procedure ",
        ("declares", "procedures"),
        declared,
        key,
        "\"",
    )
}

/// "`<surface><has> <q>key<q>: did you mean …?" (or the whole list), when `key` is not one of
/// `declared` (`what`, plural, names them; `verb` is what the surface does with them).
const fn undeclared(
    surface: &str,
    has: &str,
    (verb, what): (&str, &str),
    declared: &[&str],
    key: &str,
    q: &str,
) -> Option<Sentence> {
    if contains(declared, key) {
        return None;
    }
    let head = Sentence::new()
        .push("`")
        .push(surface)
        .push(has)
        .push(q)
        .push(key)
        .push(q);
    Some(match closest(key, declared) {
        Some(near) => head.push(": did you mean ").push(q).push(near).push(q).push("?"),
        None if declared.is_empty() => head.push(": it ").push(verb).push(" no ").push(what),
        None => list(head.push(": its ").push(what).push(" are "), declared, q),
    })
}

/// Why the unquoted `key` cannot be exposed as a tool, blamed on the key: it names no member
/// (a member's `tool` word is [`member_as_tool_problem`]'s). A procedure's key is its quoted
/// name, so a key equal to a procedure's verb (its method's name, usually) or to the tool name
/// it becomes is answered with that name.
///
/// ```
/// # use surface_runtime::__private::keys::unquoted_tool_problem;
/// const DECLARED: &[&str] = &["proc.kill"];
/// let why = unquoted_tool_problem("Ops", &[], DECLARED, "kill").unwrap();
/// assert_eq!(why.as_str(), "a procedure's key is its quoted name: did you mean `\"proc.kill\"`?");
/// let why = unquoted_tool_problem("Ops", &[], DECLARED, "proc_kill").unwrap();
/// assert_eq!(why.as_str(), "a procedure's key is its quoted name: did you mean `\"proc.kill\"`?");
/// ```
pub const fn unquoted_tool_problem(
    surface: &str,
    members: &[MemberSpec],
    declared: &[&str],
    key: &str,
) -> Option<Sentence> {
    if member_problem(surface, members, &[], key).is_none() {
        return None;
    }
    let mut i = 0;
    while i < declared.len() {
        if names_procedure(declared[i], key) {
            return Some(
                Sentence::new()
                    .push("a procedure's key is its quoted name: did you mean `\"")
                    .push(declared[i])
                    .push("\"`?"),
            );
        }
        i += 1;
    }
    let head = Sentence::new()
        .push("`")
        .push(surface)
        .push("` has no member `")
        .push(key)
        .push("`, and a procedure's key is its quoted name, \"<ns>.<verb>\"");
    let mut known = 0;
    let mut i = 0;
    while i < declared.len() {
        if !declared[i].is_empty() {
            known += 1;
        }
        i += 1;
    }
    Some(if known == 0 {
        head
    } else {
        list(head.push(": its procedures are "), declared, "\"")
    })
}

/// Why member `key` cannot be exposed as a tool, blamed on the word `tool`; a key naming no
/// member is [`unquoted_tool_problem`]'s.
pub const fn member_as_tool_problem(members: &[MemberSpec], key: &str) -> Option<Sentence> {
    let mut i = 0;
    while i < members.len() {
        if str_eq(members[i].name, key) {
            return Some(Sentence::new().push("`").push(key).push(
                "` is a member: expose it as `resource` (procedures, \"<ns>.<verb>\", are the tools)",
            ));
        }
        i += 1;
    }
    None
}

/// Whether `key` is procedure `name`'s verb or the tool name it becomes (`proc.kill`: `kill`,
/// `proc_kill`).
const fn names_procedure(name: &str, written: &str) -> bool {
    let name = name.as_bytes();
    let key = written.as_bytes();
    if name.is_empty() {
        return false;
    }
    // The verb: what follows the last dot.
    let mut dot = name.len();
    while dot > 0 && name[dot - 1] != b'.' {
        dot -= 1;
    }
    let (_, verb) = name.split_at(dot);
    if let Ok(verb) = core::str::from_utf8(verb)
        && str_eq(verb, written)
    {
        return true;
    }
    // The tool name: every dot an underscore.
    if name.len() != key.len() {
        return false;
    }
    let mut i = 0;
    while i < name.len() {
        let expected = if name[i] == b'.' { b'_' } else { name[i] };
        if expected != key[i] {
            return false;
        }
        i += 1;
    }
    true
}

/// Why `name` names no scope `surface` declares, if it does not.
///
/// ```
/// # use surface_runtime::__private::keys::scope_problem;
/// assert!(scope_problem("Ops", &["read", "admin"], "read").is_none());
/// let why = scope_problem("Ops", &["read", "admin"], "reed").unwrap();
/// assert_eq!(why.as_str(), "`Ops` declares no scope `reed`: did you mean `read`?");
/// ```
pub const fn scope_problem(surface: &str, declared: &[&str], name: &str) -> Option<Sentence> {
    undeclared(
        surface,
        "` declares no scope ",
        ("declares", "scopes"),
        declared,
        name,
        "`",
    )
}

/// Why a skill cannot use `key` of the expose map written `map`: the map does not expose it
/// as what it is written as (a quoted key is a procedure's, exposed as a tool; a bare one a
/// member's, exposed as a resource). The same lookup and suggestion as `expose!`'s keys, over
/// the keys the map exposes as that kind.
///
/// ```
/// # use surface_runtime::{ExposeEntry, Exposure, TaskSupport};
/// # use surface_runtime::__private::keys::exposed_problem;
/// const ENTRIES: &[ExposeEntry] = &[
///     ExposeEntry { key: "load", exposure: Exposure::Resource, scope: None, task: TaskSupport::Never },
///     ExposeEntry { key: "proc.kill", exposure: Exposure::Tool { mutates: true }, scope: None, task: TaskSupport::Never },
/// ];
/// assert!(exposed_problem("EXPOSE", ENTRIES, "proc.kill", true).is_none());
/// let why = exposed_problem("EXPOSE", ENTRIES, "proc.kil", true).unwrap();
/// assert_eq!(why.as_str(), "`EXPOSE` exposes no tool \"proc.kil\": did you mean \"proc.kill\"?");
/// let why = exposed_problem("EXPOSE", ENTRIES, "load", true).unwrap();
/// assert_eq!(why.as_str(), "`EXPOSE` exposes `load` as a resource: write it unquoted, `load`");
/// ```
pub const fn exposed_problem(
    map: &str,
    entries: &[crate::expose::ExposeEntry],
    key: &str,
    quoted: bool,
) -> Option<Sentence> {
    let mut names: [&str; 64] = [""; 64];
    let mut n = 0;
    let mut i = 0;
    while i < entries.len() && n < names.len() {
        let tool = matches!(entries[i].exposure, crate::expose::Exposure::Tool { .. });
        if tool == quoted {
            names[n] = entries[i].key;
            n += 1;
        } else if str_eq(entries[i].key, key) {
            let head = Sentence::new().push("`").push(map).push("` exposes ");
            return Some(if quoted {
                head.push("`")
                    .push(key)
                    .push("` as a resource: write it unquoted, `")
                    .push(key)
                    .push("`")
            } else {
                head.push("\"")
                    .push(key)
                    .push("\" as a tool: write it quoted, \"")
                    .push(key)
                    .push("\"")
            });
        }
        i += 1;
    }
    let (names, _) = names.split_at(n);
    let (has, what, q) = if quoted {
        ("` exposes no tool ", "tools", "\"")
    } else {
        ("` exposes no resource ", "resources", "`")
    };
    undeclared(map, has, ("exposes", what), names, key, q)
}

/// `` `a`, `b` or `c` `` (as many as fit).
const fn list(mut s: Sentence, names: &[&str], quote: &str) -> Sentence {
    // `""` (a name `#[surface]` could not read) is not listed.
    let mut total = 0;
    let mut i = 0;
    while i < names.len() {
        if !names[i].is_empty() {
            total += 1;
        }
        i += 1;
    }
    let mut n = 0;
    let mut i = 0;
    while i < names.len() {
        if !names[i].is_empty() {
            if n > 0 {
                s = s.push(if n + 1 == total { " or " } else { ", " });
            }
            s = s.push(quote).push(names[i]).push(quote);
            n += 1;
        }
        i += 1;
    }
    s
}

/// Whether `names`, sorted by bytes, holds `key` (a binary search; false for an unsorted list
/// may be wrong, so callers fall back to [`contains`]).
const fn sorted_contains(names: &[&str], key: &str) -> bool {
    let (mut low, mut high) = (0, names.len());
    while low < high {
        let mid = low + (high - low) / 2;
        match str_cmp(names[mid].as_bytes(), key.as_bytes()) {
            std::cmp::Ordering::Equal => return true,
            std::cmp::Ordering::Less => low = mid + 1,
            std::cmp::Ordering::Greater => high = mid,
        }
    }
    false
}

/// Byte order of two strings, in const evaluation.
const fn str_cmp(a: &[u8], b: &[u8]) -> std::cmp::Ordering {
    let mut i = 0;
    while i < a.len() && i < b.len() {
        if a[i] != b[i] {
            return if a[i] < b[i] {
                std::cmp::Ordering::Less
            } else {
                std::cmp::Ordering::Greater
            };
        }
        i += 1;
    }
    if a.len() < b.len() {
        std::cmp::Ordering::Less
    } else if a.len() > b.len() {
        std::cmp::Ordering::Greater
    } else {
        std::cmp::Ordering::Equal
    }
}

const fn contains(names: &[&str], key: &str) -> bool {
    let mut i = 0;
    while i < names.len() {
        if str_eq(names[i], key) {
            return true;
        }
        i += 1;
    }
    false
}

/// The closest of `names` to `key`, if close enough to be a likely typo (the macros' own
/// rule: at most a third of the longer word's length, at least one edit).
const fn closest<'a>(key: &str, names: &[&'a str]) -> Option<&'a str> {
    let mut best: Option<&'a str> = None;
    let mut best_d = usize::MAX;
    let mut i = 0;
    while i < names.len() {
        let d = distance(key.as_bytes(), names[i].as_bytes());
        let longer = if key.len() > names[i].len() {
            key.len()
        } else {
            names[i].len()
        };
        let limit = if longer / 3 > 1 { longer / 3 } else { 1 };
        if d <= limit && d < best_d {
            best = Some(names[i]);
            best_d = d;
        }
        i += 1;
    }
    best
}

/// Optimal string alignment distance (Levenshtein plus adjacent transpositions), over three
/// rolling rows; words longer than the rows are never close.
const fn distance(a: &[u8], b: &[u8]) -> usize {
    const W: usize = 97;
    if a.len() >= W || b.len() >= W {
        return usize::MAX;
    }
    let mut before = [0usize; W];
    let mut prev = [0usize; W];
    let mut cur = [0usize; W];
    let mut j = 0;
    while j <= b.len() {
        prev[j] = j;
        j += 1;
    }
    let mut i = 1;
    while i <= a.len() {
        cur[0] = i;
        let mut j = 1;
        while j <= b.len() {
            let cost = if a[i - 1] == b[j - 1] { 0 } else { 1 };
            let mut d = min(min(prev[j] + 1, cur[j - 1] + 1), prev[j - 1] + cost);
            if i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1] {
                d = min(d, before[j - 2] + 1);
            }
            cur[j] = d;
            j += 1;
        }
        before = prev;
        prev = cur;
        i += 1;
    }
    prev[b.len()]
}

const fn min(a: usize, b: usize) -> usize {
    if a < b { a } else { b }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn suggests_the_close_name_only() {
        assert_eq!(distance(b"porc.kill", b"proc.kill"), 1);
        assert_eq!(distance(b"proc.kil", b"proc.kill"), 1);
        assert_eq!(
            closest("proc.kil", &["proc.kill", "proc.spawn"]),
            Some("proc.kill")
        );
        assert_eq!(closest("zzz", &["proc.kill"]), None);
        let why = procedure_problem("Ops", &["a.b", "c.d"], "x.yz").unwrap();
        assert_eq!(
            why.as_str(),
            "`Ops` has no procedure \"x.yz\": its procedures are \"a.b\" or \"c.d\""
        );
        let why = procedure_problem("Ops", &[], "x.y").unwrap();
        assert_eq!(
            why.as_str(),
            "`Ops` has no procedure \"x.y\": it declares no procedures"
        );
    }
}
