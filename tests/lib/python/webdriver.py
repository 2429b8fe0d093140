#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""webdriver.py - a minimal W3C WebDriver client (urllib + json) for the
browser tests: Debian's chromedriver driving Debian's chromium, headless,
allowed to reach 127.0.0.1 only.

DRIVER is chromedriver's base URL (http://127.0.0.1:PORT), SID a session id
printed by "session". Check commands exit 0 when the condition holds, 1
otherwise (with a line on stderr); any WebDriver error exits 2.

    webdriver.py free-port                  print a free TCP port of 127.0.0.1
    webdriver.py ready DRIVER SECONDS       check: chromedriver answers /status
                                            "ready" within SECONDS
    webdriver.py session DRIVER PROFILE NETLOG WxH
                                            start chromium (headless, PROFILE as
                                            --user-data-dir, its net log in
                                            NETLOG, a WxH window); print the SID
    webdriver.py open DRIVER SID URL        load URL (returns once loaded);
                                            "{admin_token}" in URL is replaced
                                            by the admin token (admin.py)
    webdriver.py wait DRIVER SID CSS REGEX SECONDS
                                            check: the text of the element at CSS
                                            matches REGEX (re.fullmatch, ignoring
                                            case: the rendered text follows CSS
                                            text-transform; ',' thousands
                                            separators dropped)
                                            within SECONDS; polled every 0.25 s;
                                            prints the last text seen
    webdriver.py text DRIVER SID CSS        print the text of the element at CSS
    webdriver.py eval DRIVER SID SCRIPT     print the JSON of the value SCRIPT
                                            (a function body) returns
    webdriver.py console DRIVER SID FILE    append the browser's console entries
                                            (since the last call) to FILE, one
                                            JSON object a line; check: no entry
                                            of FILE is at level SEVERE
    webdriver.py screenshot DRIVER SID FILE [full]
                                            save a PNG of the window (full: of
                                            the whole page, the window resized
                                            to its height first)
    webdriver.py quit DRIVER SID            end the session: chromium exits
    webdriver.py netlog FILE ORIGIN         check: by chromium's net log (complete
                                            once it exited), nothing left the host
                                            (TCP only to loopback addresses, no
                                            UDP byte or DNS query elsewhere) and
                                            the page asked ORIGIN only, at least
                                            once

