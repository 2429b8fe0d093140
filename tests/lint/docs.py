#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""docs.py - the docs checked against the code (the `docs_*` unit tests).

    docs.py config ROOT   every key the config loader accepts (the key
                          tables of config/sk_config.c) is described in
                          docs/operations.md and shown in config/seckill.ini;
                          every key those two name, and every key set in
                          config/sandbox.ini, is one the loader accepts
    docs.py links ROOT    every relative link of README.md and docs/*.md
                          reaches a file of the repository (and a heading of
                          it, for a #anchor into a .md file); "design §N"
                          names a section of docs/design.md; no page points
                          outside the repository or at an internal issue
                          number ("issue 12", "#23")
    docs.py selftest ROOT both checks on copies of ROOT's files with one
                          planted fault each (a key's row removed from
                          operations.md, a key unknown to the loader, a dead
                          anchor, an issue number, ...): each must be found,
                          and the unchanged copy must pass

Each finding is one line "file:line: what"; exit 1 if there is any, 0
otherwise. A key is described in operations.md when a table row's first
cell holds it as `section.key`, or as `key` after such a `section.other` in
the same cell, or as `key` alone under a heading that names `[section]`.
"""
import os
import re
import sys

PORT = "portN"
ITEM = "item.<id>"


def read(root, rel):
    with open(os.path.join(root, rel), encoding="utf-8") as f:
        return f.read()


# ------------------------------------------------------------------ config

def loader_keys(root):
    """{(section, key)} of the key tables of config/sk_config.c."""
    src = read(root, "config/sk_config.c")
    tables = {}
    for m in re.finditer(r"static const struct key (\w+)_keys\[\] = \{(.*?)\n\};", src, re.S):
        tables[m.group(1)] = re.findall(r'\{"(\w+)",', m.group(2))
    names = dict(re.findall(r'\[SEC_\w+\] = \{"(\w+)", (\w+)_keys,', src))
    section_of = {table: name for name, table in names.items()}
    section_of.update({"port": PORT, "item": ITEM})
    keys = set()
    for table, ks in tables.items():
        if table not in section_of:
            raise SystemExit(f"config/sk_config.c: key table {table}_keys has no section")
        keys.update((section_of[table], k) for k in ks)
    if len(keys) < 20 or not any(s == PORT for s, _ in keys):
        raise SystemExit("config/sk_config.c: key tables not found (did their form change?)")
    return keys


def section_name(raw):
    if re.fullmatch(r"port[0-9]+", raw):
        return PORT
    if raw.startswith("item."):
        return ITEM
    return raw


def ini_keys(root, rel, commented):
    """[(line, section, key)] set in an INI file; with @commented, also the
    keys shown commented out ("# gateway = ...")."""
    out = []
    section = None
    for n, line in enumerate(read(root, rel).splitlines(), 1):
        m = re.match(r"^\s*\[([^]]+)\]", line)
        if m:
            section = section_name(m.group(1).strip())
            continue
        m = re.match(r"^\s*(#\s*)?([a-z_0-9]+)\s*=", line)
        if m and section and (commented or not m.group(1)):
            out.append((n, section, m.group(2)))
    return out


def doc_keys(root, rel, sections):
    """[(line, section, key)] described in the tables of a docs page."""
    out = []
    heading = None
    for n, line in enumerate(read(root, rel).splitlines(), 1):
        if line.startswith("#"):
            m = re.search(r"`\[([a-z0-9._<>]+)\]`", line)
            heading = section_name(m.group(1)) if m else None
            if heading is not None and heading not in sections:
                heading = None
            continue
        if not line.startswith("| `"):
            continue
        cell = line.split("|")[1]
        row = None
        for tok in re.findall(r"`([^`]+)`", cell):
            m = re.fullmatch(r"(port[0-9N]|item\.<id>|[a-z]+)\.([a-z_0-9]+)", tok)
            if m and section_name(m.group(1)) in sections:
                row = section_name(m.group(1))
                out.append((n, row, m.group(2)))
            elif re.fullmatch(r"[a-z_0-9]+", tok) and (row or heading):
                out.append((n, row or heading, tok))
    return out


def check_config(root):
    bad = []
    keys = loader_keys(root)
    sections = {s for s, _ in keys}
    described = doc_keys(root, "docs/operations.md", sections)
    shown = ini_keys(root, "config/seckill.ini", commented=True)
    for s, k in sorted(keys):
        name = f"[{s}] {k}"
        if not any((s, k) == (ds, dk) for _, ds, dk in described):
            bad.append(f"docs/operations.md: {name}: accepted by config/sk_config.c, not described")
        if not any((s, k) == (ss, sk) for _, ss, sk in shown):
            bad.append(f"config/seckill.ini: {name}: accepted by config/sk_config.c, not shown")
    for rel, found in (("docs/operations.md", described), ("config/seckill.ini", shown),
                       ("config/sandbox.ini", ini_keys(root, "config/sandbox.ini", False))):
        for n, s, k in found:
            if (s, k) not in keys:
                bad.append(f"{rel}:{n}: [{s}] {k}: not a key config/sk_config.c accepts")
    return bad


# ------------------------------------------------------------------- links

def slug(heading):
    """The anchor GitHub gives a heading."""
    h = re.sub(r"`|\*\*|\[|\]\([^)]*\)", "", heading.strip().lower())
    h = re.sub(r"[^\w\- ]", "", h)
    return h.replace(" ", "-")


def anchors(text):
    out, seen = set(), {}
    inside = False
    for line in text.splitlines():
        if line.startswith("```"):
            inside = not inside
        m = re.match(r"^#{1,6} (.*)", line)
        if m and not inside:
            a = slug(m.group(1))
            if a in seen:
                seen[a] += 1
                a = f"{a}-{seen[a]}"
            else:
                seen[a] = 0
            out.add(a)
    return out


def pages(root):
    docs = sorted("docs/" + f for f in os.listdir(os.path.join(root, "docs")) if f.endswith(".md"))
    return ["README.md"] + docs


def check_links(root):
    bad = []
    design = read(root, "docs/design.md")
    sections = set(re.findall(r"^## (\d+)\. ", design, re.M))
    for rel in pages(root):
        text = read(root, rel)
        base = os.path.dirname(rel)
        inside = False
        for n, line in enumerate(text.splitlines(), 1):
            if line.startswith("```"):
                inside = not inside
            for target in re.findall(r"\]\(([^)\s]+)\)", line):
                if re.match(r"[a-z]+:", target):
                    continue  # https:, mailto:
                path, _, anchor = target.partition("#")
                dest = os.path.normpath(os.path.join(base, path)) if path else rel
                if dest.startswith(".."):
                    bad.append(f"{rel}:{n}: {target}: outside the repository")
                    continue
                if not os.path.exists(os.path.join(root, dest)):
                    bad.append(f"{rel}:{n}: {target}: no such file")
                    continue
                if anchor and dest.endswith(".md") and anchor not in anchors(read(root, dest)):
                    bad.append(f"{rel}:{n}: {target}: no such heading in {dest}")
            if inside:
                continue
            if "../shared/" in line:
                bad.append(f"{rel}:{n}: points outside the repository (../shared/)")
            for num in re.findall(r"design(?:\.md)? §(\d+)", line):
                if num not in sections:
                    bad.append(f"{rel}:{n}: design §{num}: docs/design.md has no section {num}")
            m = re.search(r"\b[Ii]ssues? [0-9]+\b|(?<![\w&/])#[0-9]+\b", line)
            if m:
                bad.append(f"{rel}:{n}: \"{m.group(0)}\": an internal issue number; "
                           "link the section it means, or say it in words")
    return bad


# ---------------------------------------------------------------- selftest

# (what is planted, file, text replaced (None: appended), replacement,
#  check, a finding that must appear)
FAULTS = [
    ("a key's row gone from the doc", "docs/operations.md",
     re.compile(r"^\| `tcp\.mss` \|.*\n", re.M), "", check_config,
     "docs/operations.md: [tcp] mss: accepted by config/sk_config.c, not described"),
    ("a key gone from a row of several", "docs/operations.md",
     "`tcp.rto_initial_ms`, `rto_min_ms`, `rto_max_ms`", "`tcp.rto_initial_ms`, `rto_max_ms`",
     check_config, "[tcp] rto_min_ms: accepted by config/sk_config.c, not described"),
    ("an [item.<id>] key gone", "docs/operations.md",
     re.compile(r"^\| `batch_max` \|.*\n", re.M), "", check_config,
     "[item.<id>] batch_max: accepted by config/sk_config.c, not described"),
    ("a key the loader does not know, in the doc", "docs/operations.md",
     "| `http.fields_max` |", "| `http.fields_max`, `fields_min` |", check_config,
     "[http] fields_min: not a key config/sk_config.c accepts"),
    ("a key gone from seckill.ini", "config/seckill.ini",
     re.compile(r"^member_id = .*\n", re.M), "", check_config,
     "config/seckill.ini: [cluster] member_id: accepted by config/sk_config.c, not shown"),
    ("a key the loader does not know, in sandbox.ini", "config/sandbox.ini",
     None, "\n[tcp]\nmax_conn = 5\n", check_config,
     "[tcp] max_conn: not a key config/sk_config.c accepts"),
    ("a dead anchor", "docs/api.md", None, "\nSee [the design](design.md#13-nothing).\n",
     check_links, "design.md#13-nothing: no such heading in docs/design.md"),
    ("a dead file", "README.md", None, "\nSee [x](docs/nothing.md).\n",
     check_links, "docs/nothing.md: no such file"),
    ("a page outside the repository", "docs/tcp.md", None, "\nSee ../shared/design.md.\n",
     check_links, "points outside the repository"),
    ("a design section that does not exist", "docs/stock.md", None, "\nAs design §42 says.\n",
     check_links, "design §42: docs/design.md has no section 42"),
    ("an internal issue number", "docs/http.md", None, "\nDone in issue 12.\n",
     check_links, "\"issue 12\": an internal issue number"),
]


def selftest(root):
    import shutil
    import tempfile

    bad = []
    with tempfile.TemporaryDirectory() as top:
        tmp = os.path.join(top, "root")

        def plant(rel=None, old=None, new=None):
            """A fresh copy of the docs and config/ (everything else linked
            in), with @rel's @old replaced by @new (appended when @old is None)."""
            shutil.rmtree(tmp, ignore_errors=True)
            os.mkdir(tmp)
            for entry in os.listdir(root):
                src = os.path.join(os.path.abspath(root), entry)
                if entry in ("docs", "config"):
                    shutil.copytree(src, os.path.join(tmp, entry))
                elif entry == "README.md":
                    shutil.copyfile(src, os.path.join(tmp, entry))
                else:
                    os.symlink(src, os.path.join(tmp, entry))
            if rel is None:
                return True
            text = read(tmp, rel)
            if old is None:
                changed = text + new
            elif isinstance(old, re.Pattern):
                changed = old.sub(new, text, count=1)
            else:
                changed = text.replace(old, new, 1)
            with open(os.path.join(tmp, rel), "w", encoding="utf-8") as f:
                f.write(changed)
            return changed != text

        plant()
        for check in (check_config, check_links):
            found = check(tmp)
            if found:
                bad.append(f"unchanged copy: {check.__name__} found {found}")
        for what, rel, old, new, check, want in FAULTS:
            if not plant(rel, old, new):
                bad.append(f"{what}: could not plant it in {rel} (did the file change?)")
                continue
            found = check(tmp)
            if not any(want in f for f in found):
                bad.append(f"{what}: {check.__name__} missed it (found: {found})")
    return bad


def main(argv):
    checks = {"config": check_config, "links": check_links, "selftest": selftest}
    if len(argv) != 3 or argv[1] not in checks:
        print(__doc__, file=sys.stderr)
        return 2
    bad = checks[argv[1]](argv[2])
    for b in bad:
        print(b)
    if not bad:
        print(f"docs {argv[1]}: ok")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
