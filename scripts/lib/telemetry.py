# SPDX-License-Identifier: BSD-3-Clause
"""telemetry.py - the dataplane's DPDK telemetry, for scripts/sandbox.sh and
scripts/bench.sh.

    python3 telemetry.py SOCKET CMD   (sandbox.sh telemetry [CMD])
    python3 telemetry.py SOCKET       (a coprocess of bench.sh)

SOCKET is /var/run/dpdk/<prefix>/dpdk_telemetry.v2. With CMD (e.g.
/seckill/stats, /seckill/net,0): prints the answer's value as indented
JSON. Without: reads lines "CMD FILE" on stdin; for each, asks for CMD,
writes the JSON to FILE and answers "ok" (or "error: ...") on stdout. A
line "@wait CMD KEY MIN SECONDS" polls CMD every 20 ms until its value KEY
(a dotted path, e.g. total.tcp_conns) is at least MIN, for at most
SECONDS, and answers "ok" or "error: ...". One process for the whole run:
starting python3 costs seconds on a loaded machine, which would stretch
every scenario by two snapshots.
"""
import json
import socket
import sys
import time


def ask(path, cmd):
    """The value of telemetry command CMD on socket PATH (the answer is
    {"CMD-without-params": value}); 10 s at most per receive."""
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
    """Poll CMD every 20 ms until its value at the dotted KEY is at least
    LEAST; ValueError after SECONDS."""
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


def serve(path):
    """The coprocess: answer "CMD FILE" and "@wait ..." lines (see the top)."""
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


def main(argv):
    if len(argv) == 3:
        print(json.dumps(ask(argv[1], argv[2]), indent=1))
    elif len(argv) == 2:
        serve(argv[1])
    else:
        sys.exit("usage: telemetry.py SOCKET [CMD]")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
