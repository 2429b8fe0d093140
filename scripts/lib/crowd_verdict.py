#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""crowd_verdict.py - the demo's lines on a seckill-crowd run.

    python3 crowd_verdict.py SUMMARY UNITS
    python3 crowd_verdict.py --gate SUMMARY METRIC
    python3 crowd_verdict.py --follow SUMMARY
    python3 crowd_verdict.py --stream EVENTS CURL_RC

SUMMARY is the crowd's --json file.
- SUMMARY UNITS prints whether winners == UNITS and nobody won twice:
  "yes", or "NO: " and the names of the checks that failed (a check is
  false, or an object whose "ok" is false).
- --gate prints the gate line from the summary's "gate" object (run with
  --gate PCT) beside METRIC, the control plane's
  seckill_requests_total{outcome="gate"} ("?" when unknown).
- --follow prints the push line from the summary's "follow" object (run
  with --follow PCT).
- --stream prints one order's Server-Sent Events stream as curl -N saved
  it in EVENTS (the events, indented, then how it ended: CURL_RC 0 is the
  appliance's close, 28 curl's --max-time). Exit 0 when the stream shows a
  status, then paid, then the close; 1 otherwise.
Every mode but --stream exits 0.
"""
import json
import sys

FINAL = ("paid", "cancelled", "failed", "refunded", "settled")


def failed_checks(summary):
    """Names of the summary's checks that failed."""
    checks = summary.get("checks", {})
    return [k for k, v in checks.items() if v is False or (isinstance(v, dict) and v.get("ok") is False)]


def load(path):
    """The crowd's --json summary at @path."""
    with open(path) as f:
        return json.load(f)


def verdict(s, units):
    """The winners verdict line."""
    bad = failed_checks(s)
    return f"winners == units ({units}) and nobody won twice: {'yes' if not bad else 'NO: ' + ', '.join(bad)}"


def gate_line(s, metric):
    """The gate line: who lacked the claim and what they were answered."""
    g = s.get("gate")
    if not g:
        return "the gate: off (the crowd ran without --gate)"
    same = ""
    if metric.isdigit():
        same = ", the same" if int(metric) == g["refused"] else ", NOT the same"
    return (
        f"the gate (the item needs the quiz's claim): {g['without']} of {g['without'] + g['with_claim']} users "
        f"skipped the quiz: {g['refused']} answers 403 gate (/metrics outcome gate: {metric}{same}) to "
        f"{g['lacking_gate']} of them, {g['lacking_sold_out']} came after the sell-out (410 first), "
        f"{g['lacking_won']} won; users with the claim refused: {g['claim_refused']}"
    )


def follow_line(s):
    """The push line: the winners that followed their order's events."""
    f = s.get("follow")
    if not f:
        return "the push: off (the crowd ran without --follow)"
    by = ", ".join(f"{k} {v}" for k, v in sorted(f.get("by_status", {}).items()) if v)
    return (
        f"the push (crowd --follow {f['percent']}): {f['streams']} of {f['winners']} winners followed "
        f"GET /v1/orders/{{id}}/events: {f['opened']} opened, {f['refused']} refused (429), {f['errors']} errors; "
        f"{f['events']} events ({by or 'none'}); closed after a final status {f['closed_final']}, "
        f"still open after {f['duration_s']:.1f} s: {f['open_at_end']}"
    )


def stream_lines(path, rc):
    """One stream as curl saved it: its lines and whether it went status -> paid -> close."""
    with open(path, errors="replace") as f:
        text = f.read()
    lines = [f"  {ln}" for ln in text.splitlines() if ln.strip()]
    statuses = []
    for ln in text.splitlines():
        if ln.startswith("data:"):
            try:
                statuses.append(json.loads(ln[5:]).get("status", "?"))
            except ValueError:
                statuses.append("?")
    closed = {0: "then the appliance closed the stream", 28: "still open at curl's --max-time"}
    end = closed.get(rc, f"curl exit {rc}")
    ok = rc == 0 and len(statuses) >= 2 and statuses[-1] == "paid" and statuses[0] not in FINAL
    lines.append(f"  => {' -> '.join(statuses) or 'no event'}, {end}: {'ok' if ok else 'NOT as expected'}")
    return lines, ok


def main(argv):
    if len(argv) == 4 and argv[1] == "--gate":
        print(gate_line(load(argv[2]), argv[3]))
        return 0
    if len(argv) == 3 and argv[1] == "--follow":
        print(follow_line(load(argv[2])))
        return 0
    if len(argv) == 4 and argv[1] == "--stream":
        lines, ok = stream_lines(argv[2], int(argv[3]))
        print("\n".join(lines))
        return 0 if ok else 1
    if len(argv) == 3:
        print(verdict(load(argv[1]), int(argv[2])))
        return 0
    print(__doc__.split("\n\n")[1], file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv))
