# SPDX-License-Identifier: BSD-3-Clause
"""bench_tele.py - DPDK telemetry snapshots for scripts/bench.sh.

    python3 bench_tele.py SOCKET      (a coprocess of bench.sh)

Reads lines "CMD FILE" on stdin; for each, asks the dataplane's telemetry
socket (SOCKET: /var/run/dpdk/<prefix>/dpdk_telemetry.v2) for CMD as
`scripts/sandbox.sh telemetry CMD` does, writes the JSON to FILE and
answers "ok" (or "error: ...") on stdout. A line "@wait CMD KEY MIN
SECONDS" polls CMD every 20 ms until its value KEY (a dotted path, e.g.
total.tcp_conns) is at least MIN, for at most SECONDS, and answers "ok"
or "error: ...". One process for the whole run:
starting python3 costs seconds on a loaded machine, which would stretch
every scenario by two snapshots.
"""
import json
import socket
import sys
import time


def ask(path, cmd):
    s = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
    s.settimeout(10)
    try:
        s.connect(path)
        info = json.loads(s.recv(1024))
        s.send(cmd.encode())
        reply = json.loads(s.recv(info["max_output_len"]))
    finally:
        s.close()
    return reply.get(cmd.split(",")[0], reply)


def wait(path, cmd, key, least, seconds):
    end = time.monotonic() + seconds
    while True:
        v = ask(path, cmd)
        for k in key.split("."):
            v = v[k]
        if v >= least:
            return
        if time.monotonic() > end:
            raise ValueError(f"{key} is {v} after {seconds} s, wanted {least}")
        time.sleep(0.02)


def main():
    path = sys.argv[1]
    for line in sys.stdin:
        parts = line.split()
        if len(parts) == 5 and parts[0] == "@wait":
            try:
                wait(path, parts[1], parts[2], int(parts[3]), float(parts[4]))
                print("ok", flush=True)
            except (OSError, ValueError, KeyError, TypeError) as e:
                print(f"error: {e}", flush=True)
            continue
        if len(parts) != 2:
            continue
        try:
            data = ask(path, parts[0])
            with open(parts[1], "w") as f:
                json.dump(data, f)
            print("ok", flush=True)
        except (OSError, ValueError, KeyError) as e:
            print(f"error: {e}", flush=True)


if __name__ == "__main__":
    main()
