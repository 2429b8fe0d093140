#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""logfmt_check.py - the daemons' log files are one logfmt line per event
(docs/logs.md).

    logfmt_check.py [--quiet] [--prog NAME]... [--min-lines N] FILE...

Checks every line of every FILE: logfmt pairs (key=value, value bare or
double-quoted with \\" \\\\ \\n \\r \\t \\uXXXX escapes), no key twice; it starts
with ts= (an RFC 3339 UTC time with milliseconds) or with a journald
priority "<N>"; it has level= (debug, info, notice, warn, error, crit),
prog= (one of the NAMEs, when given) and event=. Prints a summary (lines
per prog and level; the first 10 bad lines) unless --quiet; exit 0 when
every line is good and there are at least N lines (default 1), 1
otherwise.
"""
import re
import sys

LEVELS = ("debug", "info", "notice", "warn", "error", "crit")
PRIORITY = {"debug": 7, "info": 6, "notice": 5, "warn": 4, "error": 3, "crit": 2}
KEY = re.compile(r"[A-Za-z0-9_.\-]+")
TS = re.compile(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$")
PRI = re.compile(r"<([0-7])>")
ESC = {'"': '"', "\\": "\\", "n": "\n", "r": "\r", "t": "\t"}


def parse(line):
    """The (key, value) pairs of one line (no newline), or raise ValueError."""
    pairs, i, n = [], 0, len(line)
    while i < n:
        m = KEY.match(line, i)
        if not m:
            raise ValueError("bad key at column %d" % i)
        key, i = m.group(0), m.end()
        value = None
        if i < n and line[i] == "=":
            i += 1
            if i < n and line[i] == '"':
                i += 1
                out = []
                while True:
                    if i >= n:
                        raise ValueError("unclosed quote")
                    c = line[i]
                    if c == '"':
                        i += 1
                        break
                    if ord(c) < 0x20 or c == "\x7f":
                        raise ValueError("control character in a quoted value")
                    if c == "\\":
                        e = line[i + 1:i + 2]
                        if e in ESC:
                            out.append(ESC[e])
                            i += 2
                        elif e == "u" and re.match(r"[0-9a-fA-F]{4}", line[i + 2:i + 6]):
                            out.append(chr(int(line[i + 2:i + 6], 16)))
                            i += 6
                        else:
                            raise ValueError("bad escape at column %d" % i)
                        continue
                    out.append(c)
                    i += 1
                value = "".join(out)
            else:
                j = i
                while j < n and line[j] != " ":
                    if line[j] in '"=' or ord(line[j]) <= 0x20 or line[j] == "\x7f":
                        raise ValueError("bad character %r in a bare value" % line[j])
                    j += 1
                value, i = line[i:j], j
        if any(k == key for k, _ in pairs):
            raise ValueError("key %s twice" % key)
        pairs.append((key, value))
        if i < n:
            if line[i] != " ":
                raise ValueError("no space after a pair at column %d" % i)
            i += 1
            if i == n:
                raise ValueError("trailing space")
    return pairs


def check_line(line, progs):
    """None if @line is a good log line, else why not."""
    m = PRI.match(line)
    body = line[m.end():] if m else line
    try:
        pairs = parse(body)
    except ValueError as e:
        return str(e)
    d = dict(pairs)
    keys = [k for k, _ in pairs]
    if not m:
        if keys[:1] != ["ts"] or not TS.match(d["ts"] or ""):
            return "no ts= first"
        keys = keys[1:]
    if keys[:3] != ["level", "prog", "event"]:
        return "not level= prog= event= in that order"
    if d["level"] not in LEVELS:
        return "unknown level %r" % d["level"]
    if m and int(m.group(1)) != PRIORITY[d["level"]]:
        return "priority <%s> is not level %s" % (m.group(1), d["level"])
    if progs and d["prog"] not in progs:
        return "prog %r not among %s" % (d["prog"], ", ".join(progs))
    if not d["event"]:
        return "empty event="
    return None


def main(argv):
    quiet, progs, files, min_lines = False, [], [], 1
    i = 0
    while i < len(argv):
        a = argv[i]
        if a == "--quiet":
            quiet = True
        elif a == "--prog" and i + 1 < len(argv):
            progs.append(argv[i + 1])
            i += 1
        elif a == "--min-lines" and i + 1 < len(argv):
            min_lines = int(argv[i + 1])
            i += 1
        elif a.startswith("--"):
            print(__doc__, file=sys.stderr)
            return 2
        else:
            files.append(a)
        i += 1
    if not files:
        print(__doc__, file=sys.stderr)
        return 2
    bad, count, total = [], {}, 0
    for f in files:
        with open(f, "rb") as fh:
            for no, raw in enumerate(fh, 1):
                total += 1
                try:
                    line = raw.decode("utf-8")
                except UnicodeDecodeError:
                    bad.append((f, no, "not UTF-8", raw[:200]))
                    continue
                if not line.endswith("\n"):
                    bad.append((f, no, "no newline at the end", line[:200]))
                    continue
                line = line[:-1]
                why = check_line(line, progs)
                if why:
                    bad.append((f, no, why, line[:200]))
                    continue
                m = PRI.match(line)
                d = dict(parse(line[m.end():] if m else line))
                k = (d["prog"], d["level"])
                count[k] = count.get(k, 0) + 1
    if not quiet:
        print("logfmt: %d lines in %d files, %d bad; %s" % (
            total, len(files), len(bad),
            " ".join("%s/%s=%d" % (p, lv, n) for (p, lv), n in sorted(count.items()))))
        for f, no, why, text in bad[:10]:
            print("  %s:%d: %s: %r" % (f, no, why, text))
    return 0 if not bad and total >= min_lines else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
