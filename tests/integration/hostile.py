#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""hostile.py SERVER PHASE [ARGS] - bounded hostile clients, run inside the
sandbox namespace. Every phase has a fixed count, a fixed seed and socket
timeouts, and prints one summary line "PHASE key=value ...".

Phases:
  random N        N connections each send 2 KiB of random bytes
  halfclose N     N connections send half a request, then shut down writing
  halfopen N      N connections send half a request and stay silent (kept
                  open 2 s), then vanish with an RST
  rst N           N connections send half a request, then reset (RST)
  synflood N      N raw SYNs from random source ports (no handshake)
  idle N HOLD     N idle connections held HOLD seconds from the first
                  connect; /healthz must still answer meanwhile, and none
                  may be closed by the server: HOLD must stay below
                  tcp.idle_new_ms (10 s), after which a connection that
                  never sent a request is closed
"""
import random
import socket
import struct
import sys
import time

from inet_cksum import checksum

SERVER = sys.argv[1]
PORT = 80
rng = random.Random(20240601)
PARTIAL = b"GET /healthz HTTP/1.1\r\nHost: sandbox\r\nX-Half: "


def connect(timeout=3.0):
    s = socket.create_connection((SERVER, PORT), timeout=timeout)
    s.settimeout(timeout)
    return s


def reset(s):
    s.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
    s.close()


def healthz():
    try:
        with connect() as s:
            s.sendall(b"GET /healthz HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
            data = b""
            while True:
                chunk = s.recv(4096)
                if not chunk:
                    break
                data += chunk
        return data.startswith(b"HTTP/1.1 200")
    except OSError:
        return False


def phase_random(n):
    answered = closed = 0
    for _ in range(n):
        with connect() as s:
            try:
                s.sendall(bytes(rng.getrandbits(8) for _ in range(2048)))
                data = s.recv(4096)
                answered += data.startswith(b"HTTP/1.1 4") or data.startswith(b"HTTP/1.1 5")
                while data:
                    data = s.recv(4096)
                closed += 1
            except OSError:
                closed += 1  # reset by the server: also a refusal
    print(f"random sent={n} answered_4xx_5xx={answered} closed={closed}")
    return closed == n


def phase_halfclose(n):
    closed = 0
    for _ in range(n):
        with connect() as s:
            s.sendall(PARTIAL)
            s.shutdown(socket.SHUT_WR)
            try:
                while s.recv(4096):
                    pass
                closed += 1
            except OSError:
                closed += 1
    print(f"halfclose sent={n} closed_by_server={closed}")
    return closed == n


def phase_halfopen(n):
    socks = []
    for _ in range(n):
        s = connect()
        s.sendall(PARTIAL)
        socks.append(s)
    time.sleep(2)
    ok = healthz()
    for s in socks:
        reset(s)
    print(f"halfopen held={len(socks)} healthz_meanwhile={ok}")
    return ok


def phase_rst(n):
    for i in range(n):
        s = connect()
        s.sendall(PARTIAL[: 5 + i % (len(PARTIAL) - 5)])
        reset(s)
    print(f"rst reset={n}")
    return True


def phase_synflood(n):
    # Our own address on the route to the server, as the kernel picks it.
    probe = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    probe.connect((SERVER, PORT))
    src = probe.getsockname()[0]
    probe.close()
    raw = socket.socket(socket.AF_INET, socket.SOCK_RAW, socket.IPPROTO_TCP)
    s_ip, d_ip = socket.inet_aton(src), socket.inet_aton(SERVER)
    for _ in range(n):
        sport = rng.randrange(20000, 60000)
        seq = rng.getrandbits(32)
        hdr = struct.pack("!HHIIBBHHH", sport, PORT, seq, 0, 5 << 4, 0x02, 65535, 0, 0)
        pseudo = s_ip + d_ip + struct.pack("!BBH", 0, socket.IPPROTO_TCP, len(hdr))
        hdr = hdr[:16] + struct.pack("!H", checksum(pseudo + hdr)) + hdr[18:]
        raw.sendto(hdr, (SERVER, 0))
        time.sleep(0.0005)  # bounded rate: about 2,000 SYN/s
    raw.close()
    ok = healthz()
    print(f"synflood syns={n} healthz_after={ok}")
    return ok


def closed_by_server(socks):
    """How many of @socks the server closed (FIN or RST); nothing blocks."""
    import select

    n = 0
    for i in range(0, len(socks), 512):
        r, _, _ = select.select(socks[i:i + 512], [], [], 0)
        for s in r:
            try:
                n += s.recv(1, socket.MSG_PEEK | socket.MSG_DONTWAIT) == b""
            except BlockingIOError:
                pass
            except OSError:
                n += 1
    return n


def phase_idle(n, hold):
    socks = []
    t0 = time.monotonic()
    for _ in range(n):
        socks.append(connect())
    t_open = time.monotonic() - t0
    print(f"idle open={len(socks)} in {t_open:.2f}s", flush=True)
    # Held HOLD seconds from the first connect (so no connection is older
    # than HOLD, below idle_new_ms); /healthz half-way through what is left.
    time.sleep(max(0.0, (hold - t_open) / 2))
    ok = healthz()
    time.sleep(max(0.0, t0 + hold - time.monotonic()))
    closed = closed_by_server(socks)
    for s in socks:
        s.close()
    print(f"idle held={len(socks)} healthz_meanwhile={ok} closed_by_server={closed} open_s={t_open:.2f}")
    return ok and len(socks) == n and closed == 0


def main():
    import resource

    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (min(hard, 8192), hard))
    phase, n = sys.argv[2], int(sys.argv[3])
    fn = {
        "random": phase_random,
        "halfclose": phase_halfclose,
        "halfopen": phase_halfopen,
        "rst": phase_rst,
        "synflood": phase_synflood,
    }.get(phase)
    if phase == "idle":
        ok = phase_idle(n, float(sys.argv[4]))
    elif fn is None:
        sys.exit(f"unknown phase {phase}")
    else:
        ok = fn(n)
    sys.exit(0 if ok else 1)


if __name__ == "__main__":
    main()
