#!/usr/bin/env python3
"""The house's rules, checked by CI: `python3 tools/house_rules.py [ROOT]`.

1. No two modules of a crate import each other, directly or round a longer
   circle.
2. No file under `crates/*/src` is longer than 1,200 lines.
3. No trait of the storage interface (`crates/store/src/lib.rs` and
   `concerns.rs`) has more than 25 methods.

Every `.rs` file under `crates/*/src` is a module. A file imports another
when it names a path into it (`use super::log::episode_row`,
`crate::recall::vectors::VectorSet`, `use super::{a, b::c}`). A module and
the modules inside it (`sqlite/mod.rs` and `sqlite/log.rs`) may name each
other: a parent declares its children and a child reaches its parent's
shared items, and that is not a circle. Between any other two modules the
arrows must run one way.

Paths are read as text: a path inside a string or a comment is skipped, a
glob (`use super::x::*`) counts as an import of `x`.
"""

import os
import re
import sys

PATH = re.compile(r"\b(crate|super|self)((?:::\w+)+)")
USE = re.compile(r"^\s*(?:pub(?:\([^)]*\))?\s+)?use\s+([^;]+);", re.M)


def strip(code):
    """The code without comments, strings and char literals."""
    out, i, n = [], 0, len(code)
    while i < n:
        c = code[i]
        if code.startswith("//", i):
            j = code.find("\n", i)
            i = n if j < 0 else j
        elif code.startswith("/*", i):
            j = code.find("*/", i + 2)
            i = n if j < 0 else j + 2
        elif c == "r" and re.match(r'r#*"', code[i:i + 10]) and (i == 0 or not (code[i - 1].isalnum() or code[i - 1] == "_")):
            hashes = re.match(r'r(#*)"', code[i:]).group(1)
            j = code.find('"' + hashes, i + 2 + len(hashes))
            i = n if j < 0 else j + 1 + len(hashes)
            out.append('""')
        elif c == '"':
            j = i + 1
            while j < n and code[j] != '"':
                j += 2 if code[j] == "\\" else 1
            i = j + 1
            out.append('""')
        elif c == "'" and re.match(r"'(\\.|[^\\'])'", code[i:i + 4]):
            i += len(re.match(r"'(\\.[^']*|[^\\'])'", code[i:]).group(0))
        else:
            out.append(c)
            i += 1
    return "".join(out)


def expand(prefix, body):
    """`a::{b, c::{d, e}}` → a::b, a::c::d, a::c::e."""
    body = body.strip()
    m = re.match(r"^(.*?)\{(.*)\}$", body, re.S)
    if not m:
        return [prefix + body]
    head, inner = m.group(1), m.group(2)
    parts, depth, cur = [], 0, ""
    for ch in inner:
        depth += ch == "{"
        depth -= ch == "}"
        if ch == "," and depth == 0:
            parts.append(cur)
            cur = ""
        else:
            cur += ch
    parts.append(cur)
    out = []
    for p in parts:
        if p.strip():
            out += expand(prefix + head, p)
    return out


def module_of(src, path):
    """The module path of a file: src/a/b.rs and src/a/b/mod.rs → [a, b]."""
    rel = os.path.relpath(path, src)[:-3].split(os.sep)
    if rel[-1] in ("mod", "lib", "main"):
        rel = rel[:-1]
    return rel


def file_of(files, mod):
    """The file of the longest prefix of `mod` that is a module."""
    for k in range(len(mod), -1, -1):
        if tuple(mod[:k]) in files:
            return files[tuple(mod[:k])]
    return None


