#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""orders.py - checks on the winners' orders, for the integration tests.

An orders file holds one "user order" line per winner (seckill-crowd
--orders); order ids are epoch30 | member5 | lcore6 | seq23 (stock/sk_order.h:
the epoch counts seconds from 2024-01-01 UTC). ADMIN is the control
plane's admin API base URL (http://127.0.0.1:PORT). Check commands exit 0
if the condition holds, 1 otherwise (the first few offenders on stderr).

    orders.py store-list ADMIN ITEM every confirmed order of ITEM in LMDB
                                    (GET /v1/orders?item=&state=, page by
                                    page): "user order" lines on stdout
    orders.py in-store FILE ADMIN   check: every order is confirmed or paid
                                    in LMDB with its user; prints the count
    orders.py same A B              check: every user of A found in B has
                                    the same order there
    orders.py disjoint A B          check: no user of A is in B
    orders.py new OLD NEW           the lines of NEW whose user is not in OLD
    orders.py lcores FILE           "lcore:count ...", lcores in order
    orders.py lcores-both LC        check: "lcore:count" list LC is lcores
                                    0 and 1 exactly (--won: each count > 0)
    orders.py lcores-pair LC        "count0:count1" of list LC
    orders.py settled-past FILE S0 S1
                                    check: settled marks S0, S1 of lcores
                                    0, 1 are past each lcore's last order
    orders.py ctl-show FILE SBX     check: seckillctl (through sandbox.sh
                                    SBX) shows 150 random orders of each
                                    lcore confirmed, in the store, with
                                    their user
    orders.py pay-race FILE ADMIN   pay the first 25 orders right at their
                                    deadline; prints "paid cancelled bad"
    orders.py carts ADMIN ITEM K    check: every stored order (every state) of
                                    ITEM is whole: its lines are ITEM alone
                                    or items ITEM..ITEM+K-1, one unit each,
                                    0..nlines-1; prints "orders carts
                                    units:u1,u2,..." (units per item)
    orders.py layout HEADER         check: the id layout here is the one of
                                    stock/sk_order.h (HEADER), and the
                                    decoders undo make_id
