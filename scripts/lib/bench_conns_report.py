#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""bench_conns_report.py - the figures of scripts/bench_conns.sh.

    python3 bench_conns_report.py RUN JSON HEAP_SMALL HEAP_BIG MAX NPORTS

RUN holds one folder per connection count, in the order they ran (a file
"order" lists them; a baseline's "N@base" is shown right before N), each
with t0.json and t1.json (/seckill/stats at the window's ends), window
("start end", seconds), out.json (the loadgen's --json) and rc (its exit
status), and with --tls rss ("before in-window": the dataplane's RssAnon,
bytes, before the loadgen started and in the window). HEAP_SMALL, HEAP_BIG: the heap in use (bytes) with 4,096 and MAX
connection slots on each of NPORTS ports. Prints one JSON object if JSON
is 1, else markdown tables.
"""
import json
import os
import sys


def figures(run, small, big, mx, nports):
    """{"memory": {...}, "conns": {name: {...}}}: the bytes a slot costs and
    each count's deltas."""
    out = {"memory": {"heap_4096_slots": small, f"heap_{mx}_slots": big, "ports": nports,
                      "bytes_per_slot": round((big - small) / (mx - 4096) / nports)}, "conns": {}}
    ran = open(os.path.join(run, "order")).read().split()
    names = []
    for n in ran:  # a baseline's "N@base" right before N
        if n.endswith("@base") and n[:-5] in ran:
            continue
        names += [n + "@base"] if n + "@base" in ran else []
        names.append(n)
    for n in names:
        d = os.path.join(run, n)
        a = json.load(open(os.path.join(d, "t0.json")))["total"]
        b = json.load(open(os.path.join(d, "t1.json")))["total"]
        w0, w1 = map(float, open(os.path.join(d, "window")).read().split())
        dl = {k: b[k] - a[k] for k in ("requests", "busy_tsc", "busy_pmd_tsc", "idle_tsc", "busy_passes",
                                       "tcp_retransmits", "rx_pkts", "tx_pkts")}
        lg = json.load(open(os.path.join(d, "out.json")))
        req = dl["requests"]
        out["conns"][n] = {
            "conns_open": b["conns_open"],
            "rps": round(req / (w1 - w0)),
            "busy_cycles_per_req": round(dl["busy_tsc"] / req) if req else None,
            "own_cycles_per_req": round((dl["busy_tsc"] - dl["busy_pmd_tsc"]) / req) if req else None,
            "req_per_busy_pass": round(req / dl["busy_passes"], 1) if dl["busy_passes"] else None,
            "rx_frames_per_req": round(dl["rx_pkts"] / req, 2) if req else None,
            "tx_frames_per_req": round(dl["tx_pkts"] / req, 2) if req else None,
            "dp_idle_share": round(dl["idle_tsc"] / (dl["busy_tsc"] + dl["idle_tsc"]), 3),
            "server_retransmits": dl["tcp_retransmits"],
            "loadgen_cycles_per_req": round(lg.get("cycles_per_req", 0)),
            "loadgen_p99_us": round(lg["latency_us"]["p99"], 1),
            "errors": lg["errors"]["total"] + lg.get("unanswered", 0),
            "exit": int(open(os.path.join(d, "rc")).read() or 1),
        }
        rss = os.path.join(d, "rss")
        if os.path.exists(rss):
            r0, r1 = map(int, open(rss).read().split())
            f = out["conns"][n]
            f["rss_anon_growth_per_conn"] = round((r1 - r0) / int(n.split("@")[0]))
            f["bytes_per_tls_conn"] = out["memory"]["bytes_per_slot"] + f["rss_anon_growth_per_conn"]
    return out


def table(out, small, big, mx, nports):
    """Print OUT (what figures returned) as markdown tables."""
    m = out["memory"]
    print(f"| connection slots per port ({nports} ports) | heap in use | bytes per slot |\n|---:|---:|---:|")
    print(f"| 4,096 | {small:,} | |\n| {mx:,} | {big:,} | {m['bytes_per_slot']:,} |")
    print()
    print("| open connections (dataplane) | req/s in the window | busy cyc/req | own | frames in/out per req "
          "| req/busy pass | dp idle | loadgen cyc/req | loadgen p99 µs (whole run) | errors |")
    print("|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    for n, f in out["conns"].items():
        print(f"| {f['conns_open']:,}{' (baseline)' if n.endswith('@base') else ''} | {f['rps']:,} | {f['busy_cycles_per_req']:,} | {f['own_cycles_per_req']:,} "
              f"| {f['rx_frames_per_req']:.2f} / {f['tx_frames_per_req']:.2f} "
              f"| {f['req_per_busy_pass']} | {100 * f['dp_idle_share']:.0f} % | {f['loadgen_cycles_per_req']:,} "
              f"| {f['loadgen_p99_us']:,} | {f['errors']} |")
    tls = {n: f for n, f in out["conns"].items() if "bytes_per_tls_conn" in f}
    if tls:
        print()
        print("| TLS connections open | slot (heap) | + RssAnon growth per connection | bytes per TLS connection |")
        print("|---:|---:|---:|---:|")
        for n, f in tls.items():
            print(f"| {f['conns_open']:,} | {m['bytes_per_slot']:,} | {f['rss_anon_growth_per_conn']:,} "
                  f"| {f['bytes_per_tls_conn']:,} |")


def main(argv):
    run, as_json = argv[1], argv[2] == "1"
    small, big, mx, nports = (int(v) for v in argv[3:7])
    out = figures(run, small, big, mx, nports)
    if as_json:
        print(json.dumps(out))
    else:
        table(out, small, big, mx, nports)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
