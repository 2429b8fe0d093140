#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""crowd_verdict.py - the demo's one-line verdict on a seckill-crowd run.

    python3 crowd_verdict.py SUMMARY UNITS

SUMMARY is the crowd's --json file. Prints whether winners == UNITS and
nobody won twice: "yes", or "NO: " and the names of the checks that
failed (a check is false, or an object whose "ok" is false).
"""
import json
import sys


def failed_checks(summary):
    """Names of the summary's checks that failed."""
    checks = summary.get("checks", {})
    return [k for k, v in checks.items() if v is False or (isinstance(v, dict) and v.get("ok") is False)]


def main(argv):
    with open(argv[1]) as f:
        s = json.load(f)
    units = int(argv[2])
    bad = failed_checks(s)
    print(f"winners == units ({units}) and nobody won twice: {'yes' if not bad else 'NO: ' + ', '.join(bad)}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