"""
import collections
import json
import random
import re
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.request

import admin as admin_api

# The order id layout of stock/sk_order.h, most significant first:
# epoch 30 | member 5 | lcore 6 | seq 23. Keep in step with that header.
SEQ_BITS = 23
LCORE_BITS = 6
MEMBER_BITS = 5
EPOCH_BITS = 30
LCORE_MASK = (1 << LCORE_BITS) - 1
MEMBER_MASK = (1 << MEMBER_BITS) - 1
MEMBER_SHIFT = SEQ_BITS + LCORE_BITS
EPOCH_SHIFT = MEMBER_SHIFT + MEMBER_BITS
EPOCH_BASE = 1704067200  # SK_ORDER_EPOCH_BASE: 2024-01-01T00:00:00Z
assert EPOCH_SHIFT + EPOCH_BITS == 64


def read(path):
    """[(user, order)] of an orders file, blank lines skipped."""
    with open(path) as f:
        return [tuple(l.split()) for l in f if l.strip()]


def lcore_of(order):
    """The lcore that sold ORDER (its id's lcore field)."""
    return (int(order) >> SEQ_BITS) & LCORE_MASK


def seq_of(order):
    """ORDER's sequence number on its lcore (the id's seq field)."""
    return int(order) & ((1 << SEQ_BITS) - 1)


def member_of(order):
    """The cluster member number that sold ORDER (0: standalone)."""
    return (int(order) >> MEMBER_SHIFT) & MEMBER_MASK


def epoch_of(order):
    """The run (dataplane start, unix seconds) that sold ORDER."""
    return (int(order) >> EPOCH_SHIFT) + EPOCH_BASE


def make_id(epoch, member, lcore, seq):
    """The id sk_order_id_make() builds (for self-tests)."""
    return ((epoch - EPOCH_BASE) << EPOCH_SHIFT | member << MEMBER_SHIFT
            | lcore << SEQ_BITS | (seq & ((1 << SEQ_BITS) - 1)))


def admin_order(admin, order):
    """The admin API's GET /v1/orders/ORDER as a dict."""
    req = urllib.request.Request(f"{admin}/v1/orders/{order}", headers=admin_api.headers())
    with urllib.request.urlopen(req, timeout=5) as r:
        return json.load(r)


def orders_of(admin, item, state):
    """Every order of ITEM in state STATE in LMDB (the admin API's
    GET /v1/orders?item=&state=, page by page; at most 1,000 pages)."""
    after = ""
    for _ in range(1000):
        url = f"{admin}/v1/orders?item={item}&state={state}&limit=1000{after}"
        req = urllib.request.Request(url, headers=admin_api.headers())
        with urllib.request.urlopen(req, timeout=10) as r:
            page = json.load(r)
        yield from page["orders"]
        if not page["more"]:
            return
        after = f"&after={page['next']}"
    sys.exit("orders.py: more than 1,000 pages")


def store_list(admin, item):
    """Print "user order" for every confirmed order of ITEM in LMDB."""
    for o in orders_of(admin, item, "confirmed"):
        print(o["user"], o["order"])
    return 0


def in_store(path, admin):
    """Check every order of PATH is confirmed or paid in LMDB with its user;
    prints the number checked. Returns the exit status."""
    n = bad = 0
    for user, order in read(path):
        n += 1
        o = admin_order(admin, order)
        if not o.get("in_store") or o["status"] not in ("confirmed", "paid") or str(o["user"]) != user:
            bad += 1
            if bad < 5:
                print("not durable:", user, order, o, file=sys.stderr)
    print(n)
    return 1 if bad else 0


def same(a_path, b_path):
    """Check every user of A found in B has the same order there."""
    a, b = dict(read(a_path)), dict(read(b_path))
    bad = [u for u in a if u in b and b[u] != a[u]]
    for u in bad[:5]:
        print("user", u, "had", a[u], "now", b.get(u), file=sys.stderr)
    return 1 if bad else 0


def disjoint(a_path, b_path):
    """Check no user of A is in B."""
    a = {u for u, _ in read(a_path)}
    b = {u for u, _ in read(b_path)}
    return 1 if a & b else 0


def new(old_path, new_path):
    """Print the lines of NEW whose user is not in OLD."""
    old = {u for u, _ in read(old_path)}
    for u, o in read(new_path):
        if u not in old:
            print(u, o)
    return 0


def lcores(path):
    """Print "lcore:count ..." of the orders of PATH, lcores in order."""
    c = collections.Counter(lcore_of(o) for _, o in read(path))
    print(" ".join(f"{k}:{c[k]}" for k in sorted(c)))
    return 0


def parse_lcores(text):
    """{"lcore": "count"} of an "lcore:count ..." list."""
    return dict(x.split(":") for x in text.split())


def lcores_both(text, won):
    """Check list TEXT names lcores 0 and 1 exactly (WON: each count > 0)."""
    d = parse_lcores(text)
    return 0 if set(d) == {"0", "1"} and (not won or all(int(v) > 0 for v in d.values())) else 1


def settled_past(path, s0, s1):
    """Check the settled marks S0, S1 of lcores 0, 1 are past each lcore's
    last order sequence in PATH."""
    last = {0: 0, 1: 0}
    for _, o in read(path):
        lc = lcore_of(o)
        last[lc] = max(last.get(lc, 0), seq_of(o))
    settled = {0: int(s0 or 0), 1: int(s1 or 0)}
    print("last seq per lcore", last, "settled", settled)
    return 0 if all(settled[k] > last[k] for k in (0, 1)) else 1


def ctl_show(path, sbx):
    """Check "seckillctl --json order show" of 150 orders of each of lcores
    0 and 1 (seeded sample): confirmed in the arena and the store, with the
    user of the orders file; at least 300 checked."""
    by = {0: [], 1: []}
    for u, o in read(path):
        by.setdefault(lcore_of(o), []).append((u, o))
    rnd = random.Random(7)
    bad = n = 0
    for lc in (0, 1):
        for u, o in rnd.sample(by[lc], min(150, len(by[lc]))):
            r = subprocess.run([sbx, "ctl", "--json", "order", "show", o],
                               capture_output=True, text=True, timeout=10)
            n += 1
            j = json.loads(r.stdout) if r.returncode == 0 else {}
            if (j.get("status") != "confirmed" or j.get("arena_status") != "confirmed"
                    or str(j.get("user")) != u or not j.get("in_store")):
                bad += 1
                print("order", o, "of lcore", lc, "user", u, "rc", r.returncode, r.stdout.strip(),
                      file=sys.stderr)
    print("checked", n, "orders with seckillctl, bad", bad)
    return 1 if bad or n < 300 else 0


def pay_race(path, admin):
    """Pay the first 25 orders of PATH at once, right at the latest of their
    deadlines; wait until no order is confirmed any more (paid, or cancelled
    by the control plane's deadline pass; 10 s past the last deadline at
    most). Prints "paid cancelled bad": bad counts the orders whose status
    is not what their pay answer said (200: paid, else cancelled)."""
    orders = [o for _, o in read(path)]
    pay = orders[:25]
    deadlines = {o: admin_order(admin, o)["deadline_ns"] / 1e9 for o in orders}
    deadline = max(deadlines[o] for o in pay)
    res = {}

    def do(o):
        req = urllib.request.Request(f"{admin}/v1/orders/{o}/pay", method="POST", data=b"",
                                     headers=admin_api.headers(
                                         {"Content-Type": "application/json"}))
        try:
            with urllib.request.urlopen(req, timeout=5) as r:
                res[o] = r.status
        except urllib.error.HTTPError as e:
            res[o] = e.code

    time.sleep(max(0, deadline - time.time()))  # a deadline, not a guess
    ts = [threading.Thread(target=do, args=(o,)) for o in pay]
    for t in ts:
        t.start()
    for t in ts:
        t.join()
    end = max(deadlines.values()) + 10
    while True:
        st = {o: admin_order(admin, o)["status"] for o in orders}
        if "confirmed" not in st.values() or time.time() > end:
            break
        time.sleep(0.1)
    paid = cancelled = bad = 0
    for o in orders:
        s = st[o]
        want = ("paid",) if res.get(o) == 200 else ("cancelled",)
        if s not in want:
            bad += 1
            print("order", o, "pay", res.get(o), "status", s, file=sys.stderr)
        paid += s == "paid"
        cancelled += s == "cancelled"
    print(paid, cancelled, bad)
    return 0


def layout(header):
    """Check the layout constants match the #defines of HEADER
    (stock/sk_order.h) and the decoders take apart what make_id builds.
    Returns the exit status."""
    with open(header) as f:
        text = f.read()
    want = {"SK_ORDER_SEQ_BITS": SEQ_BITS, "SK_ORDER_LCORE_BITS": LCORE_BITS,
            "SK_ORDER_MEMBER_BITS": MEMBER_BITS, "SK_ORDER_EPOCH_BITS": EPOCH_BITS,
            "SK_ORDER_EPOCH_BASE": EPOCH_BASE}
    bad = 0
    for name, mine in want.items():
        m = re.search(rf"#define\s+{name}\s+(?:UINT32_C\()?(\d+)", text)
        if not m or int(m.group(1)) != mine:
            bad += 1
            print(f"{name}: header {m.group(1) if m else 'missing'}, orders.py {mine}",
                  file=sys.stderr)
    rnd = random.Random(26)
    for _ in range(1000):
        f = (rnd.randrange(EPOCH_BASE + 1, EPOCH_BASE + (1 << EPOCH_BITS)),
             rnd.randrange(1 << MEMBER_BITS), rnd.randrange(1 << LCORE_BITS),
             rnd.randrange(1 << SEQ_BITS))
        o = str(make_id(*f))
        got = (epoch_of(o), member_of(o), lcore_of(o), seq_of(o))
        if got != f or not 0 < int(o) < 1 << 64:
            bad += 1
            if bad < 5:
                print("id", o, "made of", f, "decodes to", got, file=sys.stderr)
    print("layout", "ok" if not bad else f"{bad} mismatches")
    return 1 if bad else 0


def carts(admin, item, k):
    """Check that every order of ITEM in LMDB (every stored state) is a
    single-item buy of ITEM or a whole K-line cart of ITEM..ITEM+K-1, qty 1
    per line; print "orders carts units:..." with the live (confirmed or
    paid) units of each item."""
    item, k = int(item), int(k)
    want = list(range(item, item + k))
    units = collections.Counter()
    n = ncarts = bad = 0
    for state in ("confirmed", "paid", "cancelled", "refunded"):
        for o in orders_of(admin, item, state):
            n += 1
            lines = o["lines"]
            items = [ln["item"] for ln in lines]
            whole = [ln["line"] for ln in lines] == list(range(len(lines))) and all(
                ln["qty"] == 1 for ln in lines) and items in ([item], want)
            if not whole:
                bad += 1
                if bad < 5:
                    print("partial or odd order:", o, file=sys.stderr)
            ncarts += len(lines) > 1
            if state in ("confirmed", "paid"):
                units.update(items)
    print(n, ncarts, "units:" + ",".join(str(units[i]) for i in want))
    return 1 if bad else 0


def main(argv):
    cmd, a = argv[1], argv[2:]
    if cmd == "store-list":
        return store_list(a[0], a[1])
    if cmd == "in-store":
        return in_store(a[0], a[1])
    if cmd == "same":
        return same(a[0], a[1])
    if cmd == "disjoint":
        return disjoint(a[0], a[1])
    if cmd == "new":
        return new(a[0], a[1])
    if cmd == "lcores":
        return lcores(a[0])
    if cmd == "lcores-both":
        return lcores_both(a[-1], "--won" in a[:-1])
    if cmd == "lcores-pair":
        d = parse_lcores(a[0])
        print(f"{d.get('0', 0)}:{d.get('1', 0)}")
        return 0
    if cmd == "settled-past":
        return settled_past(a[0], a[1], a[2])
    if cmd == "ctl-show":
        return ctl_show(a[0], a[1])
    if cmd == "pay-race":
        return pay_race(a[0], a[1])
    if cmd == "carts":
        return carts(a[0], a[1], a[2])
    if cmd == "layout":
        return layout(a[0])
    sys.exit(f"orders.py: unknown command {cmd!r} (see the top of the file)")


if __name__ == "__main__":
    sys.exit(main(sys.argv))
