#!/usr/bin/env python3
"""Fails when files of surface-runtime/src import each other in a circle.

The graph is file-level: an edge A -> B when A names an item B defines, through `use crate::…`,
`use super::…`, `use self::…`, a child module's path (`use child::…`, `child::f()`), or an inline
`crate::…` / `super::…` / `self::…` path. A path is mapped to the deepest module file that
exists (`x/y.rs`, `x/y/mod.rs`, `x.rs`), then followed through that module's `use` of the next
name (a re-export counts for the module that defines the item, as the compiler resolves it).
A child module using its parent's own items is an edge to the parent's file. Test code is left
out: files named tests.rs, files declared under `#[cfg(test)]`, and items under `#[cfg(test)]`.

Every strongly connected set of two or more files is a circle. The circles listed in
.ci/circles-allowed.txt (one a line, its files separated by spaces) are known and still to be
untied; any other circle fails, and so does an allowed one that no longer occurs (the list only
shrinks). Python 3 standard library only.
"""

import os
import re
import sys

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")
SRC = os.path.join(ROOT, "surface-runtime", "src")
ALLOWED = os.path.join(os.path.dirname(os.path.abspath(__file__)), "circles-allowed.txt")
ITEM = r"(?:fn|struct|enum|trait|type|const|static|mod|union)"


def strip(text):
    """The code without comments, and with string and char literals emptied."""
    out, i, n = [], 0, len(text)
    while i < n:
        c = text[i]
        if text.startswith("//", i):
            j = text.find("\n", i)
            i = n if j < 0 else j
        elif text.startswith("/*", i):
            depth, i = 1, i + 2
            while i < n and depth:
                if text.startswith("/*", i):
                    depth, i = depth + 1, i + 2
                elif text.startswith("*/", i):
                    depth, i = depth - 1, i + 2
                else:
                    i += 1
            out.append(" ")
        elif c == "r" and re.match(r'r#*"', text[i:i + 260]) and not re.match(r"\w", text[i - 1] if i else " "):
            hashes = re.match(r'r(#*)"', text[i:]).group(1)
            end = text.find('"' + hashes, i + 2 + len(hashes))
            i = n if end < 0 else end + 1 + len(hashes)
            out.append('""')
        elif c == '"':
            i += 1
            while i < n and text[i] != '"':
                i += 2 if text[i] == "\\" else 1
            i += 1
            out.append('""')
        elif c == "'":
            m = re.match(r"'(?:\\(?:x[0-9a-fA-F]{2}|u\{[0-9a-fA-F]+\}|.)|[^\\'\n])'", text[i:i + 16])
            if m:
                out.append("' '")
                i += m.end()
            else:
                out.append(c)
                i += 1
        else:
            out.append(c)
            i += 1
    return "".join(out)


def block_end(code, i):
    """The index after the item starting at `i`: its `;`, or the `}` closing its first `{`."""
    depth = 0
    while i < len(code):
        c = code[i]
        if c in "([":
            depth += 1
        elif c in ")]":
            depth -= 1
        elif c == ";" and depth == 0:
            return i + 1
        elif c == "{":
            d = 1
            i += 1
            while i < len(code) and d:
                d += {"{": 1, "}": -1}.get(code[i], 0)
                i += 1
            return i
        i += 1
    return i


def drop_tests(code):
    """The code without its `#[cfg(test)]` items; the names of test-only child module files."""
    test_mods = set()
    while True:
        m = re.search(r"#\s*\[\s*cfg\s*\(\s*test\s*\)\s*\]", code)
        if not m:
            return code, test_mods
        j = m.end()
        while True:  # further attributes on the same item
            a = re.match(r"\s*#\s*\[", code[j:])
            if not a:
                break
            j, depth = j + a.end(), 1
            while j < len(code) and depth:
                depth += {"[": 1, "]": -1}.get(code[j], 0)
                j += 1
        decl = re.match(r"\s*(?:pub(?:\([^)]*\))?\s+)?mod\s+(\w+)\s*;", code[j:])
        if decl:
            test_mods.add(decl.group(1))
        code = code[:m.start()] + " " + code[block_end(code, j):]


