#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# proxy.sh - the client behind a proxy, seen from outside through the real
# dataplane (one lcore, auth off, a per-IP buy limit of 1/s with a burst
# of 3). Extra client addresses from 198.18.0.0/24 are added to the
# namespace's interface.
#
#  1. PROXY v2 listener ([proxy] protocol = v2, trusted = the haproxy
#     address): haproxy, started here in the namespace in tcp mode with
#     send-proxy-v2, relays clients 198.18.0.21 and .22. Client .21 sends
#     8 buys on one connection and meets 429; client .22 still gets 202: the
#     limit keys on the real clients, not on haproxy. A direct connection
#     from an untrusted address with a forged PROXY header is closed
#     (proxy_refused_untrusted); the trusted address without a header is
#     closed (proxy_missing); an untrusted address sending plain HTTP is
#     served (proxy_direct). The HTTPS port behind the same haproxy (a
#     second frontend relaying to port 443 with send-proxy-v2): TLS starts
#     after the header, so client .24 meets 429 on its own bucket (its
#     handshake took a token too) while client .25 gets 202.
#  2. Plain listener, forwarded = xff, trusted = 198.18.0.41: buys from
#     .41 naming client 198.18.0.31 in X-Forwarded-For meet 429, the same
#     from .41 naming .32 get 202 (forwarded_used); the header sent from the
#     untrusted .42 is ignored (forwarded_ignored).
. "$(dirname "$0")/lib.sh"
require_env curl timeout haproxy openssl

tmp=$(mktemp -d)
HAP=()
stop_haproxy() {
	local p
	[ "${#HAP[@]}" -gt 0 ] || return 0
	kill_tree TERM "${HAP[@]}"
	for p in "${HAP[@]}"; do
		wait "$p" 2>/dev/null || true
	done
	HAP=()
}
cleanup() {
	stop_haproxy
	rm -rf "$tmp"
}
at_exit cleanup

LB=198.18.0.40      # haproxy's listening and source address (trusted in run 1)
CLIENT_A=198.18.0.21 # clients through haproxy
CLIENT_B=198.18.0.22
STRANGER=198.18.0.23 # not trusted
CLIENT_C=198.18.0.24 # clients through haproxy to the HTTPS port
CLIENT_D=198.18.0.25
FWD_OK=198.18.0.41   # trusted HTTP proxy (run 2)
FWD_BAD=198.18.0.42  # untrusted (run 2)

# conf FILE [proxy]-LINES... - the sandbox config with a per-IP limit and
# the [proxy] section given.
conf() {
	local f=$1 l
	shift
	{
		cat "$REPO/config/sandbox.ini"
		printf '\n[seckill]\nauth = off\nip_rate = 1\nip_burst = 3\nip_slots = 1024\n'
		printf '\n[item.1]\ntotal = 1000\nper_user_limit = 100\n\n[proxy]\n'
		for l in "$@"; do
			echo "$l"
		done
	} >"$f"
}

# add_addrs ADDR... - give the namespace's interface these addresses.
add_addrs() {
	local dev a
	dev=$(ip -n "$SK_SBX" -o route get "$SERVER" | sed -n 's/.* dev \([^ ]*\).*/\1/p')
	[ -n "$dev" ] || {
		echo "no route to $SERVER in $SK_SBX"
		exit 1
	}
	for a in "$@"; do
		ip -n "$SK_SBX" addr add "$a/24" dev "$dev"
	done
}

# buys SRC URL N [HEADER] - N buys of item 1 on one connection from SRC:
# the statuses, one line. Each buy is a distinct user.
buys() {
	local src=$1 url=$2 n=$3 hdr=${4:-X-Dummy: 1} i
	local -a args=()
	for i in $(seq 1 "$n"); do
		# --next resets the options: each buy carries its own.
		args+=(-s -k -o /dev/null -m 10 --interface "$src" -w '%{http_code} ' -H "$hdr"
			-H "X-User-Id: $((1000 * i + RANDOM % 1000))" -X POST "$url/v1/seckill/1")
		[ "$i" -lt "$n" ] && args+=(--next)
	done
	sbx_exec curl "${args[@]}" || true
}

