# SPDX-License-Identifier: BSD-3-Clause
"""seckill_astf.py - a TRex ASTF (advanced stateful) profile of the
appliance's request mix, for operators who validate the front door on real
NICs with TRex in client mode (the appliance is the device under test; TRex
plays only the clients):

    ./t-rex-64 --astf --astf-client-mask 0x1 -f seckill_astf.py -m 100000 -d 60 \
        -t server=198.18.0.1,item=1,users=1000

Each template is one TCP connection carrying one keep-alive request and its
answer, then a FIN (TRex's flows are connections). The mix, by connections
per second (-m scales them):

    healthz  GET /healthz                                    -> 200
    soldout  POST /v1/seckill/{item}, X-User-Id, item sold   -> 410
    buy      POST /v1/seckill/{item}, X-User-Id (users tpl.) -> 202/200, or 410
    item     GET /v1/items/{item}                            -> 200 (variable length)

A client template must know how many bytes its answer has (recv(n)): the
healthz and sold-out answers are the dataplane's canned responses
(http/sk_http_response.c), whose lengths are fixed and computed
below from the same text; buy and item answers vary, so their templates
receive only the head's first bytes. X-User-Id needs `seckill.auth = off`.
TRex cannot vary a header per flow: distinct buyers come from `users`
templates, one user each, sharing the buy weight.

Not run here (no TRex in Debian, no NIC on the development machines): CI
only checks that it compiles (python3 -m py_compile). seckill-loadgen
(docs/loadgen.md) does the same over memif on one machine.
"""

from trex.astf.api import (ASTFIPGen, ASTFIPGenDist, ASTFIPGenGlobal, ASTFProfile, ASTFProgram,
                           ASTFTCPClientTemplate, ASTFTCPServerTemplate, ASTFTemplate)


def canned(status_line, body, extra=""):
    """The dataplane's keep-alive canned answer: head + JSON body."""
    return ("HTTP/1.1 %s\r\nContent-Type: application/json\r\nContent-Length: %d\r\n%s\r\n%s"
            % (status_line, len(body), extra, body))


HEALTHZ_ANSWER = canned("200 OK", '{"status":"ok"}')
SOLD_OUT_ANSWER = canned("410 Gone", '{"status":"sold_out"}')
HEAD_MIN = len("HTTP/1.1 200 OK\r\n")  # every answer is at least this long


def request(method, path, server, user=None):
    head = "%s %s HTTP/1.1\r\nHost: %s\r\n" % (method, path, server)
    if user is not None:
        head += "X-User-Id: %d\r\n" % user
    if method == "POST":
        head += "Content-Length: 0\r\n"
    return head + "\r\n"


class SeckillProfile:
    def get_profile(self, tunables=None, **kwargs):
        t = dict(kwargs)
        for kv in (tunables or []):
            k, _, v = kv.partition("=")
            t[k.lstrip("-")] = v
        server = t.get("server", "198.18.0.1")
        item = int(t.get("item", 1))
        soldout_item = int(t.get("soldout_item", item))
        users = int(t.get("users", 100))
        clients = t.get("clients", "198.19.0.1-198.19.255.254").split("-")

        ip_gen = ASTFIPGen(glob=ASTFIPGenGlobal(ip_offset="0.0.0.0"),
                           dist_client=ASTFIPGenDist(ip_range=clients, distribution="seq"),
                           dist_server=ASTFIPGenDist(ip_range=[server, server], distribution="seq"))

        def template(req, answer_len, cps):
            prog = ASTFProgram()
            prog.send(req)
            prog.recv(answer_len)
            # The server side is the appliance; this program is never run.
            srv = ASTFProgram()
            srv.recv(len(req))
            return ASTFTemplate(client_template=ASTFTCPClientTemplate(program=prog, ip_gen=ip_gen,
                                                                      port=80, cps=cps),
                                server_template=ASTFTCPServerTemplate(program=srv))

        templates = [
            template(request("GET", "/healthz", server), len(HEALTHZ_ANSWER), 1.0),
            template(request("POST", "/v1/seckill/%d" % soldout_item, server, user=1),
                     len(SOLD_OUT_ANSWER), 6.0),
            template(request("GET", "/v1/items/%d" % item, server), HEAD_MIN, 1.0),
        ]
        for u in range(users):
            templates.append(template(request("POST", "/v1/seckill/%d" % item, server,
                                              user=1000000 + u), HEAD_MIN, 2.0 / users))
        return ASTFProfile(default_ip_gen=ip_gen, templates=templates)


def register():
    return SeckillProfile()
