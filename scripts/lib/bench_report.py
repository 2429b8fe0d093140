# SPDX-License-Identifier: BSD-3-Clause
"""bench_report.py - the figures of scripts/bench.sh, from its run folder.

    python3 bench_report.py DIR [--json]

DIR holds one folder per scenario, in the order they ran (a file "order"
lists them; a baseline's "NAME@base" is shown right before NAME), each with:
  meta      "tool path" (tool: loadgen or wrk; path: memif or afpacket)
  t0.json, t1.json  /seckill/stats before and after the run
  out.json  the loadgen's --json, or
  wrk.txt   wrk --latency's output
  rc        the tool's exit status
  t0_tls.json, t1_tls.json  /seckill/tls before and after (TLS scenarios)
Busy cycles per request are the deltas of the dataplane's busy_tsc,
busy_pmd_tsc and requests between t0 and t1 (docs/operations.md §4).
Prints one JSON object {"scenarios": {...}} with --json, else a table.
"""
import json
import os
import re
import sys


def tele(path):
    with open(path) as f:
        return json.load(f)["total"]


def busy(d):
    a, b = tele(os.path.join(d, "t0.json")), tele(os.path.join(d, "t1.json"))
    req = b["requests"] - a["requests"]
    bt = b["busy_tsc"] - a["busy_tsc"]
    pmd = b["busy_pmd_tsc"] - a["busy_pmd_tsc"]
    status = {}
    for k in b:
        if k.startswith("http_") and k[5:].isdigit():
            n = b[k] - a.get(k, 0)
            if n:
                status[k[5:]] = n
        elif k.startswith("buy_") or k.startswith("engine_"):
            n = b[k] - a.get(k, 0)
            if n:
                status[k] = n
    if req <= 0:
        return req, None, None, None, status
    return req, round(bt / req), round(pmd / req), round((bt - pmd) / req), status


def shape(d):
    """Frames in and out per request, requests per busy pass, and the share
    of the dataplane's time spent idle (0: saturated)."""
    a, b = tele(os.path.join(d, "t0.json")), tele(os.path.join(d, "t1.json"))
    dl = {k: b.get(k, 0) - a.get(k, 0) for k in
          ("requests", "rx_pkts", "tx_pkts", "busy_passes", "busy_tsc", "idle_tsc")}
    req, spent = dl["requests"], dl["busy_tsc"] + dl["idle_tsc"]
    return {
        "rx_frames_per_req": round(dl["rx_pkts"] / req, 2) if req > 0 else None,
        "tx_frames_per_req": round(dl["tx_pkts"] / req, 2) if req > 0 else None,
        "req_per_busy_pass": round(req / dl["busy_passes"], 1) if dl["busy_passes"] > 0 else None,
        "dp_idle_share": round(dl["idle_tsc"] / spent, 3) if spent > 0 else None,
    }


def tls_counters(path):
    with open(path) as f:
        j = json.load(f)
    return j.get("total", j) if isinstance(j, dict) else {}


def tls_figures(d):
    """Handshakes the dataplane counted during a TLS scenario, and its busy
    cycles per handshake (all of them: the handshakes and the requests)."""
    a = tls_counters(os.path.join(d, "t0_tls.json"))
    b = tls_counters(os.path.join(d, "t1_tls.json"))
    dl = {k: b.get(k, 0) - a.get(k, 0) for k in ("hs_full", "hs_resumed", "hs_failed")}
    t0, t1 = tele(os.path.join(d, "t0.json")), tele(os.path.join(d, "t1.json"))
    hs = dl["hs_full"] + dl["hs_resumed"]
    dl_req = t1["requests"] - t0["requests"]
    bt = t1["busy_tsc"] - t0["busy_tsc"]
    return {
        "tls_hs_full": dl["hs_full"],
        "tls_hs_resumed": dl["hs_resumed"],
        "tls_hs_failed": dl["hs_failed"],
        # a keep-alive scenario's few handshakes do not make a figure
        "busy_cycles_per_handshake": round(bt / hs) if hs > 0 and 2 * hs >= dl_req else None,
    }


def wrk_time_us(s):
    m = re.match(r"([0-9.]+)(us|ms|s|m)$", s)
    if not m:
        return None
    v, u = float(m.group(1)), m.group(2)
    return v * {"us": 1, "ms": 1e3, "s": 1e6, "m": 60e6}[u]


