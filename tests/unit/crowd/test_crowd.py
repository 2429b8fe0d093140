#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""seckill-crowd end to end against crowd_fake_server on 127.0.0.1.

    test_crowd.py SECKILL_CROWD CROWD_FAKE_SERVER

Every scenario starts its own fake front door (a fresh port, a fresh stock),
runs the client with --json, and checks the exit status and the figures:
a good server passes every check; each broken variant breaks one promise
and the client must name it and exit 1. With --tls the client speaks to a
TLS terminator in this process (Python's ssl, certificates made with the
openssl CLI in the temporary directory) in front of the fake server. Every
process is bounded in time and stopped by its own PID.
"""
import asyncio
import json
import os
import shutil
import socket
import subprocess
import sys
import ssl
import tempfile
import threading

CROWD, FAKE = sys.argv[1], sys.argv[2]
TMP = tempfile.mkdtemp(prefix="crowd-test-")
failures = []


class Fake:
    """The fake server as a context manager: .port while it runs."""

    def __init__(self, *args):
        self.args = [FAKE, "--max-seconds", "60", *args]

    def __enter__(self):
        self.proc = subprocess.Popen(self.args, stdout=subprocess.PIPE,
                                     stderr=subprocess.DEVNULL, text=True)
        line = self.proc.stdout.readline().split()
        if len(line) != 2 or line[0] != "port":
            self.proc.kill()
            raise RuntimeError("fake server did not start: %r" % line)
        self.port = int(line[1])
        return self

    def __exit__(self, *exc):
        self.proc.terminate()
        try:
            self.proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait(timeout=10)


class TlsProxy:
    """A TLS terminator on 127.0.0.1 in front of a fake server, as a context
    manager: .port while it runs; counts the handshakes it finished
    (.full, .resumed) and the versions."""

    def __init__(self, backend, cert, key, version=None):
        self.backend, self.full, self.resumed, self.versions = backend, 0, 0, {}
        self.ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        self.ctx.load_cert_chain(cert, key)
        self.ctx.set_alpn_protocols(["http/1.1"])
        if version is not None:
            self.ctx.minimum_version = self.ctx.maximum_version = version
        self.ready = threading.Event()

    async def handle(self, reader, writer):
        tls = writer.get_extra_info("ssl_object")
        if tls.session_reused:
            self.resumed += 1
        else:
            self.full += 1
        self.versions[tls.version()] = self.versions.get(tls.version(), 0) + 1
        try:
            r2, w2 = await asyncio.open_connection("127.0.0.1", self.backend)
        except OSError:
            writer.close()
            return

        async def pump(r, w):
            try:
                while True:
                    data = await r.read(65536)
                    if not data:
                        break
                    w.write(data)
                    await w.drain()
            except (OSError, ssl.SSLError):
                pass
            finally:
                w.close()
        await asyncio.gather(pump(reader, w2), pump(r2, writer))

    def run(self):
        self.loop = asyncio.new_event_loop()
        self.loop.set_exception_handler(lambda loop, ctx: None)  # failed handshakes
        self.server = self.loop.run_until_complete(
            asyncio.start_server(self.handle, "127.0.0.1", 0, ssl=self.ctx))
        self.port = self.server.sockets[0].getsockname()[1]
        self.ready.set()
        self.loop.run_forever()
        self.server.close()
        self.loop.close()

    def __enter__(self):
        self.thread = threading.Thread(target=self.run, daemon=True)
        self.thread.start()
        if not self.ready.wait(10):
            raise RuntimeError("TLS proxy did not start")
        return self

    def __exit__(self, *exc):
        self.loop.call_soon_threadsafe(self.loop.stop)
        self.thread.join(10)


def crowd(port, *args, timeout=60, server=None):
    """Run the client; returns (exit status, JSON summary or None, stdout).
    server: the --server value instead of 127.0.0.1 --port PORT."""
    out = os.path.join(TMP, "summary.json")
    if os.path.exists(out):
        os.unlink(out)
    where = ["--server", "127.0.0.1", "--port", str(port)] if server is None else \
        ["--server", server]
    argv = [CROWD, *where, "--json", out, "--max-seconds", "30", *args]
    p = subprocess.run(argv, capture_output=True, text=True, timeout=timeout)
    summary = None
    if os.path.exists(out) and os.path.getsize(out) > 0:
        with open(out) as f:
            summary = json.load(f)
    return p.returncode, summary, p.stdout + p.stderr


def check(name, cond, detail=""):
    if cond:
        print("ok - %s" % name)
    else:
        print("not ok - %s %s" % (name, detail))
        failures.append(name)


BASE = ["--item", "1", "--users", "2000", "--attempts", "5000", "--conns", "32"]


def consistent(s):
    """Accounting identities every summary must satisfy."""
    http = sum(s["http"].values())
    status = sum(s["status"].values())
    return (http == s["answered"] == status and
            s["answered"] + s["lost"] <= s["sent"] <= s["attempts"] + s["deferred"] and
            s["latency_ns"]["count"] == s["answered"] and
            s["latency_ns"]["p50"] <= s["latency_ns"]["p99"] <= s["latency_ns"]["max"])


def good_run():
    orders_path = os.path.join(TMP, "orders.txt")
    with Fake("--units", "100") as f:
        rc, s, out = crowd(f.port, *BASE, "--poll", "--expect-units", "100",
                           "--orders", orders_path)
    check("good: exit 0", rc == 0, out)
    if s is None:
        check("good: summary written", False, out)
        return
    check("good: 100 winners, 100 fresh wins", s["winners"] == 100 and s["fresh_wins"] == 100,
          str(s))
    check("good: every attempt answered", s["sent"] == s["answered"] == 5000, str(s))
    check("good: counts add up", consistent(s), str(s))
    check("good: 202s are wins plus duplicates",
          s["http"].get("202") == s["fresh_wins"] + s["duplicates"], str(s))
    check("good: the rest is sold out",
          s["status"].get("sold_out") == 5000 - 100 - s["duplicates"], str(s))
    check("good: retriers are 20 % of the users", s["retriers"] == 400, str(s))
    check("good: winners retried and got duplicates", s["duplicates"] > 0, str(s))
    check("good: polls 100/100 queued",
          s["polls"] == {"sent": 100, "ok": 100, "missing": 0, "bad": 0,
                         "status": {"queued": 100}}, str(s["polls"]))
    check("good: item read sold_out, 0 remaining",
          s["item_read"] == {"http": 200, "state": "sold_out", "remaining": 0},
          str(s["item_read"]))
    # gate and reserved_only apply with --gate / --reserved only: null here
    check("good: every check true (gate, reserved_only: not applicable)",
          all(v for k, v in s["checks"].items() if k not in ("gate", "reserved_only")) and
          s["checks"]["gate"] is None and s["gate"] is None and
          s["checks"]["reserved_only"] is None and s["ok"] and s["exit"] == 0,
          str(s["checks"]))
    check("good: human summary", "check: winners == units (100) OK" in out and
          "attempts 5000 (2000 users, 400 retrying)" in out, out)
    with open(orders_path) as f:
        rows = [tuple(map(int, line.split())) for line in f]
    check("good: --orders has 100 distinct users and orders",
          len(rows) == 100 and len({u for u, _ in rows}) == 100 and
          len({o for _, o in rows}) == 100 and all(1 <= u <= 2000 for u, _ in rows))


def ipv6():
    """The front door on ::1: a bracketed literal with its port, a bare one
    with --port; the summary names it as the Host header does."""
    with Fake("--ipv6", "--units", "50") as f:
        rc, s, out = crowd(f.port, *BASE, "--expect-units", "50", "--poll",
                           server="[::1]:%d" % f.port)
    check("ipv6 [::1]:port: exit 0, 50 winners",
          rc == 0 and s and s["winners"] == 50 and consistent(s), out)
    check("ipv6: summary names [::1]:port", s and s["server"] == "[::1]:%d" % f.port, str(s))
    with Fake("--ipv6", "--units", "10") as f:
        rc, s, out = crowd(f.port, "--users", "100", "--expect-units", "10",
                           "--port", str(f.port), server="::1")
    check("ipv6 ::1 --port: exit 0, 10 winners", rc == 0 and s and s["winners"] == 10, out)
    with Fake("--units", "10") as f:
        rc, s, out = crowd(f.port, "--users", "100", server="127.0.0.1:%d" % f.port)
    check("ipv4 127.0.0.1:port: exit 0", rc == 0 and s and s["winners"] == 10, out)


def expect_wrong():
    with Fake("--units", "100") as f:
        rc, s, out = crowd(f.port, *BASE, "--expect-units", "99")
    check("expect-units 99 vs 100 units: exit 1", rc == 1, out)
    check("expect-units: only that check fails",
          s is not None and s["checks"]["winners_eq_units"] is False and
          all(v is not False for k, v in s["checks"].items() if k != "winners_eq_units"),
          str(s))
    check("expect-units: human FAIL line", "winners == units (99): 100 winners FAIL" in out, out)


def broken(mode, key, violation=None, extra=()):
    with Fake("--units", "100", "--broken", mode) as f:
        rc, s, out = crowd(f.port, *BASE, "--poll", *extra)
    check("broken %s: exit 1" % mode, rc == 1, out)
    if s is None:
        check("broken %s: summary written" % mode, False, out)
        return s
    check("broken %s: check %s fails" % (mode, key), s["checks"][key] is False, str(s["checks"]))
    if violation:
        path, least = violation
        v = s
        for p in path:
            v = v[p]
        check("broken %s: %s >= %d" % (mode, "/".join(path), least), v >= least, str(s))
    check("broken %s: counts add up" % mode, consistent(s), str(s))
    return s


def broken_runs():
    s = broken("two-orders", "one_order_per_user", (("violations", "users_two_orders"), 1))
    check("two-orders: also won twice", s and s["violations"]["users_won_twice"] >= 1, str(s))
    check("two-orders: everything else holds",
          s and s["checks"]["orders_unique"] and s["checks"]["no_errors"], str(s))
    broken("dup-mismatch", "duplicates_match", (("violations", "dup_mismatch"), 1))
    broken("shared-order", "orders_unique", (("violations", "orders_shared"), 1))
    s = broken("poll-missing", "polls_ok", (("polls", "missing"), 1))
    check("poll-missing: 99 polls fine", s and s["polls"]["ok"] == 99, str(s))
    s = broken("drop", "no_errors", (("errors", "closed"), 1))
    check("drop: the dropped attempt is lost", s and s["lost"] >= 1, str(s))
    broken("garbage", "no_errors", (("errors", "protocol"), 1))


def reconnects():
    with Fake("--units", "100", "--close-every", "7") as f:
        rc, s, out = crowd(f.port, *BASE, "--poll", "--expect-units", "100")
    check("close-every 7: exit 0", rc == 0, out)
    check("close-every 7: reconnects, no errors",
          s and s["reconnects"] >= 5000 // 7 - 1 and s["errors"]["total"] == 0, str(s))


def busy():
    with Fake("--units", "100", "--busy-every", "10") as f:
        rc, s, out = crowd(f.port, *BASE, "--expect-units", "100")
    check("busy-every 10: exit 0", rc == 0, out)
    check("busy-every 10: 500 busy with Retry-After 1",
          s and s["status"].get("busy") == 500 and s["http"].get("429") == 500 and
          s["retry_after"] == {"count": 500, "max_s": 1}, str(s))


def auth():
    good = os.path.join(TMP, "secret")
    bad = os.path.join(TMP, "secret-other")
    with open(good, "w") as f:
        f.write("s" * 40 + "\n")
    with open(bad, "w") as f:
        f.write("t" * 40 + "\n")
    with Fake("--units", "100", "--secret-file", good) as f:
        rc, s, out = crowd(f.port, *BASE, "--secret-file", good, "--poll",
                           "--expect-units", "100")
        check("JWT: exit 0, 100 winners", rc == 0 and s and s["auth"] and s["winners"] == 100,
              out)
        rc, s, out = crowd(f.port, "--users", "50", "--secret-file", bad, "--expect-units", "0")
        check("JWT with another secret: all 401, exit 0 with expect 0",
              rc == 0 and s and s["http"] == {"401": 50} and s["winners"] == 0, out)
    short = os.path.join(TMP, "secret-short")
    with open(short, "w") as f:
        f.write("short\n")
    rc, _, out = crowd(1, "--secret-file", short)
    check("short secret: exit 2", rc == 2 and "shorter than 32" in out, out)


def gate():
    good = os.path.join(TMP, "secret-gate")
    with open(good, "w") as f:
        f.write("g" * 40 + "\n")
    # 2000 users, 70 % with the claim (index mod 100 < 70): 1400 and 600
    with Fake("--units", "100", "--secret-file", good, "--gate") as f:
        rc, s, out = crowd(f.port, *BASE, "--secret-file", good, "--gate", "70", "--poll",
                           "--expect-units", "100", "--orders", os.path.join(TMP, "gate.orders"))
    g = s and s["gate"]
    check("gate 70: exit 0, check true", rc == 0 and s["checks"]["gate"] is True, out)
    check("gate 70: the split", g and g["pct"] == 70 and g["with_claim"] == 1400 and
          g["without"] == 600, str(g))
    check("gate 70: nobody without the claim won, nobody with it refused",
          g and g["lacking_won"] == 0 and g["claim_refused"] == 0 and g["lacking_other"] == 0,
          str(g))
    check("gate 70: the users without it were refused (403 gate) or came after the sell-out",
          g and g["lacking_gate"] + g["lacking_sold_out"] == 600 and g["lacking_gate"] > 0 and
          s["status"].get("gate") == g["refused"] and s["http"].get("403") == g["refused"],
          str(s))
    with open(os.path.join(TMP, "gate.orders")) as f:
        users = [int(line.split()[0]) for line in f]
    check("gate 70: every winner's id is one with the claim",
          len(users) == 100 and all((u - 1) % 100 < 70 for u in users), str(users[:10]))
    check("gate 70: human summary counts 403 gate apart",
          "| gate " in out and "600 users without the claim" in out, out)
    # Before the start every buyer gets 425 (the time is checked before the
    # identity): under --wait-start that is a deferral, not a wrong answer.
    with Fake("--units", "100", "--secret-file", good, "--gate", "--start-in-ms", "1200") as f:
        rc, s, out = crowd(f.port, *BASE, "--secret-file", good, "--gate", "70", "--wait-start",
                           "--expect-units", "100")
    check("gate 70 with --wait-start: the 425s before the start fail no check",
          rc == 0 and s["checks"]["gate"] is True and s["gate"]["lacking_other"] == 0 and
          s["status"].get("not_started", 0) >= 1 and s["gate"]["refused"] > 0, out)
    with Fake("--units", "100", "--secret-file", good, "--gate", "--broken", "gate-leak") as f:
        rc, s, out = crowd(f.port, *BASE, "--secret-file", good, "--gate", "70")
    check("gate-leak: exit 1, the gate check fails",
          rc == 1 and s["checks"]["gate"] is False and s["gate"]["lacking_won"] == 1, out)
    rc, _, out = crowd(1, "--gate", "70")
    check("--gate without --secret-file: exit 2", rc == 2 and "--secret-file" in out, out)
    rc, _, out = crowd(1, "--gate", "101", "--secret-file", good)
    check("--gate 101: exit 2", rc == 2 and "percentage" in out, out)


def wait_start():
    with Fake("--units", "100", "--start-in-ms", "1200") as f:
        rc, s, out = crowd(f.port, *BASE, "--wait-start", "--expect-units", "100", "--poll")
    check("wait-start: exit 0", rc == 0, out)
    check("wait-start: waited once, about 1.2 s, then sold out",
          s and s["waits"] == 1 and 0.9 <= s["waited_s"] <= 5 and
          s["status"].get("not_started", 0) >= 1 and s["winners"] == 100 and
          s["deferred"] == s["status"]["not_started"] and
          s["answered"] == 5000 + s["deferred"] and s["checks"]["all_answered"], str(s))
    with Fake("--units", "100", "--start-in-ms", "30000") as f:
        rc, s, out = crowd(f.port, "--users", "200")
        check("not started, no --wait-start: every answer 425, exit 0",
              rc == 0 and s and s["http"] == {"425": 200}, out)
        rc, s, out = crowd(f.port, "--users", "200", "--wait-start", "--max-seconds", "2")
        check("start beyond --max-seconds: exit 4", rc == 4 and s and s["timebound"], out)
        check("start beyond --max-seconds: said why", "after --max-seconds" in out, out)


def determinism():
    runs = []
    for seed in ("7", "7", "8"):
        path = os.path.join(TMP, "orders-%d.txt" % len(runs))
        with Fake("--units", "50") as f:
            rc, _, out = crowd(f.port, "--users", "300", "--attempts", "600", "--conns", "1",
                               "--seed", seed, "--orders", path)
        with open(path) as fh:
            runs.append(fh.read())
        check("one connection, seed %s: exit 0" % seed, rc == 0, out)
    check("same seed, one connection: same winners and orders", runs[0] == runs[1])
    check("another seed: other winners", runs[0] != runs[2])


def usage():
    cases = [
        ([], "--server is required"),
        (["--server", "127.0.0.1", "--users", "10", "--attempts", "5"], "every user tries"),
        (["--server", "127.0.0.1", "--retriers", "1.5"], "--retriers"),
        (["--server", "127.0.0.1", "--users", "10", "--attempts", "20", "--retriers", "0"],
         "--retriers > 0"),
        (["--server", "localhost"], "IPv4 or IPv6"),
        (["--server", "[127.0.0.1]"], "IPv4 or IPv6"),
        (["--server", "[::1"], "IPv4 or IPv6"),
        (["--server", "[::1]x"], "IPv4 or IPv6"),
        (["--server", "[::1]:"], "port 1..65535"),
        (["--server", "[::1]:0"], "port 1..65535"),
        (["--server", "127.0.0.1:65536"], "port 1..65535"),
        (["--server", "[fe80::1%lo]"], "IPv4 or IPv6"),
        (["--server", "[::1]:80", "--port", "80"], "leave out --port"),
        (["--server", "::1:80x"], "IPv4 or IPv6"),
        (["--server", "127.0.0.1", "--port", "70000"], "--port"),
        (["--server", "127.0.0.1", "--conns", "0"], "--conns"),
        (["--server", "127.0.0.1", "--retriers", "\t0.5"], "--retriers"),
        (["--server", "127.0.0.1", "--max-seconds", "0x10"], "--max-seconds"),
        (["--server", "127.0.0.1", "--bogus"], "unknown option"),
        (["--server", "127.0.0.1", "extra"], "unexpected argument"),
        (["--server", "127.0.0.1", "--json", "/nonexistent/dir/x.json"], "--json"),
    ]
    for args, msg in cases:
        p = subprocess.run([CROWD, *args], capture_output=True, text=True, timeout=10)
        one_line = p.stderr.strip().count("\n") <= 1
        check("usage %s: exit 2, says %r" % (" ".join(args) or "(none)", msg),
              p.returncode == 2 and msg in p.stderr and one_line and p.stdout == "",
              p.stdout + p.stderr)
    p = subprocess.run([CROWD, "--help"], capture_output=True, text=True, timeout=10)
    check("--help: exit 0, usage on stdout", p.returncode == 0 and "usage:" in p.stdout)


def refused():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))  # bound, not listening: connects are refused
    port = s.getsockname()[1]
    try:
        rc, summary, out = crowd(port, "--users", "10")
    finally:
        s.close()
    check("nothing listening: exit 3", rc == 3 and "refused" in out, out)
    check("nothing listening: summary still written", summary and summary["exit"] == 3, out)


def certs():
    """An ECDSA P-256 certificate for shop.test, self-signed, in TMP; None
    without the openssl CLI."""
    if shutil.which("openssl") is None:
        return None
    cert, key = os.path.join(TMP, "ec.pem"), os.path.join(TMP, "ec.key")
    subprocess.run(["openssl", "req", "-x509", "-newkey", "ec", "-pkeyopt",
                    "ec_paramgen_curve:P-256", "-nodes", "-keyout", key, "-out", cert,
                    "-days", "1", "-subj", "/CN=shop.test",
                    "-addext", "subjectAltName=DNS:shop.test"],
                   check=True, capture_output=True, timeout=30)
    return cert, key


def tls():
    pair = certs()
    if pair is None:
        print("ok - tls # SKIP no openssl CLI")
        return
    cert, key = pair
    secret = os.path.join(TMP, "secret-tls")
    with open(secret, "w") as f:
        f.write("s" * 40 + "\n")
    with Fake("--units", "100", "--secret-file", secret) as f, TlsProxy(f.port, cert, key) as p:
        rc, s, out = crowd(p.port, *BASE, "--tls", "--secret-file", secret, "--poll",
                           "--expect-units", "100")
        check("tls: JWT sale, exit 0, 100 winners, polls ok",
              rc == 0 and s and s["winners"] == 100 and s["checks"]["polls_ok"] and
              consistent(s), out)
        h = s and s["tls"]["handshakes"]
        check("tls: one full handshake per connection, as the server saw",
              h == {"full": 32, "resumed": 0, "failed": 0} and s["connects"] == 32 and
              p.full == 32 and p.resumed == 0 and s["tls"]["tls13"] == 32, str(s and s["tls"]))
        check("tls: human line", "tls: handshakes full 32 resumed 0 failed 0" in out and
              "https 127.0.0.1:" in out, out)
    for ver, name in ((None, "1.3"), (ssl.TLSVersion.TLSv1_2, "1.2")):
        with Fake("--units", "50") as f, TlsProxy(f.port, cert, key, ver) as p:
            extra = ["--tls-version", "1.2"] if ver else []
            rc, s, out = crowd(p.port, "--users", "400", "--attempts", "800", "--conns", "4",
                               "--tls", "--tls-resume", "--conn-requests", "20",
                               "--sni", "shop.test", "--cacert", cert, "--expect-units", "50",
                               *extra)
            t = s and s["tls"]
            check("tls %s resume: exit 0, reconnects every 20 answers" % name,
                  rc == 0 and s and s["reconnects"] >= 800 // 20 - 4, out)
            check("tls %s resume: reconnects resumed, as the server saw" % name,
                  t and t["handshakes"]["full"] + t["handshakes"]["resumed"] == s["connects"] and
                  t["handshakes"]["resumed"] >= s["reconnects"] - 4 and
                  t["offered"] >= t["handshakes"]["resumed"] and
                  p.resumed == t["handshakes"]["resumed"] and p.full == t["handshakes"]["full"] and
                  t["tls" + name.replace(".", "")] == s["connects"], str(t) + str(s))
    with Fake("--units", "10") as f, TlsProxy(f.port, cert, key) as p:
        rc, s, out = crowd(p.port, "--users", "20", "--tls", "--cacert", cert, "--sni",
                           "other.test")
    check("tls: --cacert with the wrong name: exit 3, says why",
          rc == 3 and "certificate" in out and s and s["tls"]["handshakes"]["failed"] >= 1, out)
    with Fake("--units", "10") as f:
        rc, s, out = crowd(f.port, "--users", "20", "--tls", "--timeout-ms", "2000")
    check("tls to a plain server: exit 3, handshake failed",
          rc == 3 and "TLS handshake" in out and s and s["tls"]["handshakes"]["failed"] >= 1, out)
    for args, msg in ((["--sni", "shop.test"], "--sni needs --tls"),
                      (["--tls-resume"], "--tls-resume needs --tls"),
                      (["--tls", "--sni", "bad_name"], "--sni"),
                      (["--tls", "--tls-version", "1.1"], "--tls-version"),
                      (["--tls", "--cacert", "/nonexistent.pem"], "--cacert")):
        p = subprocess.run([CROWD, "--server", "127.0.0.1", *args], capture_output=True,
                           text=True, timeout=10)
        check("usage %s: exit 2, says %r" % (" ".join(args), msg),
              p.returncode == 2 and msg in p.stderr, p.stderr)


def main():
    for t in (good_run, ipv6, expect_wrong, broken_runs, reconnects, busy, auth, gate, wait_start,
              determinism, usage, refused, tls):
        try:
            t()
        except Exception as e:  # a crash of one scenario must not hide the others
            check(t.__name__, False, "raised %r" % e)
    print("%d failed" % len(failures) if failures else "all passed")
    shutil.rmtree(TMP, ignore_errors=True)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
