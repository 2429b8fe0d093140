#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""jsonq.py - values out of JSON documents, for the integration tests.

The documents are the dataplane's telemetry (/seckill/stats and friends),
the admin API's and seckillctl's --json answers and the clients' summaries.
SRC is a file name, or "-" for standard input. Each command prints one line
and exits 0, or exits 1 ("check" commands: the condition is false; any
other: the key is missing).

    jsonq.py get SRC EXPR         eval(EXPR) with d the document
    jsonq.py field SRC PATH       d[a][b]... for PATH "a.b..."; booleans as
                                  true/false
    jsonq.py tele SRC KEY [SEC]   d[SEC][KEY] of /seckill/stats (SEC "total",
                                  the default), d[KEY] if SEC is "top"
    jsonq.py kv SRC SEC KEY...    "KEY=value ..." of d[SEC] ("top": of d)
    jsonq.py lcores SRC KEY       "v0 v1 ...": KEY of each lcoreN section
    jsonq.py delta A B KEY        B's total[KEY] - A's (two /seckill/stats
                                  snapshots)
    jsonq.py positive N VALUE...  check: exactly N VALUEs, each > 0
    jsonq.py success SRC PCT      check: a client summary sent something and
                                  at least PCT % of it succeeded
    jsonq.py idle SRC             check: /seckill/stats says nothing is open,
                                  the table is empty, the mbufs are idle
"""
import json
import sys


def load(src):
    """The JSON document of file SRC, or of standard input if SRC is "-"."""
    if src == "-":
        return json.load(sys.stdin)
    with open(src) as f:
        return json.load(f)


def get(d, expr):
    """eval(EXPR) with the document bound to d (tests write d["a"][0] ...)."""
    # d in the globals: a comprehension in EXPR sees only those.
    return eval(expr, {"d": d})


def field(d, path):
    """d[a][b]... for the dotted PATH "a.b..." (a number indexes a list)."""
    for k in path.split("."):
        d = d[int(k)] if isinstance(d, list) else d[k]
    return d


def show(v):
    """A value as the shell tests compare it: booleans as true/false."""
    return str(v).lower() if isinstance(v, bool) else str(v)


def section(d, sec):
    """Section SEC of a /seckill/stats document; "top" is the document."""
    return d if sec == "top" else d[sec]


def lcores(d, key):
    """KEY of every lcoreN section of /seckill/stats, in name order."""
    return [v[key] for k, v in sorted(d.items()) if k.startswith("lcore") and isinstance(v, dict)]


def delta(a, b, key):
    """How much total[KEY] grew from /seckill/stats snapshot A to B."""
    return b["total"][key] - a["total"][key]


def positive(n, values):
    """True if there are exactly N VALUES, each an integer > 0."""
    return len(values) == n and all(int(v) > 0 for v in values)


def success(d, pct):
    """True if client summary d sent something and success_pct >= PCT."""
    return d["sent"] > 0 and d["success_pct"] >= pct


def idle(d):
    """True if /seckill/stats d has no connection open, an empty TCP table
    (TIME_WAIT included) and its mbuf pool at the idle level."""
    t = d["total"]
    return t["conns_open"] == 0 and t["tcp_conns"] == 0 and d["mbuf_in_use"] == d["mbuf_idle"]


def main(argv):
    cmd, args = argv[1], argv[2:]
    if cmd == "get":
        print(get(load(args[0]), args[1]))
    elif cmd == "field":
        print(show(field(load(args[0]), args[1])))
    elif cmd == "tele":
        print(section(load(args[0]), args[2] if len(args) > 2 else "total")[args[1]])
    elif cmd == "kv":
        s = section(load(args[0]), args[1])
        print(" ".join(f"{k}={s[k]}" for k in args[2:]))
    elif cmd == "lcores":
        print(" ".join(str(v) for v in lcores(load(args[0]), args[1])))
    elif cmd == "delta":
        print(delta(load(args[0]), load(args[1]), args[2]))
    elif cmd == "positive":
        return 0 if positive(int(args[0]), args[1:]) else 1
    elif cmd == "success":
        return 0 if success(load(args[0]), float(args[1])) else 1
    elif cmd == "idle":
        return 0 if idle(load(args[0])) else 1
    else:
        sys.exit(f"jsonq.py: unknown command {cmd!r} (see the top of the file)")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
