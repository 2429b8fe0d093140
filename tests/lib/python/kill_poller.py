#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""kill_poller.py - SIGKILL processes mid-sale, once enough units are sold.

    kill_poller.py ADMIN AT SECONDS [--ready FILE] PID...

Polls the admin API's view of item 1 (ADMIN/v1/items/1, 5 ms apart) until
its "sold" reaches AT, SECONDS at most, then SIGKILLs each PID in the order
given (the PIDs the sandbox recorded; never looked up by name). No sleep
between what it saw and the kill, so a fast sale cannot end in between.
With --ready, creates FILE after the first answer (the test starts its
crowd then). Kills when the time is up too, saying so on stderr.
"""
import argparse
import json
import os
import signal
import sys
import time
import urllib.request

import admin as admin_api


def sold(admin):
    """Units of item 1 sold, from the admin API."""
    req = urllib.request.Request(admin + "/v1/items/1", headers=admin_api.headers())
    with urllib.request.urlopen(req, timeout=2) as r:
        return json.load(r)["sold"]


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("admin")
    ap.add_argument("at", type=int)
    ap.add_argument("seconds", type=float)
    ap.add_argument("--ready")
    ap.add_argument("pids", type=int, nargs="+")
    a = ap.parse_args()
    end, err, first = time.monotonic() + a.seconds, None, True
    while time.monotonic() < end:
        try:
            n = sold(a.admin)
            if first and a.ready:
                open(a.ready, "w").close()
            first = False
            if n >= a.at:
                break
        except Exception as e:  # not up yet, reset, partial answer: poll again
            err = e
        time.sleep(0.005)
    else:
        print("kill poller: %d sold not seen in %g s; last error:" % (a.at, a.seconds), err, file=sys.stderr)
    for p in a.pids:
        os.kill(p, signal.SIGKILL)
    return 0


if __name__ == "__main__":
    sys.exit(main())
