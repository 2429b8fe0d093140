#!/usr/bin/env python3
"""Layout lint: the folder dependency graph and the file-size rule.

Checks, over the repository's C sources outside tests/:
  1. every `#include "x.h"` edge between folders is one that
     docs/architecture.md declares (its ```deps block: "folder -> a b c"),
     and every declared arrow is used by at least one include;
  2. the declared graph has no cycle;
  3. no non-test C source or header is over MAX_LINES lines;
  4. the fast path does not log: no log or print call in the lcores' loop,
     the app, the dispatch, nor in the folders below them (docs/logs.md).

A folder with no line of its own in the deps block is a part of the
nearest folder above it that has one (control/admin and control/member are
parts of control: one library, one set of arrows).

Usage: layout.py REPO_ROOT [--print]   (--print: the graph found, as a deps block)
Exit 0 when clean; 1 with one line per finding on stderr.
"""
import os
import re
import sys

MAX_LINES = 800
# The per-packet code: logging there would cost a system call per event.
FAST_PATH = ("dataplane/sk_lcore.c", "dataplane/sk_app", "dataplane/sk_dispatch.c",
             "net/", "http/", "dataplane/seckill/", "stock/")
LOG_CALL = re.compile(r"\b(sk_v?logf?|printf|fprintf|vfprintf|puts|fputs|perror|RTE_LOG|rte_log)\s*\(")
SKIP_DIRS = {".git", "build", "tests", "node_modules"}
INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"', re.M)


def folder_of(root, path):
    """The module folder of a file: its directory relative to root."""
    return os.path.relpath(os.path.dirname(path), root)


def sources(root):
    """Yield the .c/.h files outside tests/ and build dirs."""
    for d, dirs, files in os.walk(root):
        dirs[:] = sorted(x for x in dirs if x not in SKIP_DIRS and not x.startswith("build"))
        for f in sorted(files):
            if f.endswith((".c", ".h")):
                yield os.path.join(d, f)


def module_of(folder, modules):
    """The module a folder belongs to: itself or the nearest ancestor that
    has a line in the deps block (modules); itself when none has."""
    f = folder
    while f not in modules and "/" in f:
        f = os.path.dirname(f)
    return f if f in modules else folder


def found_edges(root, modules=frozenset()):
    """{(from, to): example 'file includes header'} for cross-module includes."""
    files = list(sources(root))
    home = {}
    for p in files:
        if p.endswith(".h"):
            home.setdefault(os.path.basename(p), module_of(folder_of(root, p), modules))
    edges = {}
    for p in files:
        src = module_of(folder_of(root, p), modules)
        with open(p, encoding="utf-8", errors="replace") as fh:
            text = fh.read()
        for h in INCLUDE.findall(text):
            dst = home.get(os.path.basename(h))
            if dst is not None and dst != src:
                edges.setdefault((src, dst), "%s includes %s" % (os.path.relpath(p, root), h))
    return edges


def declared_graph(root):
    """The ```deps block of docs/architecture.md: (set of (from, to), set of
    the folders that have a line; "folder ->" alone declares a leaf)."""
    doc = os.path.join(root, "docs", "architecture.md")
    with open(doc, encoding="utf-8") as fh:
        m = re.search(r"```deps\n(.*?)```", fh.read(), re.S)
    if m is None:
        raise SystemExit("layout: docs/architecture.md has no ```deps block")
    edges, modules = set(), set()
    for line in m.group(1).splitlines():
        line = line.split("#", 1)[0].strip()
        if not line:
            continue
        src, _, dsts = line.partition("->")
        modules.add(src.strip())
        for d in dsts.split():
            edges.add((src.strip(), d))
    return edges, modules


def cycle(edges):
    """A cycle of the graph as a list of folders, or None."""
    graph = {}
    for a, b in edges:
        graph.setdefault(a, []).append(b)
    state, stack = {}, []

    def visit(n):
        state[n] = 1
        stack.append(n)
        for m in sorted(graph.get(n, [])):
            if state.get(m) == 1:
                return stack[stack.index(m):] + [m]
            if m not in state:
                c = visit(m)
                if c:
                    return c
        stack.pop()
        state[n] = 2
        return None

    for n in sorted(graph):
        if n not in state:
            c = visit(n)
            if c:
                return c
    return None


def main():
    root = os.path.abspath(sys.argv[1] if len(sys.argv) > 1 else ".")
    declared, modules = declared_graph(root)
    found = found_edges(root, frozenset(modules))
    if "--print" in sys.argv:
        by = {}
        for a, b in found:
            by.setdefault(a, []).append(b)
        for a in sorted(by):
            print("%s -> %s" % (a, " ".join(sorted(by[a]))))
        return 0
    bad = []
    for (a, b), why in sorted(found.items()):
        if (a, b) not in declared:
            bad.append("undeclared dependency %s -> %s (%s)" % (a, b, why))
    for a, b in sorted(declared - set(found)):
        bad.append("declared dependency %s -> %s is not used: remove it from the deps block"
                   % (a, b))
    c = cycle(declared | set(found))
    if c:
        bad.append("dependency cycle: " + " -> ".join(c))
    for p in sources(root):
        rel = os.path.relpath(p, root)
        if p.endswith(".c") and rel.startswith(FAST_PATH):
            with open(p, encoding="utf-8", errors="replace") as fh:
                for no, line in enumerate(fh, 1):
                    m = LOG_CALL.search(line.split("//", 1)[0])
                    if m and not line.lstrip().startswith(("*", "/*")):
                        bad.append("%s:%d: %s() on the fast path: no logging there"
                                   % (rel, no, m.group(1)))
        with open(p, encoding="utf-8", errors="replace") as fh:
            n = sum(1 for _ in fh)
        if n > MAX_LINES:
            bad.append("%s: %d lines (> %d): split it along its seams" % (rel, n, MAX_LINES))
    for line in bad:
        print("layout: " + line, file=sys.stderr)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
