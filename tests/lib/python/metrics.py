#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""metrics.py - checks on the control plane's Prometheus /metrics text.

    metrics.py format FILE   check: every line of FILE is a comment, empty,
                             or "name{labels} value"; more than 20 samples
"""
import re
import sys

SAMPLE = re.compile(r'^[a-zA-Z_:][a-zA-Z0-9_:]*(\{([a-zA-Z_][a-zA-Z0-9_]*="[^"]*",?)*\})? '
                    r'(-?[0-9.]+([eE][-+]?[0-9]+)?|NaN|[+-]Inf)$')


def check_format(path):
    """Exit status 0 if every line of PATH is a comment, empty or a sample
    and there are more than 20 samples; prints the first bad line."""
    n = 0
    with open(path) as f:
        for line in f:
            line = line.rstrip("\n")
            if line.startswith("#") or line == "":
                continue
            if not SAMPLE.match(line):
                print("bad metrics line:", line)
                return 1
            n += 1
    return 0 if n > 20 else 1


def main(argv):
    if len(argv) == 3 and argv[1] == "format":
        return check_format(argv[2])
    sys.exit("usage: metrics.py format FILE")


if __name__ == "__main__":
    sys.exit(main(sys.argv))