def circles(root):
    found = []
    for crate in sorted(os.listdir(os.path.join(root, "crates"))):
        src = os.path.join(root, "crates", crate, "src")
        if not os.path.isdir(src):
            continue
        files = {}
        for d, _, names in os.walk(src):
            for name in names:
                if name.endswith(".rs"):
                    p = os.path.join(d, name)
                    files.setdefault(tuple(module_of(src, p)), p)
        edges = {p: set() for p in files.values()}
        for mod, p in files.items():
            here = list(mod)
            code = strip(open(p, encoding="utf-8").read())
            paths = []
            for u in USE.finditer(code):
                paths += expand("", re.sub(r"\s+", " ", u.group(1)).split(" as ")[0])
            paths += [m.group(0) for m in PATH.finditer(code)]
            for path in paths:
                segs = [s for s in path.split("::") if s]
                if not segs or segs[0] not in ("crate", "super", "self"):
                    continue
                base = here[:]
                if segs[0] == "crate":
                    base, segs = [], segs[1:]
                else:
                    while segs and segs[0] in ("super", "self"):
                        if segs[0] == "super":
                            base = base[:-1]
                        segs = segs[1:]
                target = file_of(files, base + [s for s in segs if s != "*"])
                if target is None or target == p:
                    continue
                t_mod = module_of(src, target)
                # A module and the modules inside it may name each other.
                if here[:len(t_mod)] == t_mod or t_mod[:len(here)] == here:
                    continue
                edges[p].add(target)
        found += strongly_connected(edges)
    return found


def strongly_connected(edges):
    """Tarjan's components with more than one file."""
    index, low, stack, on, out = {}, {}, [], set(), []
    counter = [0]

    def visit(v):
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on.add(v)
        for w in sorted(edges[v]):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                out.append(sorted(comp))

    sys.setrecursionlimit(10000)
    for v in sorted(edges):
        if v not in index:
            visit(v)
    return [(c, {a: sorted(edges[a] & set(c)) for a in c}) for c in out]


MAX_LINES = 1200
MAX_METHODS = 25


def long_files(root):
    out = []
    for crate in sorted(os.listdir(os.path.join(root, "crates"))):
        src = os.path.join(root, "crates", crate, "src")
        for d, _, names in os.walk(src):
            for name in sorted(names):
                if name.endswith(".rs"):
                    p = os.path.join(d, name)
                    n = sum(1 for _ in open(p, encoding="utf-8"))
                    if n > MAX_LINES:
                        out.append((p, n))
    return out


def wide_traits(root):
    code = ""
    for name in ("lib.rs", "concerns.rs"):
        p = os.path.join(root, "crates", "store", "src", name)
        if os.path.exists(p):
            code += strip(open(p, encoding="utf-8").read()) + "\n"
    out = []
    for m in re.finditer(r"pub trait (\w+)[^{]*\{", code):
        depth, i = 1, m.end()
        while depth:
            depth += {"{": 1, "}": -1}.get(code[i], 0)
            i += 1
        body = code[m.end():i]
        # Methods at the trait's own level (default bodies are skipped).
        level, n = 0, 0
        for t in re.finditer(r"[{}]|\bfn\b", body):
            if t.group(0) == "{":
                level += 1
            elif t.group(0) == "}":
                level -= 1
            elif level == 0:
                n += 1
        if n > MAX_METHODS:
            out.append((m.group(1), n))
    return out


def main():
    root = os.path.abspath(sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(__file__), ".."))
    rel = lambda p: os.path.relpath(p, root)
    bad = 0
    for comp, arrows in circles(root):
        bad += 1
        print(f"import circle: {', '.join(rel(p) for p in comp)}")
        for a, bs in arrows.items():
            for b in bs:
                print(f"  {rel(a)} -> {rel(b)}")
    for p, n in long_files(root):
        bad += 1
        print(f"{rel(p)}: {n} lines, more than {MAX_LINES}")
    for name, n in wide_traits(root):
        bad += 1
        print(f"trait {name}: {n} methods, more than {MAX_METHODS}")
    if bad:
        return 1
    print(f"house rules: no import circle, no file over {MAX_LINES} lines, no store trait over {MAX_METHODS} methods")
    return 0


if __name__ == "__main__":
    sys.exit(main())