Chromium is /usr/lib/chromium/chromium, the program behind Debian's
/usr/bin/chromium wrapper (which adds flags of its own, among them
--enable-remote-extensions). Its flags turn off everything that talks to
the outside (background networking, component updates, sync, metrics,
crash reports, translate, safe browsing) and, should anything be left,
send every request to a dead proxy (127.0.0.1:1, loopback bypassed) and
resolve no name but 127.0.0.1: nothing can leave the host; "netlog"
checks that nothing tried.
"""
import base64
import json
import os
import re
import socket
import sys
import time
import urllib.error
import urllib.parse
import urllib.request

import admin

CHROMIUM = "/usr/lib/chromium/chromium"
TIMEOUT = 60  # seconds, of one WebDriver call

# Switches of chromium for a test that must stay on the host.
CHROMIUM_ARGS = [
    "--headless=new",
    "--disable-gpu",
    "--disable-dev-shm-usage",
    "--no-first-run",
    "--no-default-browser-check",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--disable-default-apps",
    "--disable-extensions",
    "--disable-domain-reliability",
    "--disable-client-side-phishing-detection",
    "--disable-breakpad",
    "--disable-crash-reporter",
    "--no-pings",
    "--metrics-recording-only",
    "--password-store=basic",
    "--disable-features=Translate,OptimizationHints,MediaRouter,DialMediaRouteProvider,"
    "AutofillServerCommunication,CertificateTransparencyComponentUpdater,SafeBrowsing,"
    "InterestFeedContentSuggestions,NetworkTimeServiceQuerying,PrivacySandboxSettings4",
    "--proxy-server=127.0.0.1:1",
    "--proxy-bypass-list=127.0.0.1",
    "--host-resolver-rules=MAP * ~NOTFOUND, EXCLUDE 127.0.0.1",
]


class WebDriverError(Exception):
    pass


def call(driver, method, path, body=None):
    """One WebDriver command: its "value", or WebDriverError."""
    data = None if body is None else json.dumps(body).encode()
    req = urllib.request.Request(driver + path, data=data, method=method,
                                 headers={"Content-Type": "application/json; charset=utf-8"})
    try:
        with urllib.request.urlopen(req, timeout=TIMEOUT) as r:
            doc = json.load(r)
    except urllib.error.HTTPError as e:
        try:
            v = json.load(e).get("value", {})
            msg = "%s: %s" % (v.get("error"), (v.get("message") or "").split("\n")[0])
        except ValueError:
            msg = "HTTP %d" % e.code
        raise WebDriverError("%s %s: %s" % (method, path, msg)) from None
    except (urllib.error.URLError, OSError) as e:
        raise WebDriverError("%s %s: %s" % (method, path, e)) from None
    return doc.get("value")


def free_port():
    """A TCP port of 127.0.0.1 nobody listens on (the kernel's pick)."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def ready(driver, seconds):
    end = time.monotonic() + seconds
    last = None
    while time.monotonic() < end:
        try:
            if call(driver, "GET", "/status").get("ready"):
                return 0
        except WebDriverError as e:
            last = e
        time.sleep(0.1)
    print("chromedriver at %s not ready in %s s: %s" % (driver, seconds, last), file=sys.stderr)
    return 1


def new_session(driver, profile, netlog, size):
    w, hgt = (int(x) for x in size.split("x"))
    args = CHROMIUM_ARGS + ["--user-data-dir=" + profile, "--window-size=%d,%d" % (w, hgt),
                            "--log-net-log=" + netlog, "--net-log-capture-mode=Default"]
    if os.geteuid() == 0:
        args.append("--no-sandbox")  # chromium refuses to run as root with its sandbox
    caps = {"capabilities": {"alwaysMatch": {
        "browserName": "chrome",
        "goog:chromeOptions": {"binary": CHROMIUM, "args": args},
        "goog:loggingPrefs": {"browser": "ALL"},
    }}}
    v = call(driver, "POST", "/session", caps)
    return v["sessionId"]


def find(driver, sid, css):
    """The element reference of CSS, or None."""
    try:
        v = call(driver, "POST", "/session/%s/element" % sid, {"using": "css selector", "value": css})
    except WebDriverError as e:
        if "no such element" in str(e):
            return None
        raise
    return next(iter(v.values()))


def text_of(driver, sid, css):
    """The rendered text of the element at CSS, or None if absent."""
    el = find(driver, sid, css)
    if el is None:
        return None
    try:
        return call(driver, "GET", "/session/%s/element/%s/text" % (sid, el))
    except WebDriverError as e:
        if "stale element" in str(e):
            return None
        raise


def wait(driver, sid, css, regex, seconds):
    end = time.monotonic() + seconds
    pat = re.compile(regex, re.IGNORECASE)
    last = None
    while True:
        last = text_of(driver, sid, css)
        if last is not None and pat.fullmatch(last.replace(",", "").strip()):
            print(last)
            return 0
        if time.monotonic() >= end:
            break
        time.sleep(0.25)
    print("%s: text %r does not match /%s/ after %s s" % (css, last, regex, seconds), file=sys.stderr)
    return 1


def console(driver, sid, path):
    entries = call(driver, "POST", "/session/%s/se/log" % sid, {"type": "browser"}) or []
    with open(path, "a") as f:
        for e in entries:
            f.write(json.dumps(e) + "\n")
    bad = []
    with open(path) as f:
        for line in f:
            e = json.loads(line)
            if e.get("level") == "SEVERE":
                bad.append(e.get("message"))
    for m in bad:
        print("console error:", m, file=sys.stderr)
    return 1 if bad else 0


def screenshot(driver, sid, path, full):
    if full:
        hgt = call(driver, "POST", "/session/%s/execute/sync" % sid,
                   {"script": "return document.documentElement.scrollHeight;", "args": []})
        rect = call(driver, "GET", "/session/%s/window/rect" % sid)
        call(driver, "POST", "/session/%s/window/rect" % sid,
             {"width": rect["width"], "height": int(hgt) + (rect["height"] - call(
                 driver, "POST", "/session/%s/execute/sync" % sid,
                 {"script": "return window.innerHeight;", "args": []}))})
    png = base64.b64decode(call(driver, "GET", "/session/%s/screenshot" % sid))
    if png[:8] != b"\x89PNG\r\n\x1a\n":
        print("screenshot is not a PNG", file=sys.stderr)
        return 1
    with open(path, "wb") as f:
        f.write(png)
    print("%s: %d bytes" % (path, len(png)))
    return 0


def netlog_events_doc(path):
    """The net log as a document; one cut short (chromium killed) is closed first."""
    with open(path) as f:
        text = f.read()
    try:
        return json.loads(text)
    except ValueError:
        text = text.rstrip().rstrip(",")
        for tail in ("]}", "}]}"):
            try:
                return json.loads(text + tail)
            except ValueError:
                continue
        raise


def loopback(addr):
    """Whether "host:port" (or "[v6]:port") is on 127.0.0.0/8 or ::1."""
    host = addr.rsplit(":", 1)[0].strip("[]")
    return host.startswith("127.") or host == "::1"


def netlog(path, origin):
    """Nothing left the host and the page asked only its own origin, by
    chromium's net log: every TCP connection attempt went to a loopback
    address (the page's origin, or the dead proxy every other request is
    sent to), no UDP socket sent a byte to another address (chromium
    connects UDP sockets to learn its local address, sending nothing), no
    DNS query was made, every request the page started went to ORIGIN, and
    the page's origin was asked at least once. Prints what the browser
    itself tried (stopped at the dead proxy)."""
    d = netlog_events_doc(path)
    types = {v: k for k, v in d.get("constants", {}).get("logEventTypes", {}).items()}
    udp_peer, bad, ours, others, tcp = {}, [], 0, set(), {}
    for e in d.get("events", []):
        t = types.get(e.get("type"), "")
        p = e.get("params") or {}
        src = (e.get("source") or {}).get("id")
        if t == "TCP_CONNECT_ATTEMPT" and "address" in p:
            tcp[p["address"]] = tcp.get(p["address"], 0) + 1
            if not loopback(p["address"]):
                bad.append("TCP connection attempt to " + p["address"])
        elif t == "UDP_CONNECT" and "address" in p:
            udp_peer[src] = p["address"]
        elif t in ("UDP_BYTES_SENT", "SOCKET_BYTES_SENT") and src in udp_peer:
            if not loopback(udp_peer[src]):
                bad.append("UDP bytes sent to " + udp_peer[src])
        elif t.startswith("DNS_TRANSACTION"):
            bad.append("DNS query: %s" % json.dumps(p)[:120])
        elif t == "URL_REQUEST_START_JOB" and isinstance(p.get("url"), str):
            url = p["url"]
            if url.startswith(origin + "/"):
                ours += 1
            elif p.get("initiator") == origin:
                bad.append("the page asked " + url)
            else:
                others.add(urllib.parse.urlsplit(url).netloc or url[:40])
    for b in bad:
        print("net log:", b, file=sys.stderr)
    if ours == 0:
        print("net log: no request to %s seen" % origin, file=sys.stderr)
        return 1
    print("net log: %d requests to %s; TCP attempts: %s; browser's own requests stopped at the dead "
          "proxy: %s" % (ours, origin, ", ".join("%s x%d" % kv for kv in sorted(tcp.items())),
                         ", ".join(sorted(others)) or "none"))
    return 1 if bad else 0


def main(argv):
    cmd, a = (argv[1] if len(argv) > 1 else ""), argv[2:]
    try:
        if cmd == "free-port" and not a:
            print(free_port())
            return 0
        if cmd == "ready" and len(a) == 2:
            return ready(a[0], float(a[1]))
        if cmd == "session" and len(a) == 4:
            print(new_session(*a))
            return 0
        if cmd == "open" and len(a) == 3:
            # {admin_token}: the admin API's token, read here (never in argv)
            url = a[2].replace("{admin_token}", admin.token())
            call(a[0], "POST", "/session/%s/url" % a[1], {"url": url})
            return 0
        if cmd == "wait" and len(a) == 5:
            return wait(a[0], a[1], a[2], a[3], float(a[4]))
        if cmd == "text" and len(a) == 3:
            t = text_of(*a)
            if t is None:
                print("no element %s" % a[2], file=sys.stderr)
                return 1
            print(t)
            return 0
        if cmd == "eval" and len(a) == 3:
            print(json.dumps(call(a[0], "POST", "/session/%s/execute/sync" % a[1], {"script": a[2], "args": []})))
            return 0
        if cmd == "console" and len(a) == 3:
            return console(*a)
        if cmd == "screenshot" and len(a) in (3, 4):
            return screenshot(a[0], a[1], a[2], len(a) == 4 and a[3] == "full")
        if cmd == "quit" and len(a) == 2:
            call(a[0], "DELETE", "/session/%s" % a[1])
            return 0
        if cmd == "netlog" and len(a) == 2:
            return netlog(a[0], a[1])
    except WebDriverError as e:
        print("webdriver:", e, file=sys.stderr)
        return 2
    sys.exit(__doc__)


if __name__ == "__main__":
    sys.exit(main(sys.argv))
