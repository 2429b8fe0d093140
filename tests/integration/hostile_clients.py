#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""hostile_clients.py SERVER PHASE [OPTIONS] - the clients of
hostile_clients.sh, run inside the sandbox namespace. Every phase is bounded
in count and time, binds its sockets to given source addresses (all from
198.18.0.0/15, added to the namespace's interface by the test) and writes
one JSON summary (--json FILE, and a line "PHASE {...}" on stdout).

Phases:
  hold    --src A[,B...] --per-src N [--drip S] --ready FILE --stop FILE
          --max-seconds T
          connection holders: N connections from each source address, in
          order; they say nothing (or, with --drip S, send one byte of a
          never-ending request head every S seconds). Once the server's
          refusals (RSTs right after the handshake) have arrived, FILE
          --ready gets {"opened", "refused", "alive", "alive_by_src"}; then
          they are held until --stop FILE exists (or T seconds), watching
          what the server does to them: 408 answers (and after how long since
          the first byte), FINs (idle timeout), RSTs (eviction). On exit
          every socket still open is reset.
  legit   --src A --threads T --seconds D [--count N] [--timeout S]
          [--path P]
          legitimate clients: T threads, each a loop of GET P on a new
          connection (Connection: close) for D seconds (N requests at
          most); success = a 200 within S seconds. Reports the success
          rate and latency percentiles (connect to last byte).
  flood   --src A --count N --max-seconds T --token TOK [--item I]
          a forged-token buy flood from one address on keep-alive
          connections: N requests (fewer if T seconds pass), the count of
          each status.
"""
import argparse
import errno
import json
import os
import select
import socket
import struct
import sys
import threading
import time

PORT = 80
# A request head that never ends: the drip appends 'a' to the header value.
DRIP_HEAD = b"GET /healthz HTTP/1.1\r\nHost: sandbox\r\nX-Drip: "


def now():
    return time.monotonic()


def out(args, phase, summary):
    line = json.dumps(summary, sort_keys=True)
    print(f"{phase} {line}", flush=True)
    if args.json:
        with open(args.json, "w") as f:
            f.write(line + "\n")


def bound_socket(src, timeout):
    s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    # The port is chosen at connect() (IP_BIND_ADDRESS_NO_PORT), by the
    # 4-tuple: bind() alone would take an ephemeral port per address and run
    # short with thousands of sockets.
    s.setsockopt(socket.IPPROTO_IP, getattr(socket, "IP_BIND_ADDRESS_NO_PORT", 24), 1)
    try:
        s.bind((src, 0))
    except OSError:
        s.close()
        raise
    s.settimeout(timeout)
    return s


def errname(e):
    if isinstance(e, socket.timeout):
        return "timeout"
    return errno.errorcode.get(e.errno, str(e.errno))


def reset(s):
    try:
        s.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
    except OSError:
        pass
    s.close()


def pct(sorted_vals, p):
    if not sorted_vals:
        return None
    i = min(len(sorted_vals) - 1, max(0, int(round(p / 100.0 * len(sorted_vals) + 0.5)) - 1))
    return sorted_vals[i]


# ----------------------------------------------------------------- hold


class Held:
    __slots__ = ("sock", "src", "state", "first_byte", "sent", "t_end", "buf")

    def __init__(self, sock, src):
        self.sock = sock
        self.src = src
        self.state = "open"  # open, refused, r408, fin, rst
        self.first_byte = None
        self.sent = 0
        self.t_end = None
        self.buf = b""


def dead(s):
    """True if the server reset or closed @s (nothing blocks)."""
    r, _, _ = select.select([s], [], [], 0)
    if not r:
        return None
    try:
        data = s.recv(4096, socket.MSG_PEEK)
    except OSError:
        return "rst"
    return "fin" if data == b"" else None


def watch(h):
    """Read what the server sent to @h; update its state."""
    try:
        data = h.sock.recv(4096)
    except BlockingIOError:
        return
    except OSError:
        h.state = "rst"
        h.t_end = now()
        return
    if data:
        h.buf += data
        if h.buf.startswith(b"HTTP/1.1 408"):
            h.state = "r408"
            h.t_end = now()
        elif len(h.buf) >= 12:
            h.state = "other"
            h.t_end = now()
        return
    if h.state == "open":
        h.state = "fin"
        h.t_end = now()


def phase_hold(args):
    t0 = now()
    srcs = args.src.split(",")
    held = []
    connect_errors = {}
    for src in srcs:
        for _ in range(args.per_src):
            if now() - t0 > args.max_seconds / 2:
                break
            try:
                s = bound_socket(src, 3.0)
            except OSError as e:
                connect_errors[errname(e)] = connect_errors.get(errname(e), 0) + 1
                continue
            try:
                s.connect((args.server, PORT))
            except OSError as e:
                connect_errors[errname(e)] = connect_errors.get(errname(e), 0) + 1
                s.close()
                continue
            held.append(Held(s, src))
    # The server refuses beyond a cap with an RST to the handshake's ACK:
    # connect() has returned by then. Wait until the count of dead sockets
    # stops moving (0.5 s unchanged, 5 s at most).
    last, stable_since, t_open = -1, now(), now()
    while now() - t_open < 5:
        n = 0
        for h in held:
            if h.state == "open" and dead(h.sock):
                h.state = "refused"
            n += h.state == "refused"
        if n != last:
            last, stable_since = n, now()
        elif now() - stable_since >= 0.5:
            break
        time.sleep(0.1)
    for h in held:
        h.sock.setblocking(False)
    alive = [h for h in held if h.state == "open"]
    by_src = {src: sum(1 for h in alive if h.src == src) for src in srcs}
    ready = {"opened": len(held), "connect_failed": sum(connect_errors.values()),
             "connect_errors": connect_errors,
             # Refused: reset at once, after the handshake (connect() may see it).
             "refused": sum(h.state == "refused" for h in held) + connect_errors.get("ECONNRESET", 0),
             "alive": len(alive),
             "alive_by_src": by_src, "open_seconds": round(t_open - t0, 2)}
    with open(args.ready + ".tmp", "w") as f:
        json.dump(ready, f)
    os.rename(args.ready + ".tmp", args.ready)

    next_drip = now()
    while now() - t0 < args.max_seconds and not os.path.exists(args.stop):
        live = [h for h in alive if h.state == "open"]
        if args.drip and now() >= next_drip:
            next_drip += args.drip
            for h in live:
                chunk = DRIP_HEAD if h.sent == 0 else b"a"
                try:
                    h.sock.send(chunk, socket.MSG_NOSIGNAL)
                except BlockingIOError:
                    continue
                except OSError:
                    h.state = "rst"
                    h.t_end = now()
                    continue
                if h.first_byte is None:
                    h.first_byte = now()
                h.sent += len(chunk)
        socks = [h.sock for h in live]
        if socks:
            r, _, _ = select.select(socks, [], [], 0.05)
            if r:
                by_sock = {h.sock: h for h in live}
                for s in r:
                    watch(by_sock[s])
        else:
            time.sleep(0.05)
    t408 = sorted(h.t_end - h.first_byte for h in alive if h.state == "r408" and h.first_byte)
    summary = dict(ready)
    summary.update({
        "r408": sum(h.state == "r408" for h in alive),
        "fin": sum(h.state == "fin" for h in alive),
        "rst": sum(h.state == "rst" for h in alive),
        "other": sum(h.state == "other" for h in alive),
        "still_open": sum(h.state == "open" for h in alive),
        "rst_by_src": {src: sum(1 for h in alive if h.state == "rst" and h.src == src) for src in srcs},
        # When each reset came (CLOCK_MONOTONIC, as time.monotonic()) and to whom.
        "rst_events": sorted([round(h.t_end, 3), h.src] for h in alive if h.state == "rst"),
        "t408_min": round(t408[0], 3) if t408 else None,
        "t408_max": round(t408[-1], 3) if t408 else None,
        "held_seconds": round(now() - t_open, 2),
    })
    for h in held:
        reset(h.sock)
    out(args, "hold", summary)
    return 0


# ----------------------------------------------------------------- legit


def one_get(args, path):
    """(ok, latency seconds, error kind) of one GET on a new connection."""
    t = now()
    try:
        s = bound_socket(args.src, args.timeout)
    except OSError as e:
        return False, now() - t, errname(e)
    try:
        s.connect((args.server, PORT))
        s.sendall(f"GET {path} HTTP/1.1\r\nHost: sandbox\r\nConnection: close\r\n\r\n".encode())
        data = b""
        while True:
            left = args.timeout - (now() - t)
            if left <= 0:
                raise socket.timeout()
            s.settimeout(left)
            chunk = s.recv(4096)
            if not chunk:
                break
            data += chunk
        ok = data.startswith(b"HTTP/1.1 200")
        return ok, now() - t, None if ok else "status:" + data[9:12].decode("ascii", "replace")
    except socket.timeout:
        return False, now() - t, "timeout"
    except OSError as e:
        return False, now() - t, errname(e)
    finally:
        s.close()


def phase_legit(args):
    lock = threading.Lock()
    lat, errors = [], {}
    sent = [0]
    t_end = now() + args.seconds

    def worker():
        while now() < t_end:
            with lock:
                if sent[0] >= args.count:
                    return
                sent[0] += 1
            ok, dt, err = one_get(args, args.path)
            with lock:
                if ok:
                    lat.append(dt)
                else:
                    errors[err] = errors.get(err, 0) + 1

    t0 = now()
    threads = [threading.Thread(target=worker) for _ in range(args.threads)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    elapsed = now() - t0
    lat.sort()
    n = sent[0]
    summary = {
        "sent": n, "ok": len(lat), "failed": n - len(lat), "errors": errors,
        "success_pct": round(100.0 * len(lat) / n, 3) if n else 0.0,
        "rps": round(n / elapsed, 1) if elapsed > 0 else 0.0,
        "p50_ms": round(pct(lat, 50) * 1000, 2) if lat else None,
        "p99_ms": round(pct(lat, 99) * 1000, 2) if lat else None,
        "max_ms": round(lat[-1] * 1000, 2) if lat else None,
        "seconds": round(elapsed, 2),
    }
    out(args, "legit", summary)
    return 0


# ----------------------------------------------------------------- flood


def read_response(s, buf):
    """(status, rest of buffer) of one response on keep-alive socket @s."""
    while b"\r\n\r\n" not in buf:
        chunk = s.recv(4096)
        if not chunk:
            raise ConnectionError("closed")
        buf += chunk
    head, _, rest = buf.partition(b"\r\n\r\n")
    status = int(head[9:12])
    clen = 0
    for line in head.split(b"\r\n")[1:]:
        k, _, v = line.partition(b":")
        if k.strip().lower() == b"content-length":
            clen = int(v.strip())
    while len(rest) < clen:
        chunk = s.recv(4096)
        if not chunk:
            raise ConnectionError("closed")
        rest += chunk
    close = b"connection: close" in head.lower()
    return status, rest[clen:], close


def phase_flood(args):
    req = (f"POST /v1/seckill/{args.item} HTTP/1.1\r\nHost: sandbox\r\n"
           f"Authorization: Bearer {args.token}\r\nContent-Length: 0\r\n\r\n").encode()
    statuses, errors, conns = {}, 0, 0
    t0 = now()
    s, buf, n = None, b"", 0
    while n < args.count and now() - t0 < args.max_seconds:
        if s is None:
            s = bound_socket(args.src, 3.0)
            try:
                s.connect((args.server, PORT))
            except OSError:
                errors += 1
                s.close()
                s = None
                time.sleep(0.01)
                continue
            conns += 1
            buf = b""
        n += 1
        try:
            s.sendall(req)
            st, buf, close = read_response(s, buf)
            statuses[str(st)] = statuses.get(str(st), 0) + 1
        except (OSError, ConnectionError, ValueError):
            errors += 1
            close = True
        if close:
            s.close()
            s = None
    if s is not None:
        s.close()
    out(args, "flood", {"sent": n, "statuses": statuses, "errors": errors,
                        "connections": conns, "seconds": round(now() - t0, 3)})
    return 0


def main():
    import resource

    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (min(hard, 8192), hard))
    p = argparse.ArgumentParser()
    p.add_argument("server")
    p.add_argument("phase", choices=("hold", "legit", "flood"))
    p.add_argument("--src", required=True)
    p.add_argument("--json")
    p.add_argument("--per-src", type=int, default=64)
    p.add_argument("--drip", type=float, default=0.0)
    p.add_argument("--ready")
    p.add_argument("--stop")
    p.add_argument("--max-seconds", type=float, default=30.0)
    p.add_argument("--threads", type=int, default=2)
    p.add_argument("--seconds", type=float, default=10.0)
    p.add_argument("--count", type=int, default=100000)
    p.add_argument("--timeout", type=float, default=5.0)
    p.add_argument("--path", default="/healthz")
    p.add_argument("--token")
    p.add_argument("--item", type=int, default=1)
    args = p.parse_args()
    if args.phase == "hold":
        if not args.ready or not args.stop:
            sys.exit("hold needs --ready and --stop")
        return phase_hold(args)
    if args.phase == "legit":
        return phase_legit(args)
    if not args.token:
        sys.exit("flood needs --token")
    return phase_flood(args)


if __name__ == "__main__":
    sys.exit(main())
