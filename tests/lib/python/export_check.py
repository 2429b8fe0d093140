#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""export_check.py - what the Kafka topics hold against what the appliance
sold (export.sh).

    export_check.py ORDERS_JSON EVENTS_JSON WINNERS PAID CURSOR

ORDERS_JSON, EVENTS_JSON: the topics seckill.orders and seckill.events as
"seckill-kafka consume --json" wrote them; WINNERS: the crowd's "user
order" lines; PAID: the ids of the orders the test paid, one a line;
EVENTS_JSON and PAID may be "-" (none); CURSOR: the export log's cursor,
0 skips the log coverage check. Prints one JSON object of counters (every
problem class counted; the test compares them), examples of problems on
stderr.
"""
import collections
import json
import sys


def check(ofile, efile, wfile, pfile, cursor):
    """The counters of the export check as an ordered dict (see the top)."""
    cursor = int(cursor)
    r = collections.OrderedDict()
    notes = []

    def note(msg):
        if len(notes) < 8:
            notes.append(msg)

    def load(path):
        out = []
        if path == "-":
            return out
        for m in json.load(open(path)):
            try:
                d = json.loads(m["value"]) if m.get("value") is not None else None
            except ValueError:
                d = None
            out.append((m["partition"], m["offset"], m.get("key"), m.get("value"), d))
        return out

    winners = {}
    for line in open(wfile):
        if line.strip():
            user, order = line.split()
            winners[order] = int(user)
    paid = set() if pfile == "-" else {l.strip() for l in open(pfile) if l.strip()}
    topics = {"orders": load(ofile), "events": load(efile)}

    seq_key = {}  # seq -> (topic, key): one event, one key
    value_of = {}  # (key, seq) -> value
    r["seq_clash"] = r["dup_mismatch"] = r["seq_back"] = r["offset_back"] = 0
    r["bad_json"] = 0
    for t, msgs in topics.items():
        last_seq, last_off = {}, {}
        for part, off, key, val, d in msgs:
            if last_off.get(part, -1) >= off:
                r["offset_back"] += 1
            last_off[part] = off
            if not isinstance(d, dict) or d.get("v") != 1 or not isinstance(d.get("seq"), int) \
                    or key is None:
                r["bad_json"] += 1
                note(f"{t}: not a v1 event: key {key} value {val}")
                continue
            s = d["seq"]
            if seq_key.setdefault(s, (t, key)) != (t, key):
                r["seq_clash"] += 1
                note(f"seq {s} under {seq_key[s]} and {(t, key)}")
            if value_of.setdefault((key, s), val) != val:
                r["dup_mismatch"] += 1
                note(f"{t}: ({key}, {s}) twice with other values: {value_of[(key, s)]} / {val}")
            if s < last_seq.get(key, 0):
                r["seq_back"] += 1
                note(f"{t}: key {key}: seq {s} after {last_seq[key]}")
            last_seq[key] = max(s, last_seq.get(key, 0))

    om = [m for m in topics["orders"] if isinstance(m[4], dict)]
    keys = {m[2] for m in om}
    r["o_msgs"] = len(topics["orders"])
    r["o_keys"] = len(keys)
    r["o_dups"] = len(om) - len({(m[2], m[4].get("seq")) for m in om})
    missing = sorted(set(winners) - keys)
    extra = sorted(keys - set(winners))
    r["o_missing"], r["o_extra"] = len(missing), len(extra)
    for k in missing[:3]:
        note(f"orders: winner's order {k} (user {winners[k]}) not exported")
    for k in extra[:3]:
        note(f"orders: {k} exported but no winner has it")
    r["o_bad"] = 0
    for part, off, key, val, d in om:
        lines = d.get("lines")
        good = (d.get("type") == "confirmed" and d.get("order") == key
                and (key not in winners or d.get("user") == winners[key])
                and isinstance(d.get("units"), int) and d["units"] >= 1
                and isinstance(lines, list) and len(lines) >= 1
                and all(isinstance(l, dict) and l.get("item") == 1 and l.get("qty", 0) >= 1
                        for l in lines)
                and sum(l["qty"] for l in lines) == d["units"])
        if not good:
            r["o_bad"] += 1
            note(f"orders: bad value under key {key}: {val}")

    em = [m for m in topics["events"] if isinstance(m[4], dict)]
    r["e_msgs"] = len(topics["events"])
    r["e_dups"] = len(em) - len({(m[2], m[4].get("seq")) for m in em})
    types = collections.Counter()
    seen = set()
    r["e_bad"] = 0
    paid_keys = set()
    for part, off, key, val, d in em:
        typ, order = d.get("type"), d.get("order")
        if (key, d["seq"]) not in seen:
            seen.add((key, d["seq"]))
            types[typ] += 1
        if typ not in ("paid", "cancelled", "failed", "restocked", "activity", "closed") or \
                (order is not None and order != key) or \
                (order is None and key != f"item:{d.get('item')}"):
            r["e_bad"] += 1
            note(f"events: bad value under key {key}: {val}")
        if typ == "paid":
            paid_keys.add(key)
            if key not in winners or d.get("user") != winners[key]:
                r["e_bad"] += 1
                note(f"events: paid {key} is no winner's order (or another user): {val}")
    r["e_types"] = dict(sorted(types.items()))
    r["paid_missing"] = len(paid - paid_keys)
    r["paid_extra"] = len(paid_keys - paid)
    for k in sorted(paid ^ paid_keys)[:3]:
        note(f"events: paid {k}: {'not exported' if k in paid else 'exported but not paid'}")

    if cursor > 0:
        seqs = set(seq_key)
        r["seq_missing"] = len(set(range(1, cursor + 1)) - seqs)
        r["seq_over"] = len([s for s in seqs if s > cursor or s < 1])
        for s in sorted(set(range(1, cursor + 1)) - seqs)[:3]:
            note(f"event {s} of the log never exported")
    for n in notes:
        print(n, file=sys.stderr)
    return r


def main(argv):
    ofile, efile, wfile, pfile, cursor = argv[1:6]
    print(json.dumps(check(ofile, efile, wfile, pfile, cursor)))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
