#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""clients.py - small TCP/HTTP clients the integration tests run inside
their namespace (sbx_exec timeout N python3 clients.py ...).

    clients.py idle SERVER N     open N idle connections to SERVER:80, print
                                 "open N", wait for each to end, print
                                 "reset R" (R: how many ended by a reset)
    clients.py burst SERVER N    N buys of item 1 by users 1..N on one
                                 keep-alive connection, back to back; prints
                                 "<status> <Retry-After or ->" per answer
"""
import socket
import sys


def idle(server, n):
    """Hold N idle connections until the server ends them; count resets."""
    socks = [socket.create_connection((server, 80), timeout=20) for _ in range(n)]
    print("open", len(socks), flush=True)
    resets = 0
    for s in socks:
        try:
            s.recv(1)
        except ConnectionResetError:
            resets += 1
        except OSError:
            pass
    print("reset", resets, flush=True)


def read_answer(f):
    """(status, {lower-case header: value}) of the next answer on file F;
    its body is read and dropped."""
    status = f.readline().split()[1].decode()
    h = {}
    while (line := f.readline().strip()):
        k, v = line.decode().split(":", 1)
        h[k.strip().lower()] = v.strip()
    f.read(int(h["content-length"]))
    return status, h


def burst(server, n):
    """N buys of item 1 (X-User-Id 1..N) on one connection, each sent once
    the previous answer is in; prints each status and Retry-After."""
    s = socket.create_connection((server, 80), timeout=5)
    f = s.makefile("rb")
    for u in range(1, n + 1):
        s.sendall(f"POST /v1/seckill/1 HTTP/1.1\r\nHost: sk\r\nX-User-Id: {u}\r\n"
                  "Content-Length: 0\r\n\r\n".encode())
        status, h = read_answer(f)
        print(status, h.get("retry-after", "-"))


def main(argv):
    cmd, server, n = argv[1], argv[2], int(argv[3])
    if cmd == "idle":
        idle(server, n)
    elif cmd == "burst":
        burst(server, n)
    else:
        sys.exit(f"clients.py: unknown command {cmd!r} (see the top of the file)")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
