#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""day2_check.py - the order queries of the admin API (GET /v1/orders?...),
for tests/integration/day2.sh.

ADMIN is the control plane's admin API base URL (http://127.0.0.1:PORT).
Check commands exit 0 if the condition holds, 1 otherwise (the offenders
on stderr).

    day2_check.py pages ADMIN ITEM STATE LIMIT
        walk every page of ?item=ITEM&state=STATE&limit=LIMIT (following
        "next" as "after"); check: ids strictly ascending across pages,
        each page at most LIMIT orders, "more" exactly on the pages that
        are full and followed by another, every order in STATE; prints
        "ORDERS PAGES"
    day2_check.py window ADMIN ITEM FROM_NS TO_NS
        check: no order of ITEM in LMDB (any state) was sold in
        [FROM_NS, TO_NS); prints the number of orders looked at
    day2_check.py users ADMIN ITEM FILE [N]
        check: for the first N (default 50) "user order" lines of FILE,
        ?item=ITEM&user=USER lists that order; prints the number checked
    day2_check.py events FILE TYPE...
        "TYPE=N ..." - the events of each TYPE in FILE (a topic as
        "seckill-kafka consume --json" wrote it), each seq counted once
        (the export is at least once)
"""
import json
import sys
import urllib.error
import urllib.request

import admin as admin_api

STATES = ("confirmed", "paid", "cancelled", "refunded")
MAX_PAGES = 10000  # a bound on every walk: 10 M orders at 1000 a page


def get(admin, query):
    """The JSON answer of GET /v1/orders?QUERY (exits 1 on another status)."""
    req = urllib.request.Request(admin + "/v1/orders?" + query,
                                 headers=admin_api.headers({"Host": "127.0.0.1"}))
    try:
        with urllib.request.urlopen(req, timeout=30) as r:
            return json.load(r)
    except urllib.error.HTTPError as e:
        print(f"GET /v1/orders?{query}: HTTP {e.code} {e.read()!r}", file=sys.stderr)
        sys.exit(1)


def walk(admin, item, state, limit):
    """Every page of (item, state): a list of the pages' answers."""
    pages, after = [], None
    for _ in range(MAX_PAGES):
        q = f"item={item}&state={state}&limit={limit}"
        if after is not None:
            q += f"&after={after}"
        page = get(admin, q)
        pages.append(page)
        if not page["more"]:
            return pages
        after = page["next"]
    print(f"more than {MAX_PAGES} pages", file=sys.stderr)
    sys.exit(1)


def cmd_pages(admin, item, state, limit):
    limit = int(limit)
    pages = walk(admin, item, state, limit)
    bad, last, n = [], 0, 0
    for i, p in enumerate(pages):
        ids = [int(o["order"]) for o in p["orders"]]
        if len(ids) > limit or p["count"] != len(ids):
            bad.append(f"page {i}: {len(ids)} orders, count {p['count']}")
        if p["more"] and (len(ids) != limit or p["next"] != str(ids[-1])):
            bad.append(f"page {i}: more with {len(ids)} orders, next {p['next']}")
        for oid, o in zip(ids, p["orders"]):
            if oid <= last:
                bad.append(f"page {i}: order {oid} after {last}")
            if o["status"] != state:
                bad.append(f"page {i}: order {oid} is {o['status']}")
            last = oid
        n += len(ids)
    for b in bad[:10]:
        print(b, file=sys.stderr)
    print(n, len(pages))
    return 1 if bad else 0


def cmd_window(admin, item, lo, hi):
    lo, hi = int(lo), int(hi)
    bad, n = [], 0
    for state in STATES:
        for p in walk(admin, item, state, 1000):
            for o in p["orders"]:
                n += 1
                if lo <= o["time_ns"] < hi:
                    bad.append(f"order {o['order']} sold at {o['time_ns']}, in [{lo}, {hi})")
    for b in bad[:10]:
        print(b, file=sys.stderr)
    print(n)
    return 1 if bad else 0


def cmd_users(admin, item, path, count="50"):
    with open(path) as f:
        lines = [l.split() for l in f if l.strip()][:int(count)]
    bad = []
    for user, order in lines:
        page = get(admin, f"item={item}&user={user}")
        ids = [o["order"] for o in page["orders"]]
        if order not in ids or any(o["user"] != user for o in page["orders"]):
            bad.append(f"user {user}: order {order} not in {ids}")
    for b in bad[:10]:
        print(b, file=sys.stderr)
    print(len(lines))
    return 1 if bad else 0


def cmd_events(path, *types):
    seen = {t: set() for t in types}
    with open(path) as f:
        for m in json.load(f):
            d = json.loads(m["value"])
            if d["type"] in seen:
                seen[d["type"]].add(d["seq"])
    print(" ".join(f"{t}={len(seen[t])}" for t in types))
    return 0


def main(argv):
    cmds = {"pages": (cmd_pages, 4), "window": (cmd_window, 4), "users": (cmd_users, 3),
            "events": (cmd_events, 1)}
    if len(argv) < 2 or argv[1] not in cmds or len(argv) - 2 < cmds[argv[1]][1]:
        print(__doc__, file=sys.stderr)
        return 2
    return cmds[argv[1]][0](*argv[2:])


if __name__ == "__main__":
    sys.exit(main(sys.argv))
