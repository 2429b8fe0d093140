#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""num.py - the decimal arithmetic bash cannot do, for the integration tests.

Values are decimal numbers ("0.25", "1e-3"). Check commands exit 0 if the
condition holds, 1 otherwise.

    num.py lt A B          check: A < B
    num.py chain V...      check: V1 <= V2 <= ... (bounds and measurements
                           in one chain: LO A B HI)
    num.py ceilmul A B     print ceil(A * B)
    num.py monotonic       print the monotonic clock (seconds), as the
                           Python clients stamp their events
"""
import math
import sys
import time


def chain(values):
    """True if VALUES (decimal strings) never decrease."""
    v = [float(x) for x in values]
    return all(a <= b for a, b in zip(v, v[1:]))


def main(argv):
    cmd, a = argv[1], argv[2:]
    if cmd == "lt":
        return 0 if float(a[0]) < float(a[1]) else 1
    if cmd == "chain":
        return 0 if chain(a) else 1
    if cmd == "ceilmul":
        print(math.ceil(float(a[0]) * float(a[1])))
        return 0
    if cmd == "monotonic":
        print(time.monotonic())
        return 0
    sys.exit(f"num.py: unknown command {cmd!r} (see the top of the file)")


if __name__ == "__main__":
    sys.exit(main(sys.argv))
