#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""tls_clients.py COMMAND SERVER [ARGS] - bounded raw and TLS clients for
tests/integration/tls.sh, run inside the sandbox namespace. Every socket
has a timeout; each command prints one JSON line and exits 0 (1 on a
usage error).

Commands:
  garbage SERVER PORT     four hostile openings, one connection each: a
                          handshake record of junk, a record longer than
                          TLS allows, application data before any
                          handshake, plaintext HTTP. For each: the alert
                          the server sent (its description code, or null),
                          and how the connection ended ("fin", "rst", or
                          "open" if it did not end within 5 s)
  stall SERVER PORT N MODE HOLD READY
                          N connections opened one after another, then
                          held for HOLD seconds at most: MODE "silent"
                          sends nothing, "partial" the first 32 bytes of a
                          real ClientHello, "drip" a real ClientHello one
                          byte every 100 ms. Prints how many the server
                          ended and when (seconds after their connect),
                          and how many were still open at the end. Writes
                          "ready" to the file READY once all N are open
                          (the shell polls for it)
  close SERVER PORT SNI   two HTTPS requests on new connections: one with
                          "Connection: close" (the server must end with
                          close_notify, then FIN), one closed by the client
                          with close_notify (the server must answer it with
                          its own close_notify, then FIN)
  early SESSION           (no network) the TLS 1.3 session of PEM file
                          SESSION (s_client -sess_out) with its
                          max_early_data set to 16384, as PEM on stdout: a
                          client that resumes it sends early data, which a
                          server that never allowed any must reject
