#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""steer_park.py - durable_dispatch.sh part 3: a queued winner's retry
parked on the other lcore.

    steer_park.py SERVER TMP      (inside the test's namespace)

TMP/tokens holds "user token" lines for item 2. Probe buys on keep-alive
connections find one connection per lcore (the order id carries the lcore
that sold it). Then, for cases a and b, lead probes move one lcore's
settled mark past the other's, the control plane is stopped (asked through
TMP/req.N, acknowledged by the test through TMP/ack.N), a user wins on
lcore 0 and retries on lcore 1, and the control plane comes back. Prints
one JSON line: per case the win's and the retry's (status, body) and
seconds. Exits non-zero if a lcore cannot be reached or a probe loses.
"""
import json
import os
import select
import socket
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from orders import lcore_of  # noqa: E402


class Driver:
    """The test's side of the steering: tokens, users, control requests."""

    def __init__(self, server, tmp):
        self.server, self.tmp = server, tmp
        with open(f"{tmp}/tokens") as f:
            self.tok = dict(l.split() for l in f)
        self.users = iter(sorted(self.tok, key=int))
        self.nreq = 0
        self.on = {}   # lcore -> a keep-alive connection it serves
        self.res = {}  # case name -> what the win and the retry got

    def ask(self, what):
        """Ask the test to "stop" or "start" the control plane (TMP/req.N);
        wait (30 s at most) for its TMP/ack.N, exit if none."""
        self.nreq += 1
        n, tmp = self.nreq, self.tmp
        with open(f"{tmp}/req.{n}.tmp", "w") as f:
            f.write(what)
        os.rename(f"{tmp}/req.{n}.tmp", f"{tmp}/req.{n}")
        for _ in range(600):
            if os.path.exists(f"{tmp}/ack.{n}"):
                return
            time.sleep(0.05)
        sys.exit("no ack for " + what)

    def conn(self):
        """A new keep-alive connection to the server, TCP_NODELAY."""
        s = socket.create_connection((self.server, 80), timeout=20)
        s.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        return s

    def send_buy(self, s, user):
        """Send USER's buy of item 2 on connection S (answer not read)."""
        s.sendall(f"POST /v1/seckill/2 HTTP/1.1\r\nHost: {self.server}\r\n"
                  f"Authorization: Bearer {self.tok[user]}\r\nContent-Length: 0\r\n\r\n".encode())

    def buy(self, s, user):
        """USER's buy on S and its answer (see read_resp)."""
        self.send_buy(s, user)
        return read_resp(s)

    def steer(self):
        """Find a connection per lcore: keep-alive connections stay on the
        lcore their flow hashes to; a winning probe buy tells which (32
        connections at most)."""
        for _ in range(32):
            if len(self.on) == 2:
                break
            s = self.conn()
            st, b, _ = self.buy(s, next(self.users))
            assert st == 200, (st, b)
            self.on.setdefault(lcore_of(b["order"]), s)
        assert len(self.on) == 2, "could not reach both lcores"

    def case(self, name, home, other, lead_lc, lead):
        """LEAD probes win on lcore LEAD_LC first (they move its settled mark
        past the other's), then with the control plane stopped a user wins
        on HOME and retries on OTHER; the control plane comes back."""
        on = self.on
        for _ in range(lead):
            st, b, _ = self.buy(on[lead_lc], next(self.users))
            assert st == 200, (st, b)
        self.ask("stop")
        u = next(self.users)
        self.send_buy(on[home], u)
        time.sleep(0.3)
        self.send_buy(on[other], u)
        early = read_resp(on[other], 1.0)   # nothing may come: the order is queued
        self.ask("start")
        t = time.monotonic()
        a = read_resp(on[home])
        ta = time.monotonic() - t
        b = early or read_resp(on[other])
        tb = time.monotonic() - t
        self.res[name] = {"user": u, "win": a[:2] if a else None, "win_s": round(ta, 3),
                          "retry": b[:2] if b else None, "retry_s": round(tb, 3),
                          "retry_early": early is not None}


def read_resp(s, wait=20.0):
    """(status, body dict, seconds) of the next answer on S, or None if
    nothing came within WAIT seconds; RuntimeError if S closed."""
    t = time.monotonic()
    buf = b""
    while True:
        left = wait - (time.monotonic() - t)
        if left <= 0 or not select.select([s], [], [], left)[0]:
            return None
        d = s.recv(65536)
        if not d:
            raise RuntimeError("closed")
        buf += d
        head, sep, body = buf.partition(b"\r\n\r\n")
        if not sep:
            continue
        lines = head.decode().split("\r\n")
        n = int(next(l.split(":")[1] for l in lines if l.lower().startswith("content-length:")))
        if len(body) >= n:
            return int(lines[0].split()[1]), json.loads(body[:n]), time.monotonic() - t


def main():
    d = Driver(sys.argv[1], sys.argv[2])
    d.steer()
    # (a) the home lcore far ahead of the other: the other's mark is below the order's seq.
    d.case("a", 0, 1, 0, 20)
    # (b) the other lcore far ahead: its mark is above the order's seq.
    d.case("b", 0, 1, 1, 40)
    print(json.dumps(d.res))
    return 0


if __name__ == "__main__":
    sys.exit(main())
