#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""install_check.py - helpers of tests/install/install.sh (the operator's kit).

    install_check.py installed          the install destinations of
                                        "meson introspect --installed" (JSON
                                        on stdin), sorted, one per line
    install_check.py options            the long options (--foo) in a
                                        program's --help text (stdin), sorted,
                                        each once
    install_check.py commands           seckillctl's commands ("order show",
                                        "items", ...) from the "commands:"
                                        section of its --help (stdin)
    install_check.py man-missing PAGE WORD...
                                        check: every WORD (an option, or a
                                        command of words) appears in the roff
                                        man page PAGE as text; prints the
                                        missing ones, exit 1 if any
    install_check.py hold-lock flock|fcntl FILE
                                        lock FILE the way DPDK does (a shared
                                        flock on a hugepage file; an fcntl
                                        write lock on the primary's config),
                                        print "locked", hold the lock until
                                        stdin reaches its end
"""
import fcntl
import json
import os
import re
import sys


def installed():
    for dest in sorted(json.load(sys.stdin).values()):
        print(dest)
    return 0


def options():
    found = set(re.findall(r"(?<![\w-])--[a-z][a-z0-9-]*", sys.stdin.read()))
    for o in sorted(found):
        print(o)
    return 0


def commands():
    """Lines indented by two blanks under "commands:", up to a blank line:
    their leading lowercase words (at most two) are the command."""
    out = []
    inside = False
    for line in sys.stdin:
        if line.strip() == "commands:":
            inside = True
            continue
        if inside and line.strip() == "":
            break
        if inside:
            m = re.match(r"^  ([a-z]+)(?: ([a-z]+))?(?:\s|$)", line)
            if m:
                out.append(" ".join(w for w in m.groups() if w))
    for c in out:
        print(c)
    return 0 if out else 1


def man_text(page):
    """The text of a roff man page, escapes and macro names dropped, every
    run of blanks one space."""
    words = []
    with open(page) as f:
        for line in f:
            if line.startswith(('.\\"', "'\\\"")):
                continue
            line = re.sub(r"^\.[A-Za-z]+\s*", "", line)
            line = re.sub(r"\\f(\(..|\[[^]]*\]|.)", "", line)
            line = line.replace("\\-", "-").replace("\\&", "").replace("\\c", "")
            line = line.replace("\\e", "\\").replace('"', "")
            words.append(line.strip())
    return " " + re.sub(r"\s+", " ", " ".join(words)) + " "


def man_missing(page, wanted):
    text = man_text(page)
    missing = [w for w in wanted
               if not re.search(r"(?<![\w-])" + re.escape(w) + r"(?![\w-])", text)]
    for w in missing:
        print(w)
    return 1 if missing else 0


def hold_lock(kind, path):
    fd = os.open(path, os.O_RDWR)
    if kind == "flock":
        fcntl.flock(fd, fcntl.LOCK_SH)
    else:
        fcntl.lockf(fd, fcntl.LOCK_EX)
    print("locked", flush=True)
    sys.stdin.read()
    os.close(fd)
    return 0


def main(argv):
    if len(argv) == 4 and argv[1] == "hold-lock" and argv[2] in ("flock", "fcntl"):
        return hold_lock(argv[2], argv[3])
    if len(argv) == 2 and argv[1] == "installed":
        return installed()
    if len(argv) == 2 and argv[1] == "options":
        return options()
    if len(argv) == 2 and argv[1] == "commands":
        return commands()
    if len(argv) >= 3 and argv[1] == "man-missing":
        return man_missing(argv[2], argv[3:])
    print(__doc__, file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv))