"""
import base64
import json
import select
import socket
import ssl
import sys
import time

TIMEOUT = 5.0


def client_hello(sni="shop.test"):
    """The bytes of a real TLS ClientHello (made by Python's OpenSSL
    through memory BIOs, nothing sent)."""
    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
    ctx.check_hostname = False
    ctx.verify_mode = ssl.CERT_NONE
    inc, out = ssl.MemoryBIO(), ssl.MemoryBIO()
    obj = ctx.wrap_bio(inc, out, server_hostname=sni)
    try:
        obj.do_handshake()
    except ssl.SSLWantReadError:
        pass
    return out.read()


def read_to_end(s, limit):
    """Everything the peer sends until it ends the connection or LIMIT
    seconds pass: (bytes, "fin" | "rst" | "open")."""
    data = b""
    end = time.monotonic() + limit
    while True:
        left = end - time.monotonic()
        if left <= 0:
            return data, "open"
        s.settimeout(left)
        try:
            chunk = s.recv(4096)
        except (ConnectionResetError, BrokenPipeError):
            return data, "rst"
        except socket.timeout:
            return data, "open"
        except ssl.SSLError:
            return data, "tls_error"
        if not chunk:
            return data, "fin"
        data += chunk


def alert_of(data):
    """The description of the first record of DATA if it is an alert
    (content type 21, length 2), else None."""
    if len(data) >= 7 and data[0] == 0x15 and data[1] == 0x03 and data[3:5] == b"\x00\x02":
        return data[6]
    return None


def garbage(server, port):
    cases = {
        # a handshake record whose body is no handshake message
        "junk_handshake": b"\x16\x03\x01\x00\x08" + b"\xff" * 8,
        # a record header announcing 0x4801 bytes: past 2^14 + 2048
        "oversized": b"\x16\x03\x01\x48\x01" + b"\x00" * 64,
        # application data before the handshake
        "early_appdata": b"\x17\x03\x03\x00\x10" + b"\x00" * 16,
        # plain HTTP to the TLS port
        "plain_http": b"GET /healthz HTTP/1.1\r\nHost: shop.test\r\n\r\n",
    }
    res = {}
    for name, raw in cases.items():
        s = socket.create_connection((server, port), timeout=TIMEOUT)
        try:
            s.sendall(raw)
        except OSError:
            pass
        data, how = read_to_end(s, TIMEOUT)
        s.close()
        res[name] = {"alert": alert_of(data), "end": how, "reply": data[:16].hex()}
    return res


def watch(conns, wait):
    """Note the end of each connection of CONNS that the server ended (FIN
    or RST), waiting up to WAIT seconds for the first event."""
    live = [c for c in conns if c["end"] is None]
    if not live:
        return
    r, _, _ = select.select([c["s"] for c in live], [], [], wait)
    for c in live:
        if c["s"] not in r:
            continue
        how = "fin"
        try:
            chunk = c["s"].recv(4096)
        except (ConnectionResetError, BrokenPipeError):
            chunk, how = b"", "rst"
        except BlockingIOError:
            continue
        if not chunk:
            c["end"] = time.monotonic() - c["t0"]
            c["how"] = how


def stall(server, port, n, mode, hold, ready):
    hello = client_hello()
    conns = []
    for _ in range(n):
        c = {"s": None, "t0": time.monotonic(), "sent": 0, "end": None, "how": None}
        conns.append(c)
        try:
            c["s"] = socket.create_connection((server, port), timeout=TIMEOUT)
        except (ConnectionResetError, ConnectionRefusedError):
            # reset before connect() returned: refused at the accept
            c["end"], c["how"] = time.monotonic() - c["t0"], "rst"
            continue
        c["s"].setblocking(False)
        if mode == "partial":
            c["s"].send(hello[:32])
        watch(conns, 0)
    with open(ready, "w") as f:
        f.write("ready\n")
    deadline = time.monotonic() + hold
    next_drip = time.monotonic()
    while time.monotonic() < deadline and any(c["end"] is None for c in conns):
        now = time.monotonic()
        if mode == "drip" and now >= next_drip:
            next_drip = now + 0.1
            for c in conns:
                if c["end"] is None and c["sent"] < len(hello):
                    try:
                        c["s"].send(hello[c["sent"]:c["sent"] + 1])
                        c["sent"] += 1
                    except OSError:
                        pass
        watch(conns, 0.05)
    ends = sorted(round(c["end"], 2) for c in conns if c["end"] is not None)
    out = {
        "opened": n,
        "ended": len(ends),
        "open_at_end": n - len(ends),
        "ended_within_1s": sum(1 for e in ends if e < 1.0),
        "ended_after_1s": sum(1 for e in ends if e >= 1.0),
        "first_end_s": ends[0] if ends else None,
        "last_end_s": ends[-1] if ends else None,
        "rst": sum(1 for c in conns if c["how"] == "rst"),
        "max_bytes_sent": max((c["sent"] for c in conns), default=0),
    }
    for c in conns:
        if c["s"] is not None:
            c["s"].close()
    return out


def https_get(server, port, sni, close):
    """One GET /healthz over TLS: the response bytes and the TLS socket."""
    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
    ctx.check_hostname = False
    ctx.verify_mode = ssl.CERT_NONE
    raw = socket.create_connection((server, port), timeout=TIMEOUT)
    s = ctx.wrap_socket(raw, server_hostname=sni, suppress_ragged_eofs=False)
    hdr = "Connection: close\r\n" if close else ""
    s.sendall(f"GET /healthz HTTP/1.1\r\nHost: {sni}\r\n{hdr}\r\n".encode())
    return s


def recv_until(s, data, done):
    """DATA plus what TLS socket S reads until done(data) holds or the
    stream ends (close_notify, or a bare FIN)."""
    while not done(data):
        try:
            chunk = s.recv(4096)
        except ssl.SSLEOFError:
            break
        if not chunk:
            break
        data += chunk
    return data


def read_response(s):
    """One HTTP response (head + Content-Length body) off TLS socket S:
    its status line."""
    data = recv_until(s, b"", lambda d: b"\r\n\r\n" in d)
    head, _, body = data.partition(b"\r\n\r\n")
    n = 0
    for line in head.split(b"\r\n")[1:]:
        k, _, v = line.partition(b":")
        if k.strip().lower() == b"content-length":
            n = int(v)
    recv_until(s, body, lambda d: len(d) >= n)
    return head.split(b"\r\n")[0].decode(errors="replace")


def close(server, port, sni):
    res = {}
    # 1. the server closes: the response, then close_notify (recv gives
    # b"" only for close_notify: a bare FIN raises SSLEOFError), then FIN.
    s = https_get(server, port, sni, True)
    status = read_response(s)
    try:
        notify = s.recv(4096) == b""
    except ssl.SSLEOFError:
        notify = False
    if notify:
        raw = s.unwrap()
        _, how = read_to_end(raw, TIMEOUT)
    else:
        raw, how = s, "fin_without_close_notify"
    raw.close()
    res["server_close"] = {"status": status, "close_notify": notify, "end": how}
    # 2. the client closes: its close_notify, the server's answer, then FIN.
    s = https_get(server, port, sni, False)
    status = read_response(s)
    try:
        raw = s.unwrap()
        answered = True
    except (ssl.SSLError, OSError):
        raw, answered = s, False
    _, how = read_to_end(raw, TIMEOUT)
    raw.close()
    res["client_close"] = {"status": status, "close_notify_answered": answered, "end": how}
    return res


def der_len(b, i):
    """The DER length at B[I]: (length, index of the contents)."""
    n = b[i]
    if n < 0x80:
        return n, i + 1
    k = n & 0x7F
    return int.from_bytes(b[i + 1:i + 1 + k], "big"), i + 1 + k


def der_len_bytes(n):
    if n < 0x80:
        return bytes([n])
    v = n.to_bytes((n.bit_length() + 7) // 8, "big")
    return bytes([0x80 | len(v)]) + v


def early(path):
    """OpenSSL's SSL_SESSION (ssl/ssl_asn1.c) is a SEQUENCE whose optional
    fields are [n] EXPLICIT in order of n; max_early_data is [15], absent
    when 0. Insert it before the first field past [15]."""
    with open(path) as f:
        pem = f.read()
    label = "SSL SESSION PARAMETERS"
    b64 = pem.split(f"-----BEGIN {label}-----")[1].split(f"-----END {label}-----")[0]
    der = base64.b64decode("".join(b64.split()))
    n, i = der_len(der, 1)
    body = der[i:i + n]
    field = b"\xaf\x04\x02\x02\x40\x00"  # [15] { INTEGER 16384 }
    out, j, done = b"", 0, False
    while j < len(body):
        tag = body[j]
        ln, k = der_len(body, j + 1)
        if tag & 0x1F == 15 and tag & 0xC0 == 0x80:
            raise SystemExit("the session already allows early data")
        if not done and tag & 0xC0 == 0x80 and tag & 0x1F > 15:
            out, done = out + field, True
        out += body[j:k + ln]
        j = k + ln
    if not done:
        out += field
    der = b"\x30" + der_len_bytes(len(out)) + out
    s = base64.b64encode(der).decode()
    lines = "\n".join(s[x:x + 64] for x in range(0, len(s), 64))
    return f"-----BEGIN {label}-----\n{lines}\n-----END {label}-----\n"


def main():
    a = sys.argv[1:]
    if len(a) == 3 and a[0] == "garbage":
        out = garbage(a[1], int(a[2]))
    elif len(a) == 7 and a[0] == "stall" and a[4] in ("silent", "partial", "drip"):
        out = stall(a[1], int(a[2]), int(a[3]), a[4], float(a[5]), a[6])
    elif len(a) == 4 and a[0] == "close":
        out = close(a[1], int(a[2]), a[3])
    elif len(a) == 2 and a[0] == "early":
        sys.stdout.write(early(a[1]))
        return 0
    else:
        sys.stderr.write(__doc__)
        return 1
    print(json.dumps(out, sort_keys=True))
    return 0


if __name__ == "__main__":
    sys.exit(main())