# raw SRC BYTES-PRINTF - send the bytes (printf format) from SRC to the
# server's port 80, then GET /healthz; what came back, "" if the
# connection was closed without an answer.
raw() {
	sbx_exec timeout 10 python3 -c '
import socket, sys
s = socket.socket()
s.bind((sys.argv[1], 0))
s.settimeout(5)
s.connect((sys.argv[2], 80))
s.sendall(sys.argv[3].encode("latin-1").decode("unicode_escape").encode("latin-1")
          + b"GET /healthz HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
out = b""
try:
    while True:
        d = s.recv(4096)
        if not d:
            break
        out += d
except OSError:
    pass
print(out.split(b"\r\n")[0].decode("latin-1") if out else "")
' "$1" "$SERVER" "$2" || true
}

# --------------------------------------------------------------- run 1
(umask 077 && openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -days 2 \
	-subj /CN=shop.test -addext subjectAltName=DNS:shop.test \
	-keyout "$tmp/tls.key" -out "$tmp/tls.pem" 2>/dev/null)
conf "$tmp/run1.ini" "protocol = v2" "trusted = $LB" "" "[tls]" "cert = $tmp/tls.pem" \
	"key = $tmp/tls.key"
sbx_up --config "$tmp/run1.ini"
add_addrs $LB $CLIENT_A $CLIENT_B $STRANGER $CLIENT_C $CLIENT_D

cat >"$tmp/haproxy.cfg" <<EOF
global
	maxconn 64
defaults
	mode tcp
	timeout connect 5s
	timeout client 30s
	timeout server 30s
frontend fe
	bind $LB:8080
	default_backend be
backend be
	server dp $SERVER:80 send-proxy-v2 source $LB
frontend fe_tls
	bind $LB:8443
	default_backend be_tls
backend be_tls
	server dpt $SERVER:443 send-proxy-v2 source $LB
EOF
sbx_exec timeout 120 haproxy -db -f "$tmp/haproxy.cfg" >"$tmp/haproxy.out" 2>&1 &
HAP+=("$!")
LBURL=http://$LB:8080
# lb_healthz - /healthz through haproxy answers 200.
lb_healthz() {
	test "$(sbx_exec curl -s -o /dev/null -m 5 --interface $CLIENT_B -w '%{http_code}' \
		"$LBURL/healthz")" = 200
}
if wait_for 30 "haproxy relays /healthz" lb_healthz; then
	ok "haproxy up: /healthz through it"
else
	cat "$tmp/haproxy.out"
	bad "haproxy relays /healthz"
fi
ok0=$(tele proxy_ok)
check "PROXY headers taken ($ok0)" test "$ok0" -ge 1

a=$(buys $CLIENT_A "$LBURL" 8)
echo "client A through haproxy: $a"
check "client A over its rate gets 429" grep -q 429 <<<"$a"
b=$(buys $CLIENT_B "$LBURL" 1)
expect_eq "client B through haproxy is not limited by A" "$b" "202 "
check "telemetry: rl_refused_ip counts A's refusals" test "$(tele rl_refused_ip)" -ge 1

# HTTPS through the same balancer: the PROXY header, then TLS.
c=$(buys $CLIENT_C "https://$LB:8443" 8)
echo "client C over https through haproxy: $c"
check "client C over its rate gets 429 over https" grep -q 429 <<<"$c"
check "client C's first buys were served over https" grep -q '^202 ' <<<"$c"
d=$(buys $CLIENT_D "https://$LB:8443" 1)
expect_eq "client D over https is not limited by C" "$d" "202 "
tls_full=$("$SBX" telemetry /seckill/tls | itpy jsonq field - hs_full)
check "the HTTPS connections did their handshakes behind the header ($tls_full)" \
	test "$tls_full" -ge 2

r0=$(tele proxy_refused_untrusted)
got=$(raw $STRANGER 'PROXY TCP4 198.18.0.99 198.18.0.1 1234 80\r\n')
expect_eq "forged PROXY v1 header from an untrusted address: closed" "$got" ""
got=$(raw $STRANGER '\r\n\r\n\x00\r\nQUIT\n\x21\x11\x00\x0c\xc6\x12\x00\x63\xc6\x12\x00\x01\x04\xd2\x00\x50')
expect_eq "forged PROXY v2 header from an untrusted address: closed" "$got" ""
expect_eq "telemetry: proxy_refused_untrusted" "$(tele proxy_refused_untrusted)" $((r0 + 2))
m0=$(tele proxy_missing)
got=$(raw $LB '')
expect_eq "the trusted address without a header: closed" "$got" ""
expect_eq "telemetry: proxy_missing" "$(tele proxy_missing)" $((m0 + 1))
got=$(raw $STRANGER '')
expect_eq "an untrusted address without a header is served as itself" "$got" "HTTP/1.1 200 OK"
check "telemetry: proxy_direct" test "$(tele proxy_direct)" -ge 1
stop_haproxy
"$SBX" down >/dev/null || bad "sandbox down after run 1 reported a problem"

# --------------------------------------------------------------- run 2
conf "$tmp/run2.ini" "forwarded = xff" "trusted = $FWD_OK"
sbx_up --config "$tmp/run2.ini"
add_addrs $FWD_OK $FWD_BAD

a=$(buys $FWD_OK "$URL" 8 "X-Forwarded-For: 198.18.0.31")
echo "client .31 through the trusted proxy: $a"
check "the client named by a trusted proxy over its rate gets 429" grep -q 429 <<<"$a"
b=$(buys $FWD_OK "$URL" 1 "X-Forwarded-For: 198.18.0.32")
expect_eq "another client named by the same proxy is not limited" "$b" "202 "
check "telemetry: forwarded_used" test "$(tele forwarded_used)" -ge 9
b=$(buys $FWD_BAD "$URL" 1 "X-Forwarded-For: 198.18.0.33")
expect_eq "an untrusted sender's buy is answered" "$b" "202 "
expect_eq "telemetry: forwarded_ignored" "$(tele forwarded_ignored)" 1
finish