def module_of(rel):
    """The module path of a file under src (lib.rs is the crate root)."""
    parts = rel[:-3].split(os.sep)
    if parts[-1] in ("mod", "lib") and (len(parts) > 1 or parts[-1] == "lib"):
        parts = parts[:-1]
    return tuple(parts)


TOKEN = re.compile(r"\w+|::|[{},*;]")


def use_trees(text):
    """(segments, name) for every leaf of a use tree."""
    toks = TOKEN.findall(text)
    pos = [0]

    def parse(prefix):
        leaves, path = [], list(prefix)
        while pos[0] < len(toks):
            t = toks[pos[0]]
            if t == "{":
                pos[0] += 1
                while pos[0] < len(toks) and toks[pos[0]] != "}":
                    if toks[pos[0]] == ",":
                        pos[0] += 1
                        continue
                    leaves += parse(path)
                pos[0] += 1
                return leaves
            if t == "*":
                pos[0] += 1
                return leaves + [(tuple(path), "*")]
            if t in (",", "}", ";"):
                break
            if t == "::":
                pos[0] += 1
                continue
            pos[0] += 1
            if t == "as":
                name = toks[pos[0]] if pos[0] < len(toks) else "_"
                pos[0] += 1
                return leaves + [(tuple(path), name)]
            if t == "self" and path and toks[pos[0] - 2] in ("{", ","):
                continue  # `{self, …}`: the module the group is in
            path.append(t)
        return leaves + ([(tuple(path), path[-1])] if path else [])

    out = []
    while pos[0] < len(toks):
        if toks[pos[0]] in (",", ";"):
            pos[0] += 1
            continue
        before = pos[0]
        out += parse([])
        if pos[0] == before:
            pos[0] += 1
    return out


