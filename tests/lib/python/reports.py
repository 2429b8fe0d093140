#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""reports.py - the FIGURES lines and summaries the integration tests print.

Each command reads JSON files written by the test (telemetry snapshots of
/seckill/stats, client summaries) and prints lines for the test's log, or
"key value" lines the test reads back. They assert nothing.

    reports.py challenge-ack FILE        challenge_ack.py's --json, per phase
    reports.py clients ATTACK BASE UNDER two hostile_clients.py summaries:
                                         without and during ATTACK
    reports.py load DIR                  load.sh: DIR/t0..t2.json, DIR/wrk.txt
    reports.py rate NAME BEFORE AFTER RPS
                                         cycles per request between two
                                         /seckill/stats snapshots
    reports.py crowd FILE                "key value" lines of a seckill-crowd
                                         --json summary (seckill.sh)
    reports.py activities                "item:total:added:remaining:closed;..."
                                         of "seckillctl --json activity list"
                                         on stdin
"""
import json
import re
import sys


def load(path):
    """The JSON document of file PATH."""
    with open(path) as f:
        return json.load(f)


def challenge_ack(path):
    """Per phase (rst, syn): each connection's counters and the telemetry."""
    d = load(path)
    for ph in ("rst", "syn"):
        for name, c in d[ph]["conns"].items():
            print(f"FIGURES {ph} {name}: {c}")
        print(f"FIGURES {ph} telemetry: {d[ph]['telemetry']}")


def clients(attack, base_path, under_path):
    """One line: the legitimate clients' figures without and during ATTACK."""
    b, u = load(base_path), load(under_path)

    def f(d):
        return (f"{d['ok']}/{d['sent']} ok ({d['success_pct']}%), {d['rps']} req/s, "
                f"p50 {d['p50_ms']} ms, p99 {d['p99_ms']} ms, max {d['max_ms']} ms, errors {d['errors']}")
    print(f"FIGURES {attack}: without: {f(b)} | during: {f(u)}")


def load_test(d):
    """load.sh: wrk's rate and latency, busy cycles per request between t0
    and t1, and what ab left (t2)."""
    t = [load(f"{d}/t{i}.json") for i in range(3)]
    with open(f"{d}/wrk.txt") as f:
        w = f.read()
    rps = re.search(r"Requests/sec:\s+([\d.]+)", w).group(1)
    p50 = re.search(r"50%\s+(\S+)", w).group(1)
    p99 = re.search(r"99%\s+(\S+)", w).group(1)
    a, b = t[0]["total"], t[1]["total"]
    req = max(1, b["requests"] - a["requests"])
    busy = b["busy_tsc"] - a["busy_tsc"]
    pmd = b["busy_pmd_tsc"] - a["busy_pmd_tsc"]
    print(f"FIGURES wrk -t1 -c64 -d10s: rps={rps} p50={p50} p99={p99}")
    print(f"FIGURES busy cycles/request={busy / req:.0f} (of which in the tap PMD: {pmd / req:.0f}, "
          f"dataplane own: {(busy - pmd) / req:.0f}) tsc_hz={t[0]['tsc_hz']}")
    c = t[2]["total"]
    print(f"FIGURES after ab: non-2xx={c['responses'] - c['http_200']} retransmits={c['tcp_retransmits']} "
          f"rx_drops={c['rx_drops']} tx_drops={c['tx_drops']}")


def rate(name, before, after, rps):
    """One line: requests, busy cycles per request (tap PMD, own) and
    requests per busy pass between two /seckill/stats snapshots."""
    a, b = load(before)["total"], load(after)["total"]
    req = max(1, b["requests"] - a["requests"])
    busy = b["busy_tsc"] - a["busy_tsc"]
    pmd = b["busy_pmd_tsc"] - a["busy_pmd_tsc"]
    passes = max(1, b["busy_passes"] - a["busy_passes"])
    print(f"FIGURES {name}: rps={rps} requests={req} busy_cycles/request={busy / req:.0f} "
          f"tap_pmd={pmd / req:.0f} own={(busy - pmd) / req:.0f} requests/busy_pass={req / passes:.1f}")


def crowd(path):
    """"key value" lines of a crowd summary. Two tries of one user may be in
    flight at once on two connections; on two lcores one of them can meet
    the other's pending dedup slot and get 429 busy (Retry-After: 1) -
    correct, and rare: reported apart ("busy"), not in "http"/"status"."""
    s = load(path)
    polls = s.get("polls") or {}
    item = s.get("item_read") or {}
    print("winners", s["winners"])
    print("fresh_wins", s["fresh_wins"])
    print("answered", s["answered"])
    http = dict(s["http"])
    status = dict(s["status"])
    busy = http.pop("429", 0)
    if status.get("busy", 0) == busy:
        status.pop("busy", None)
    print("http", " ".join(f"{k}:{v}" for k, v in sorted(http.items())))
    print("status", " ".join(f"{k}:{v}" for k, v in sorted(status.items())))
    print("busy", busy)
    print("dup_vs_202", s["http"].get("202", 0) - s["fresh_wins"] - s["duplicates"])
    print("polls_queued", (polls.get("status") or {}).get("queued", 0))
    print("polls_ok", polls.get("ok", 0))
    print("item_state", item.get("state"))
    print("item_remaining", item.get("remaining"))
    print("errors", s["errors"]["total"])
    print("rps", s["rps"])


def activities(d):
    """"item:total:added:remaining:closed" of every activity, ";"-joined."""
    print(";".join("%s:%s:%s:%s:%s" % (a["item"], a["activity"]["total"], a["activity"]["added"],
                                       a.get("remaining"), a["activity"]["closed"]) for a in d["activities"]))


def main(argv):
    cmd, a = argv[1], argv[2:]
    if cmd == "challenge-ack":
        challenge_ack(a[0])
    elif cmd == "clients":
        clients(a[0], a[1], a[2])
    elif cmd == "load":
        load_test(a[0])
    elif cmd == "rate":
        rate(a[0], a[1], a[2], a[3])
    elif cmd == "crowd":
        crowd(a[0])
    elif cmd == "activities":
        activities(json.load(sys.stdin))
    else:
        sys.exit(f"reports.py: unknown command {cmd!r} (see the top of the file)")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
