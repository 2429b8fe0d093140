#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""challenge_ack.py SERVER DEV --sandbox SANDBOX_SH --json OUT [--count N]

RFC 5961's per-connection challenge-ACK limit, seen from outside: run inside
the sandbox namespace (ip netns exec), as root, with the dataplane on one
lcore (its counters are /seckill/net,0).

Two keep-alive connections A and B (kernel sockets) each answer one
GET /healthz. An AF_PACKET socket on DEV, opened before they connect, sees
their handshakes (both ISNs) and every segment after. Forged segments go
out through a raw IPv4 socket (IPPROTO_RAW, our own IP header and TCP
checksum), so the kernel's own TCP state is untouched.

  rst  N RSTs to A and N to B, interleaved, back to back; seq = rcv_nxt + 100
       (in the window, not rcv_nxt: RFC 5961 §3 -> challenge ACK)
  syn  once A's challenge interval (challenge_ack_conn_ms, 500 ms) has
       passed since its last challenge ACK: N SYNs to A (RFC 5961 §4);
       B is left alone and watched ("quiet": server segments seen on it)

For each phase and connection the summary gives: the forged segments seen
leaving, the challenge ACKs seen coming back (pure ACKs from the server
port, seq == the server's snd_nxt, ack == our snd_nxt), any other server
segment, the send span and "allowed" = 1 + floor(span / 0.5 s); and the
phase's deltas of tcp_challenge_ack, tcp_challenge_conn_limited,
tcp_challenge_limited, tcp_rst_rx, tcp_rst_ignored. Each phase waits
(bounded) until the telemetry has counted every forged segment and the
sniffer has seen as many challenge ACKs as tcp_challenge_ack says were sent.
Then a second GET /healthz on A and on B (same kernel sockets): "after".

This script only measures; challenge_ack.sh asserts: per connection and
phase 1 <= challenge ACKs <= allowed (B gets its own: the limit is per
connection), no other server segment (none at all on B in syn),
tcp_challenge_ack moved by the ACKs seen, conn_limited + limited by the
rest, tcp_challenge_limited, tcp_rst_rx and tcp_rst_ignored not at all, and
both second GETs answered 200 (no forged RST was taken).
"""
import argparse
import json
import math
import socket
import struct
import subprocess
import sys
import threading
import time

from inet_cksum import checksum

PORT = 80
ETH_P_ALL = 0x0003
PACKET_HOST, PACKET_OUTGOING = 0, 4
FIN, SYN, RST, PSH, ACK = 0x01, 0x02, 0x04, 0x08, 0x10
INTERVAL = 0.5  # challenge_ack_conn_ms, the dataplane's default
REQ = b"GET /healthz HTTP/1.1\r\nHost: sandbox\r\n\r\n"
COUNTERS = ("tcp_challenge_ack", "tcp_challenge_conn_limited", "tcp_challenge_limited",
            "tcp_rst_rx", "tcp_rst_ignored")


class Sniffer(threading.Thread):
    """Every IPv4/TCP segment to or from SERVER:80 on DEV, with its time."""

    def __init__(self, dev, server):
        super().__init__(daemon=True)
        self.sock = socket.socket(socket.AF_PACKET, socket.SOCK_RAW, socket.htons(ETH_P_ALL))
        self.sock.bind((dev, 0))
        self.sock.settimeout(0.2)
        self.server = socket.inet_aton(server)
        self.segs = []
        self.lock = threading.Lock()
        self.stop = False

    def run(self):
        while not self.stop:
            try:
                frame, addr = self.sock.recvfrom(65535)
            except socket.timeout:
                continue
            t = time.monotonic()
            if frame[12:14] != b"\x08\x00" or frame[23] != socket.IPPROTO_TCP:
                continue
            ip = frame[14:]
            ihl = (ip[0] & 15) * 4
            tot = struct.unpack("!H", ip[2:4])[0]
            tcp = ip[ihl:tot]
            sport, dport, seq, ack, off, flags, win = struct.unpack("!HHIIBBH", tcp[:16])
            src, dst = ip[12:16], ip[16:20]
            if src == self.server and sport == PORT:
                d, cport = "in", dport
            elif dst == self.server and dport == PORT:
                d, cport = "out", sport
            else:
                continue
            if (d == "in") != (addr[2] == PACKET_HOST):
                continue  # a copy the other way round: not ours to count
            seg = dict(t=t, dir=d, port=cport, seq=seq, ack=ack, flags=flags, win=win,
                       len=len(tcp) - (off >> 4) * 4)
            with self.lock:
                self.segs.append(seg)

    def find(self, pred):
        with self.lock:
            return [s for s in self.segs if pred(s)]


def wait_for(cond, seconds, step=0.02):
    """cond() until true or SECONDS have passed; its last value."""
    end = time.monotonic() + seconds
    while True:
        v = cond()
        if v or time.monotonic() >= end:
            return v
        time.sleep(step)


def forge(src, dst, sport, seq, ack, flags):
    """An IPv4 + TCP segment without payload, both checksums ours."""
    s_ip, d_ip = socket.inet_aton(src), socket.inet_aton(dst)
    tcp = struct.pack("!HHIIBBHHH", sport, PORT, seq, ack, 5 << 4, flags, 65535, 0, 0)
    pseudo = s_ip + d_ip + struct.pack("!BBH", 0, socket.IPPROTO_TCP, len(tcp))
    tcp = tcp[:16] + struct.pack("!H", checksum(pseudo + tcp)) + tcp[18:]
    ip = struct.pack("!BBHHHBBH4s4s", 0x45, 0, 20 + len(tcp), 0, 0x4000, 64, socket.IPPROTO_TCP,
                     0, s_ip, d_ip)
    ip = ip[:10] + struct.pack("!H", checksum(ip)) + ip[12:]
    return ip + tcp


def get(sock):
    """GET /healthz on a keep-alive connection: (status, bytes received)."""
    sock.sendall(REQ)
    data = b""
    while b"\r\n\r\n" not in data:
        chunk = sock.recv(4096)
        if not chunk:
            raise ConnectionError("closed before the head")
        data += chunk
    head, body = data.split(b"\r\n\r\n", 1)
    length = 0
    for line in head.split(b"\r\n")[1:]:
        k, _, v = line.partition(b":")
        if k.strip().lower() == b"content-length":
            length = int(v)
    while len(body) < length:
        chunk = sock.recv(4096)
        if not chunk:
            raise ConnectionError("closed in the body")
        body += chunk
    return int(head.split(b" ")[1]), len(head) + 4 + len(body)


class Conn:
    """A kernel TCP connection and what we know of both sequence spaces."""

    def __init__(self, name, server, sniff):
        self.name = name
        self.sock = socket.create_connection((server, PORT), timeout=5)
        self.sock.settimeout(5)
        self.ip, self.port = self.sock.getsockname()
        syn = wait_for(lambda: sniff.find(lambda s: s["port"] == self.port and s["dir"] == "out"
                                          and s["flags"] & SYN), 2)
        synack = wait_for(lambda: sniff.find(lambda s: s["port"] == self.port and s["dir"] == "in"
                                             and s["flags"] & SYN), 2)
        if not syn or not synack:
            raise RuntimeError(f"{name}: handshake not seen by the sniffer")
        self.isn, self.server_isn = syn[0]["seq"], synack[0]["seq"]
        self.sent = self.received = 0

    def get(self):
        status, n = get(self.sock)
        self.sent += len(REQ)
        self.received += n
        return status

    @property
    def snd_nxt(self):
        return (self.isn + 1 + self.sent) & 0xFFFFFFFF

    @property
    def rcv_nxt(self):
        return (self.server_isn + 1 + self.received) & 0xFFFFFFFF


def telemetry(sbx):
    out = subprocess.run([sbx, "telemetry", "/seckill/net,0"], check=True, capture_output=True,
                         timeout=10).stdout
    t = json.loads(out)
    return {k: t[k] for k in COUNTERS}


def delta(a, b):
    return {k: b[k] - a[k] for k in COUNTERS}


def attack(args, sniff, raw, conns, flags, server, quiet=()):
    """N segments with FLAGS to each of CONNS, interleaved; the phase's figures
    (with the server's segments on the connections QUIET, not attacked)."""
    t0 = telemetry(args.sandbox)
    start, sent_at = time.monotonic(), {c.name: [] for c in conns}
    for _ in range(args.count):
        for c in conns:
            pkt = forge(c.ip, server, c.port, (c.snd_nxt + 100) & 0xFFFFFFFF, c.rcv_nxt, flags)
            raw.sendto(pkt, (server, 0))
            sent_at[c.name].append(time.monotonic())
    total = args.count * len(conns)
    challenged = ("tcp_challenge_ack", "tcp_challenge_conn_limited", "tcp_challenge_limited")

    def chal(c):
        return sniff.find(lambda s: s["port"] == c.port and s["dir"] == "in" and s["t"] >= start
                          and s["flags"] == ACK and s["len"] == 0
                          and s["ack"] == c.snd_nxt and s["seq"] == c.rcv_nxt)

    def counted():
        d = delta(t0, telemetry(args.sandbox))
        return sum(d[k] for k in challenged) >= total

    # Every forged segment counted by the dataplane (challenged one way or
    # another), then every challenge ACK it counts as sent seen here.
    wait_for(counted, 10, 0.05)
    sent = delta(t0, telemetry(args.sandbox))["tcp_challenge_ack"]
    wait_for(lambda: sum(len(chal(c)) for c in conns) >= sent, 3)
    time.sleep(0.1)  # a grace for stragglers beyond that count (they would fail the test)
    phase = {"sent": total, "telemetry": delta(t0, telemetry(args.sandbox)), "conns": {},
             "quiet": {q.name: len(sniff.find(lambda s: s["port"] == q.port and s["dir"] == "in"
                                              and s["t"] >= start)) for q in quiet}}
    for c in conns:
        acks = chal(c)
        other = sniff.find(lambda s: s["port"] == c.port and s["dir"] == "in" and s["t"] >= start
                           and s not in acks)
        seen_out = sniff.find(lambda s: s["port"] == c.port and s["dir"] == "out" and s["t"] >= start
                              and s["flags"] == flags)
        span = sent_at[c.name][-1] - sent_at[c.name][0]
        phase["conns"][c.name] = {
            "forged": len(sent_at[c.name]), "forged_seen": len(seen_out),
            "challenge_acks": len(acks), "other_server_segs": len(other),
            "span_ms": round(span * 1000, 2), "allowed": 1 + math.floor(span / INTERVAL),
            "last_ack_t": acks[-1]["t"] if acks else None,
        }
    return phase


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("server")
    ap.add_argument("dev")
    ap.add_argument("--sandbox", required=True, help="scripts/sandbox.sh (telemetry)")
    ap.add_argument("--json", required=True)
    ap.add_argument("--count", type=int, default=50)
    args = ap.parse_args()

    sniff = Sniffer(args.dev, args.server)
    sniff.start()
    raw = socket.socket(socket.AF_INET, socket.SOCK_RAW, socket.IPPROTO_RAW)
    a, b = Conn("A", args.server, sniff), Conn("B", args.server, sniff)
    out = {"before": {"A": a.get(), "B": b.get()}}
    # Both responses acknowledged by the kernel: nothing of theirs left to resend.
    for c in (a, b):
        if not wait_for(lambda: sniff.find(lambda s: s["port"] == c.port and s["dir"] == "out"
                                           and s["flags"] & ACK and s["ack"] == c.rcv_nxt), 2):
            raise RuntimeError(f"{c.name}: our ACK of the response not seen")
        last = sniff.find(lambda s: s["port"] == c.port and s["dir"] == "in")[-1]
        if last["win"] <= 100:
            raise RuntimeError(f"{c.name}: server window {last['win']}: rcv_nxt + 100 not inside")
    out["rst"] = attack(args, sniff, raw, [a, b], RST, args.server)

    # The syn phase needs A's interval over: wait for time to pass (not an assertion).
    last = out["rst"]["conns"]["A"]["last_ack_t"] or time.monotonic()
    time.sleep(max(0.0, last + INTERVAL + 0.1 - time.monotonic()))
    out["syn"] = attack(args, sniff, raw, [a], SYN, args.server, quiet=[b])

    out["after"] = {"A": a.get(), "B": b.get()}
    for c in (a, b):
        c.sock.close()
    sniff.stop = True
    sniff.join()
    for ph in ("rst", "syn"):
        for ph_c in out[ph]["conns"].values():
            ph_c.pop("last_ack_t")
    json.dump(out, open(args.json, "w"), indent=1)
    print(json.dumps(out))


if __name__ == "__main__":
    sys.exit(main())
