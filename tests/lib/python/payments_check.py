#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""payments_check.py - the exported events of payments and refunds
(payments.sh): seckill.events as "seckill-kafka consume --json" prints it.

    payments_check.py events FILE   a JSON summary on stdout:
        {"bad": values that are not a v1 event object,
         "dups": messages seen again (same seq: a re-export),
         "types": {type: events, each seq once},
         "paid": {order: [request, ...]},
         "refunded": {order: [[item, units, request], ...]},
         "pay_conflict": {order: [[item, units, request], ...]},
         "pay_rejected": [[partition, offset, reason, key, fields], ...],
         "key_mismatch": events whose key is not their order}
"""
import json
import sys


def events(path):
    with open(path) as f:
        msgs = json.load(f)
    out = {"bad": 0, "dups": 0, "types": {}, "paid": {}, "refunded": {},
           "pay_conflict": {}, "pay_rejected": [], "key_mismatch": 0}
    seen = set()
    for m in msgs:
        try:
            v = json.loads(m["value"])
            seq, typ = v["seq"], v["type"]
            if v["v"] != 1:
                raise ValueError
        except (TypeError, ValueError, KeyError):
            out["bad"] += 1
            continue
        if seq in seen:
            out["dups"] += 1
            continue
        seen.add(seq)
        out["types"][typ] = out["types"].get(typ, 0) + 1
        order = v.get("order")
        if order is not None and m.get("key") != order:
            out["key_mismatch"] += 1
        if typ == "paid":
            out["paid"].setdefault(order, []).append(v.get("request", ""))
        elif typ == "pay_rejected":
            out["pay_rejected"].append([v["partition"], v["offset"], v["reason"],
                                        m.get("key"), sorted(v)])
        elif typ in ("refunded", "pay_conflict"):
            out[typ].setdefault(order, []).append(
                [v["item"], v["units"], v.get("request", "")])
    return out


def main(argv):
    if len(argv) != 3 or argv[1] != "events":
        sys.stderr.write(__doc__)
        return 2
    json.dump(events(argv[2]), sys.stdout, sort_keys=True)
    print()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
