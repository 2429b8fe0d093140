#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""seckill-kafka end to end: broker, produce, consume, an outage, shutdown.

    test_kafka_tool.py SECKILL_KAFKA

Starts `seckill-kafka broker --topic t1 --ready-file F`, checks it listens on
127.0.0.1 only, produces to t1 and reads it back (text and --json, order
kept), takes the brokers down with SIGUSR1 (a produce with a short timeout
must fail), up with SIGUSR2 (it works again, nothing lost), stops the broker
by its PID and checks it exited 0 and removed F. Then a 3-broker cluster with
2 partitions, and the usage errors. --kafka-config: a harmless setting
works, SASL/PLAIN never logs in to the SASL-less mock, bad files are named. Every process is bounded in time and
stopped by its own PID; the whole run takes well under 60 s.
"""
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time

KAFKA = sys.argv[1]
TMP = tempfile.mkdtemp(prefix="kafka-test-")
failures = []


def check(cond, what):
    print(("ok   " if cond else "FAIL ") + what, flush=True)
    if not cond:
        failures.append(what)


def run(*args, timeout=20):
    """Runs seckill-kafka ARGS; returns the CompletedProcess."""
    return subprocess.run([KAFKA, *args], capture_output=True, text=True,
                          timeout=timeout)


class Broker:
    """`seckill-kafka broker` as a context manager: .bootstrap while it runs."""

    def __init__(self, *args):
        self.ready = os.path.join(TMP, "ready-%d" % time.monotonic_ns())
        self.err = open(os.path.join(TMP, "broker.err"), "w+")
        self.args = [KAFKA, "broker", "--ready-file", self.ready,
                     "--max-seconds", "55", *args]

    def __enter__(self):
        self.proc = subprocess.Popen(self.args, stdout=subprocess.PIPE,
                                     stderr=self.err, text=True)
        deadline = time.monotonic() + 10
        while not os.path.exists(self.ready):
            if time.monotonic() > deadline or self.proc.poll() is not None:
                self.stop()
                raise RuntimeError("broker not ready: %s" % self.stderr())
            time.sleep(0.05)
        with open(self.ready) as f:
            line = f.read()
        self.line = self.proc.stdout.readline()
        check(line.endswith("\n") and line.startswith("bootstrap="),
              "ready file holds one bootstrap line: %r" % line)
        check(self.line == line, "stdout line equals the ready file")
        self.bootstrap = line.strip()[len("bootstrap="):]
        return self

    def stderr(self):
        self.err.flush()
        self.err.seek(0)
        return self.err.read()

    def stop(self):
        """SIGTERM by PID, bounded wait, SIGKILL as a last resort."""
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
        try:
            return self.proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait(timeout=10)
            return None

    def __exit__(self, *exc):
        self.stop()
        self.err.close()


def listeners(pid):
    """Local addresses (hex ip, port) of the TCP sockets PID listens on."""
    inodes = set()
    for fd in os.listdir("/proc/%d/fd" % pid):
        try:
            link = os.readlink("/proc/%d/fd/%s" % (pid, fd))
        except OSError:
            continue
        if link.startswith("socket:["):
            inodes.add(link[8:-1])
    found = []
    for table in ("/proc/%d/net/tcp" % pid, "/proc/%d/net/tcp6" % pid):
        with open(table) as f:
            for row in f.readlines()[1:]:
                col = row.split()
                if col[3] == "0A" and col[9] in inodes:  # 0A: LISTEN
                    ip, port = col[1].split(":")
                    found.append((ip, int(port, 16)))
    return found


def consume(bootstrap, topic, *args):
    return run("consume", "--bootstrap", bootstrap, "--topic", topic,
               "--from-beginning", "--timeout-ms", "1500", *args)


MSGS = [("1001", '{"v":1,"order":1001,"item":7}'), ("1002", "two words"),
        ("1003", "tab\there"), ("1004", "x=y")]


def props(name, text, mode=0o600):
    """A --kafka-config file NAME in TMP holding TEXT, of MODE; its path."""
    path = os.path.join(TMP, name)
    with open(path, "w") as f:
        f.write(text)
    os.chmod(path, mode)
    return path


def kafka_config(bootstrap):
    """--kafka-config: its settings reach the client, a bad file is named."""
    ok = props("ok.properties", "# harmless\nsocket.keepalive.enable = true\n")
    p = run("produce", "--bootstrap", bootstrap, "--topic", "t1", "--kafka-config", ok,
            "kc=1")
    check(p.returncode == 0, "produce --kafka-config (keepalive): exit 0 (%s)" % p.stderr.strip())
    # librdkafka 2.0's mock broker has no SASL: a client that must log in never
    # gets through, which shows the file's settings are the client's.
    sasl = props("sasl.properties", "security.protocol=SASL_PLAINTEXT\n"
                 "sasl.mechanism=PLAIN\nsasl.username=u\nsasl.password=hunter2\n")
    c = consume(bootstrap, "t1", "--timeout-ms", "1500", "--kafka-config", sasl)
    check(c.returncode == 1 and c.stdout == "" and "hunter2" not in c.stderr,
          "consume with SASL/PLAIN against the SASL-less mock: not reached, exit 1 (%s)"
          % c.stderr.strip().splitlines()[-1:])
    for name, text, mode, want in [
            ("open.properties", "sasl.password=hunter2\n", 0o644, ":1: sasl.password is a secret"),
            ("own.properties", "#\nclient.id=x\n", 0o600, ":2: client.id: refused"),
            ("bad.properties", "security.protocol=bogus\n", 0o600,
             ":1: security.protocol: Invalid value")]:
        path = props(name, text, mode)
        p = run("produce", "--bootstrap", bootstrap, "--topic", "t1", "--kafka-config", path,
                "k=v")
        check(p.returncode == 1 and path + want in p.stderr and "hunter2" not in p.stderr,
              "--kafka-config %s refused: %s" % (name, p.stderr.strip()))


def main_broker():
    with Broker("--topic", "t1") as b:
        pid = b.proc.pid
        port = int(b.bootstrap.split(":")[1])
        check(b.bootstrap == "127.0.0.1:%d" % port,
              "one broker at 127.0.0.1:PORT (%s)" % b.bootstrap)
        ls = listeners(pid)
        check(ls == [("0100007F", port)],
              "the broker listens on 127.0.0.1:%d only: %r" % (port, ls))

        p = run("produce", "--bootstrap", b.bootstrap, "--topic", "t1",
                *["%s=%s" % kv for kv in MSGS])
        check(p.returncode == 0, "produce 4 messages: exit 0 (%s)" % p.stderr.strip())
        check("produced 4 of 4 messages to t1" in p.stderr, "produce reports 4 of 4")

        c = consume(b.bootstrap, "t1")
        want = "".join("%s\t%s\n" % (k, v.replace("\t", "\\x09")) for k, v in MSGS)
        check(c.returncode == 0, "consume: exit 0")
        check(c.stdout == want, "consume: keys, values, order: %r" % c.stdout)
        check(c.stderr.strip().endswith("consumed 4 messages from t1"),
              "consume reports 4 messages: %r" % c.stderr)

        c = consume(b.bootstrap, "t1", "--json", "--max", "3")
        try:
            got = json.loads(c.stdout)
        except ValueError:
            got = None
        check(c.returncode == 0 and got == [
            {"partition": 0, "offset": i, "key": k, "value": v}
            for i, (k, v) in enumerate(MSGS[:3])], "consume --json --max 3: %r" % got)

        t0 = time.monotonic()
        c = run("consume", "--bootstrap", b.bootstrap, "--topic", "t1",
                "--timeout-ms", "500")
        check(c.returncode == 0 and c.stdout == "" and
              "consumed 0 messages from t1" in c.stderr and time.monotonic() - t0 < 5,
              "consume from the end: 0 messages, exit 0, in time")

        c = consume(b.bootstrap, "nosuch")
        check(c.returncode == 1 and "unknown topic nosuch" in c.stderr,
              "consume of an unknown topic: exit 1 (%s)" % c.stderr.strip())

        # The outage: every broker down, a produce with a short timeout fails.
        os.kill(pid, signal.SIGUSR1)
        deadline = time.monotonic() + 5
        while "brokers down" not in b.stderr() and time.monotonic() < deadline:
            time.sleep(0.05)
        check("SIGUSR1: brokers down" in b.stderr(), "SIGUSR1 logged")
        t0 = time.monotonic()
        p = run("produce", "--bootstrap", b.bootstrap, "--topic", "t1",
                "--timeout-ms", "1500", "1005=lost")
        took = time.monotonic() - t0
        check(p.returncode == 1 and "produced 0 of 1" in p.stderr,
              "produce while down: exit 1 (%s)" % p.returncode)
        check(took < 8, "produce while down gave up in %.1f s" % took)
        c = run("consume", "--bootstrap", b.bootstrap, "--topic", "t1",
                "--timeout-ms", "1000")
        check(c.returncode == 1, "consume while down: exit 1")
        check(b.proc.poll() is None, "the broker still runs while down")

        os.kill(pid, signal.SIGUSR2)
        deadline = time.monotonic() + 5
        while "brokers up" not in b.stderr() and time.monotonic() < deadline:
            time.sleep(0.05)
        check("SIGUSR2: brokers up" in b.stderr(), "SIGUSR2 logged")
        p = run("produce", "--bootstrap", b.bootstrap, "--topic", "t1",
                "--timeout-ms", "5000", "1006=after")
        check(p.returncode == 0, "produce after SIGUSR2: exit 0 (%s)" % p.stderr.strip())
        c = consume(b.bootstrap, "t1")
        keys = [line.split("\t")[0] for line in c.stdout.splitlines()]
        check(c.returncode == 0 and keys == ["1001", "1002", "1003", "1004", "1006"],
              "after the outage the log holds the first 4, then 1006: %r" % keys)
        check(listeners(pid) == [("0100007F", port)],
              "back up on the same address, 127.0.0.1:%d" % port)
        kafka_config(b.bootstrap)

        rc = b.stop()
        check(rc == 0, "SIGTERM by PID: broker exited 0 (%r)" % rc)
        check(not os.path.exists(b.ready), "ready file removed at exit")
        check(not [f for f in os.listdir(TMP) if ".tmp." in f], "no temporary file left")
        c = run("consume", "--bootstrap", b.bootstrap, "--topic", "t1",
                "--timeout-ms", "500")
        check(c.returncode == 1 and "cannot reach" in c.stderr,
              "consume with no broker: exit 1 (%s)" % c.stderr.strip().splitlines()[-1:])


def multi_broker():
    with Broker("--brokers", "3", "--partitions", "2",
                "--topic", "seckill.orders", "--topic", "seckill.events") as b:
        addrs = b.bootstrap.split(",")
        check(len(addrs) == 3 and all(a.startswith("127.0.0.1:") for a in addrs),
              "three brokers on 127.0.0.1: %s" % b.bootstrap)
        ls = listeners(b.proc.pid)
        check(len(ls) == 3 and all(ip == "0100007F" for ip, _ in ls),
              "three listeners, all 127.0.0.1: %r" % ls)
        keys = [str(2000 + i) for i in range(10)]
        p = run("produce", "--bootstrap", b.bootstrap, "--topic", "seckill.orders",
                *["%s=v%s" % (k, k) for k in keys])
        check(p.returncode == 0, "produce 10 to seckill.orders over 3 brokers")
        c = consume(b.bootstrap, "seckill.orders", "--json")
        got = json.loads(c.stdout) if c.returncode == 0 else []
        check(sorted(m["key"] for m in got) == keys and
              all(m["value"] == "v" + m["key"] for m in got),
              "all 10 read back over both partitions")
        parts = {m["partition"] for m in got}
        check(parts <= {0, 1}, "partitions 0..1 only: %r" % parts)
        for part in parts:
            offs = [m["offset"] for m in got if m["partition"] == part]
            check(offs == list(range(len(offs))), "partition %d in offset order" % part)
        c = consume(b.bootstrap, "seckill.events")
        check(c.returncode == 0 and "consumed 0 messages" in c.stderr,
              "the empty topic seckill.events exists")
        check(b.stop() == 0, "3-broker cluster exited 0")


def usage():
    for args, what in [
            (["consume", "--bootstrap", "198.18.0.1:9092", "--topic", "t"], "another host"),
            (["consume", "--bootstrap", "localhost:9092", "--topic", "t"], "a name"),
            (["consume", "--bootstrap", "127.0.0.1:1,198.18.0.1:9092", "--topic", "t"],
             "one bad entry of two"),
            (["produce", "--bootstrap", "0.0.0.0:9092", "--topic", "t", "k=v"],
             "produce to 0.0.0.0"),
            (["consume", "--bootstrap", "127.0.0.1:0", "--topic", "t"], "port 0"),
            (["consume", "--bootstrap", "127.0.0.1:+9", "--topic", "t"], "port +9"),
            (["consume", "--bootstrap", "127.0.0.1:9", "--topic", "t", "--max", " 5"],
             "--max with a blank"),
            (["broker", "--brokers", "+2"], "--brokers +2"),
            (["consume", "--topic", "t"], "no --bootstrap"),
            (["consume", "--bootstrap", "127.0.0.1:9", "--topic", "a/b"], "bad topic"),
            (["consume", "--bootstrap", "127.0.0.1:9", "--topic", "t", "--max", "0"],
             "--max 0"),
            (["produce", "--bootstrap", "127.0.0.1:9", "--topic", "t", "novalue"],
             "KEY without ="),
            (["produce", "--bootstrap", "127.0.0.1:9", "--topic", "t"], "no message"),
            (["broker", "--brokers", "0"], "--brokers 0"),
            (["broker", "--topic", ""], "empty topic"),
            (["broker", "extra"], "stray argument"),
            (["frobnicate"], "unknown subcommand"),
            ([], "no subcommand")]:
        r = run(*args, timeout=10)
        check(r.returncode == 2 and r.stderr.strip() != "",
              "usage error, exit 2: %s (%s)" % (what, r.stderr.strip().splitlines()[:1]))
    for sub in (["broker"], ["produce"], ["consume"], []):
        r = run(*sub, "--help", timeout=10)
        check(r.returncode == 0 and "usage: seckill-kafka" in r.stdout,
              "%s --help" % (sub[0] if sub else "seckill-kafka"))


try:
    t0 = time.monotonic()
    usage()
    main_broker()
    multi_broker()
    print("took %.1f s" % (time.monotonic() - t0))
finally:
    shutil.rmtree(TMP, ignore_errors=True)

if failures:
    print("%d failure(s)" % len(failures))
    sys.exit(1)