def wrk_figures(path):
    txt = open(path).read() if os.path.exists(path) else ""
    rps = re.search(r"^Requests/sec:\s*([0-9.]+)", txt, re.M)
    p99 = re.search(r"^\s*99%\s+(\S+)", txt, re.M)
    sock = re.search(r"Socket errors: connect (\d+), read (\d+), write (\d+), timeout (\d+)", txt)
    total = re.search(r"^\s*(\d+) requests in", txt, re.M)
    non2xx = re.search(r"Non-2xx or 3xx responses:\s*(\d+)", txt)
    return {
        "rps": round(float(rps.group(1))) if rps else 0,
        "cps": 0,
        "p99_us": round(wrk_time_us(p99.group(1)), 1) if p99 else None,
        "errors": sum(int(x) for x in sock.groups()) if sock else (0 if rps else 1),
        "answered": int(total.group(1)) if total else 0,
        "non2xx": int(non2xx.group(1)) if non2xx else 0,
    }


def loadgen_figures(path):
    try:
        d = json.load(open(path))
    except (OSError, ValueError):
        return {"rps": 0, "cps": 0, "p99_us": None, "errors": 1, "answered": 0}
    return {
        "rps": round(d["rps"]),
        "cps": round(d["cps"]),
        "p99_us": round(d["latency_us"]["p99"], 1),
        "errors": d["errors"]["total"] + d.get("unanswered", 0),
        "answered": d["answered"],
        "retransmits": d["tcp"]["retransmits"],
        "loadgen_cycles_per_req": d.get("cycles_per_req"),
        "loadgen_tls": d.get("tls"),
    }


def main():
    root = sys.argv[1]
    as_json = "--json" in sys.argv[2:]
    ran = open(os.path.join(root, "order")).read().split()
    # a baseline's run ("NAME@base", bench.sh --baseline) right before NAME's
    names = []
    for name in ran:
        if name.endswith("@base") and name[:-5] in ran:
            continue
        if name + "@base" in ran:
            names.append(name + "@base")
        names.append(name)
    out = {}
    for name in names:
        d = os.path.join(root, name)
        tool, path = open(os.path.join(d, "meta")).read().split()[:2]
        if tool == "loadgen":
            f = loadgen_figures(os.path.join(d, "out.json"))
        else:
            f = wrk_figures(os.path.join(d, "wrk.txt"))
        try:
            req, bt, pmd, own, status = busy(d)
        except (OSError, ValueError, KeyError):
            req, bt, pmd, own, status = 0, None, None, None, {}
        try:
            f.update(shape(d))
        except (OSError, ValueError, KeyError):
            f.update({"rx_frames_per_req": None, "tx_frames_per_req": None,
                      "req_per_busy_pass": None, "dp_idle_share": None})
        if os.path.exists(os.path.join(d, "t1_tls.json")):
            try:
                f.update(tls_figures(d))
            except (OSError, ValueError, KeyError, TypeError):
                f.update({"busy_cycles_per_handshake": None})
        f.update({
            "busy_cycles_per_req": bt,
            "own_cycles_per_req": own,
            "pmd_cycles_per_req": pmd,
            "dp_requests": req,
            "dataplane_answers": status,
            "path": path,
            "tool": tool,
            "exit": int(open(os.path.join(d, "rc")).read() or 1),
        })
        out[name] = f
    if as_json:
        print(json.dumps({"scenarios": out}))
        return

    def n(v, unit=""):
        if v is None:
            return "-"
        if isinstance(v, float) and v < 100:
            return f"{v:.1f}{unit}"
        return f"{round(v):,}{unit}"

    def frames(f):
        if f["rx_frames_per_req"] is None:
            return "-"
        return f"{f['rx_frames_per_req']:.2f} / {f['tx_frames_per_req']:.2f}"

    def pct(v):
        return "-" if v is None else f"{100 * v:.0f} %"

    head = ["scenario", "path (tool)", "req/s", "conn/s", "p99 µs", "errors",
            "busy cyc/req", "in PMD", "own", "busy cyc/handshake", "loadgen cyc/req", "frames in/out per req",
            "req/busy pass", "dp idle", "answers and buy outcomes (dataplane)"]
    rows = []
    for name, f in out.items():
        st = ", ".join(f"{k}: {v:,}" for k, v in sorted(f["dataplane_answers"].items())
                       if not k.startswith("engine_"))
        rows.append([name, f"{f['path']} ({f['tool']})", n(f["rps"]), n(f["cps"]) if f["cps"] else "-",
                     n(f["p99_us"]), n(f["errors"]), n(f["busy_cycles_per_req"]),
                     n(f["pmd_cycles_per_req"]), n(f["own_cycles_per_req"]),
                     n(f.get("busy_cycles_per_handshake")),
                     n(f.get("loadgen_cycles_per_req")), frames(f), n(f["req_per_busy_pass"]),
                     pct(f["dp_idle_share"]), st])
    print("| " + " | ".join(head) + " |")
    print("|" + "|".join("---" if i in (0, 1, len(head) - 1) else "---:" for i in range(len(head))) + "|")
    for r in rows:
        print("| " + " | ".join(r) + " |")


if __name__ == "__main__":
    main()
