# SPDX-License-Identifier: BSD-3-Clause
"""bench_scale_report.py - the table (or JSON) of scripts/bench_scale.sh.

    python3 bench_scale_report.py RUN [--json] [--machine TEXT] [--more TEXT]

RUN holds one folder per run, named "<lcores>-<scenario>", with the
loadgen's JSON (out.json), its exit status (rc) and two /seckill/stats
snapshots (t0.json once the connections were up, t1.json after the load).
RUN/order lists "<lcores> <scenario>" in the order they ran.

Per run: answers/s (the loadgen's, and each of its lcores'), busy cycles per
request (dataplane busy_tsc over requests between the snapshots), the
efficiency (answers/s over N x the 1-lcore answers/s of the same scenario),
p99, the dataplane's idle share, and loadgen_limited when that share is over
10% (the dataplane waited for requests: the loadgen was the limit).
"""
import argparse
import json
import os

IDLE_LIMIT = 0.10


def load(path):
    try:
        with open(path) as f:
            return json.load(f)
    except (OSError, ValueError):
        return None


def figures(d, n):
    """The figures of one run folder D at N lcores."""
    out, t0, t1 = load(f"{d}/out.json"), load(f"{d}/t0.json"), load(f"{d}/t1.json")
    try:
        with open(f"{d}/rc") as f:
            rc = int(f.read().strip() or 1)
    except (OSError, ValueError):
        rc = -1
    r = {"lcores": n, "rps": 0, "p99_us": None, "errors": 1, "exit": rc,
         "busy_cycles_per_req": None, "dp_idle_share": None, "loadgen_limited": None,
         "per_lcore_rps": [], "dp_per_lcore_requests": []}
    if out:
        r["rps"] = round(out["rps"])
        r["p99_us"] = round(out["latency_us"]["p99"], 1)
        r["errors"] = out["errors"]["total"]
        r["per_lcore_rps"] = [round(x["rps"]) for x in out.get("lcores", [])]
    if t0 and t1:
        a, b = t0["total"], t1["total"]
        req = b["requests"] - a["requests"]
        busy = b["busy_tsc"] - a["busy_tsc"]
        spent = busy + b["idle_tsc"] - a["idle_tsc"]
        if req > 0:
            r["busy_cycles_per_req"] = round(busy / req)
        if spent > 0:
            r["dp_idle_share"] = round(1 - busy / spent, 3)
            r["loadgen_limited"] = r["dp_idle_share"] > IDLE_LIMIT
        keys = sorted((k for k in t1 if k.startswith("lcore") and isinstance(t1[k], dict)),
                      key=lambda k: int(k[5:]))
        r["dp_per_lcore_requests"] = [t1[k]["requests"] - t0.get(k, {}).get("requests", 0)
                                      for k in keys]
    return r


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("run")
    ap.add_argument("--json", action="store_true")
    ap.add_argument("--machine", default="")
    ap.add_argument("--more", default="")
    args = ap.parse_args()
    runs = []
    with open(os.path.join(args.run, "order")) as f:
        for line in f:
            n, name = line.split()
            r = figures(os.path.join(args.run, f"{n}-{name}"), int(n))
            r["scenario"] = name
            runs.append(r)
    one = {r["scenario"]: r for r in runs if r["lcores"] == 1}
    for r in runs:
        base = one.get(r["scenario"])
        r["efficiency"] = (round(r["rps"] / (r["lcores"] * base["rps"]), 3)
                           if base and base["rps"] > 0 else None)
        r["cycles_vs_1"] = (round(r["busy_cycles_per_req"] / base["busy_cycles_per_req"], 3)
                            if base and base["busy_cycles_per_req"] and r["busy_cycles_per_req"]
                            else None)
    if args.json:
        print(json.dumps({"machine": args.machine, "more": args.more or None, "runs": runs}))
        return

    def n(v):
        return "-" if v is None else f"{v:,}"

    def pct(v):
        return "-" if v is None else f"{100 * v:.0f}%"

    head = ["lcores", "scenario", "answers/s", "per lcore", "busy cycles/req", "vs 1 lcore",
            "efficiency", "p99 µs", "dp idle", "errors"]
    print("| " + " | ".join(head) + " |")
    print("|" + "---|" * len(head))
    for r in runs:
        note = " (loadgen-limited)" if r["loadgen_limited"] else ""
        print("| " + " | ".join([
            str(r["lcores"]), r["scenario"], n(r["rps"]),
            " / ".join(f"{x / 1e6:.2f}M" for x in r["per_lcore_rps"]) or "-",
            n(r["busy_cycles_per_req"]),
            "-" if r["cycles_vs_1"] is None else f"{r['cycles_vs_1']:.2f}x",
            pct(r["efficiency"]), n(r["p99_us"]), pct(r["dp_idle_share"]) + note,
            n(r["errors"]) + ("" if r["exit"] == 0 else f" (exit {r['exit']})")]) + " |")
    if args.more:
        print(f"\n{args.more}")


if __name__ == "__main__":
    main()