class Crate:
    def __init__(self, src):
        self.files = {}  # module path -> file (relative)
        self.code = {}  # file -> code without comments and tests
        self.children = {}  # file -> child module names
        self.uses = {}  # file -> [(absolute segments, name, module)]
        self.paths = {}  # file -> [(module, raw segments)]
        test_files = set()
        for dirpath, _, names in os.walk(src):
            for name in names:
                if name.endswith(".rs"):
                    rel = os.path.relpath(os.path.join(dirpath, name), src)
                    if name == "tests.rs":
                        continue
                    self.files[module_of(rel)] = rel
        for mod, rel in list(self.files.items()):
            with open(os.path.join(src, rel), encoding="utf-8") as f:
                code, test_mods = drop_tests(strip(f.read()))
            for t in test_mods:
                test_files.add(mod + (t,))
            self.code[rel] = code
        for t in test_files:
            self.code.pop(self.files.pop(t, None), None)
        for mod, rel in self.files.items():
            self.scan(mod, rel)

    def scan(self, mod, rel):
        code = self.code[rel]
        self.children[rel] = set(re.findall(r"\bmod\s+(\w+)\s*[;{]", code))
        # The module each position is in (inline `mod x { … }` blocks nest).
        spans = []
        for m in re.finditer(r"\bmod\s+(\w+)\s*\{", code):
            spans.append((m.end() - 1, block_end(code, m.end() - 1), m.group(1)))

        def module_at(i):
            inner = [name for (a, b, name) in spans if a <= i < b]
            return mod + tuple(inner)

        uses, paths = [], []
        for m in re.finditer(r"(?<![\w$])use\s+([^;]*);", code):
            if not re.match(r"\s*(?:::|\{|\w)", m.group(1)) or m.group(1).lstrip().startswith("<"):
                continue
            at = module_at(m.start())
            for segs, name in use_trees(m.group(1)):
                segs = self.absolute(at, rel, segs)
                if segs is not None:
                    uses.append((segs, name, at))
        self.uses[rel] = uses
        outside_uses = re.sub(r"(?<![\w$])use\s+[^;]*;", lambda m: " " * len(m.group(0)), code)
        outside_uses = re.sub(r"pub\s*\(\s*in\s+[^)]*\)", "pub", outside_uses)
        for m in re.finditer(r"(?<![\w$:])((?:\w+\s*::\s*)+\w+)", outside_uses):
            segs = tuple(s.strip() for s in m.group(1).split("::"))
            at = module_at(m.start())
            absolute = self.absolute(at, rel, segs)
            if absolute is not None:
                paths.append(absolute)
        self.paths[rel] = paths

    def absolute(self, at, rel, segs):
        """`segs` from the crate root, or None for another crate's path."""
        segs = list(segs)
        if not segs:
            return None
        if segs[0] == "crate":
            return tuple(segs[1:])
        if segs[0] in ("super", "self"):
            base = list(at)
            while segs and segs[0] in ("super", "self"):
                if segs.pop(0) == "super":
                    base = base[:-1]
            return tuple(base + segs)
        if segs[0] in self.children.get(rel, ()) or (tuple(at) + (segs[0],)) in self.files:
            return tuple(at) + tuple(segs)
        return None

    def defines(self, rel, name):
        return re.search(r"\b" + ITEM + r"\s+" + re.escape(name) + r"\b|macro_rules!\s*" + re.escape(name) + r"\b",
                         self.code[rel]) is not None

    def resolve(self, segs, depth=0):
        """The file defining what `segs` names."""
        k = len(segs)
        while k > 0 and tuple(segs[:k]) not in self.files:
            k -= 1
        rel = self.files[tuple(segs[:k])]
        rest = segs[k:]
        if not rest or depth > 16:
            return rel
        name = rest[0]
        if self.defines(rel, name):
            return rel
        for target, alias, _ in self.uses[rel]:
            if alias == name and target and tuple(target) != tuple(segs):
                return self.resolve(tuple(target) + tuple(rest[1:]), depth + 1)
        for target, alias, _ in self.uses[rel]:
            if alias == "*" and target in self.files and tuple(target) != tuple(segs[:k]):
                found = self.resolve(tuple(target) + tuple(rest), depth + 1)
                if found != self.files[tuple(target)] or self.defines(found, name):
                    return found
        return rel

    def edges(self):
        graph = {rel: set() for rel in self.code}
        for rel in self.code:
            for segs, _, _ in self.uses[rel]:
                graph[rel].add(self.resolve(segs))
            for segs in self.paths[rel]:
                graph[rel].add(self.resolve(segs))
            graph[rel].discard(rel)
        return graph


def circles(graph):
    index, low, stack, on, found = {}, {}, [], set(), []
    counter = [0]

    def visit(v):
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on.add(v)
        for w in sorted(graph[v]):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            scc = []
            while True:
                w = stack.pop()
                on.discard(w)
                scc.append(w)
                if w == v:
                    break
            if len(scc) > 1:
                found.append(frozenset(scc))

    sys.setrecursionlimit(100000)
    for v in sorted(graph):
        if v not in index:
            visit(v)
    return found


def allowed():
    known = set()
    if os.path.exists(ALLOWED):
        with open(ALLOWED, encoding="utf-8") as f:
            for line in f:
                line = line.split("#", 1)[0].split()
                if line:
                    known.add(frozenset(line))
    return known


def main():
    graph = Crate(sys.argv[1] if len(sys.argv) > 1 else SRC).edges()
    found = circles(graph)
    known = allowed()
    failed = False
    for scc in sorted(found, key=sorted):
        ok = scc in known
        print(("allowed circle (still to untie): " if ok else "import circle: ") + " ".join(sorted(scc)))
        for a in sorted(scc):
            print(f"    {a} -> {', '.join(sorted(b for b in graph[a] if b in scc))}")
        failed |= not ok
    for gone in sorted(known - set(found), key=sorted):
        print("untied: remove it from .ci/circles-allowed.txt: " + " ".join(sorted(gone)))
        failed = True
    if failed:
        sys.exit(1)
    print(f"no new import circle among {len(graph)} files of surface-runtime/src "
          f"({len(found)} allowed still to untie)")


if __name__ == "__main__":
    main()
