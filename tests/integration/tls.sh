#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# tls.sh - HTTPS at the front door (docs/tls.md), seen through real clients
# in the sandbox namespace. One dataplane run, one lcore, [tls] on port 443
# with three certificate pairs made here by openssl (pair 0: ECDSA P-256
# for shop.test, the default; pair 1: RSA 2048 for shop.test; pair 2: ECDSA
# for other.test), a ticket secret file, handshake_timeout_ms 2000,
# max_handshakes 16, and the plain port 80 serving. A sale of item 1 with
# tokens off, so a buy is a plain POST.
#
#  1. curl --tlsv1.3 and --tlsv1.2 (verifying against the test's own
#     certificates): /healthz 200 and a buy 202 over https.
#  2. openssl s_client: SNI picks other.test's certificate, an unknown name
#     or none gets the default; -sigalgs picks the ECDSA or the RSA pair;
#     resumption (-sess_out, then -sess_in says "Reused") on 1.3 and 1.2;
#     ALPN h2 alone gets the no_application_protocol alert, http/1.1 is
#     taken; a TLS 1.2 renegotiation ("R") is refused; early data (a
#     session edited to allow it) is rejected and its buy never happens;
#     the server's close shows "closed" (close_notify).
#  3. tls_clients.py: close_notify then FIN from the server, and its
#     close_notify in answer to the client's; garbage, an oversized record
#     and application data before the handshake get an alert and the end of
#     the connection; plain HTTP to 443 ends the connection.
#  4. wrk over https for 2 s: requests served, no socket errors.
#  5. hostile handshakes: 48 silent connections -> 16 held (the cap), 32
#     reset at once (hs_limited), the 16 reset at the deadline (hs_timeout),
#     then curl over https is served; 6 connections stalled in the middle of
#     their ClientHello and 3 dripping it a byte every 100 ms are reset at
#     the deadline (hs_timeout), while curl over https is served meanwhile.
#  6. the /seckill/tls counters agree, and nothing is left open.
#  7. a second run with plain = redirect: the plain port answers 308 with
#     the https Location, and curl -L carries a buy over to https; with a
#     per-IP limit of 1/s (burst 5), new TLS connections from one address
#     are reset before their handshake once the burst is spent.
. "$(dirname "$0")/lib.sh"
# The system's python3 when there is one (a pyenv shim costs a second per
# start, and the telemetry is read through python3 many times).
[ -x /usr/bin/python3 ] && export PATH=/usr/bin:$PATH
require_env curl openssl wrk timeout

tmp=$(mktemp -d)
BG=()
cleanup() {
	local p
	exec 3>&-
	kill_tree TERM "${BG[@]}"
	for p in "${BG[@]}"; do
		wait "$p" 2>/dev/null || true
	done
	rm -rf "$tmp"
}
at_exit cleanup

MAX_HS=16
HS_MS=2000
TC=(python3 "$IT_DIR/tls_clients.py")

# cert NAME KEYSPEC CN - a self-signed certificate for CN (also its SAN) in
# $tmp/NAME.pem and its key in $tmp/NAME.key (mode 0600), valid 2 days.
cert() {
	local -a spec
	read -ra spec <<<"$2"
	(umask 077 && openssl req -x509 -new "${spec[@]}" -nodes -keyout "$tmp/$1.key" \
		-out "$tmp/$1.pem" -days 2 -subj "/CN=$3" -addext "subjectAltName=DNS:$3" 2>/dev/null)
}
cert ec "-newkey ec -pkeyopt ec_paramgen_curve:P-256" shop.test
cert rsa "-newkey rsa:2048" shop.test
cert other "-newkey ec -pkeyopt ec_paramgen_curve:P-256" other.test
cat "$tmp/ec.pem" "$tmp/rsa.pem" "$tmp/other.pem" >"$tmp/ca.pem"
(umask 077 && head -c 48 /dev/urandom >"$tmp/ticket.key")

cp "$REPO/config/sandbox.ini" "$tmp/conf.ini"
cat >>"$tmp/conf.ini" <<EOF

[tls]
port = 443
cert = $tmp/ec.pem, $tmp/rsa.pem, $tmp/other.pem
key = $tmp/ec.key, $tmp/rsa.key, $tmp/other.key
ticket_key_file = $tmp/ticket.key
min_version = 1.2
handshake_timeout_ms = $HS_MS
max_handshakes = $MAX_HS
plain = serve

[seckill]
auth = off

[item.1]
total = 1000
per_user_limit = 100
EOF
sbx_up --lcores 1 --config "$tmp/conf.ini"

# tls KEY - a counter of /seckill/tls (summed over lcores), e.g. hs_full,
# alert_sent_record_overflow.
tls() {
	"$SBX" telemetry /seckill/tls | itpy jsonq field - "$1"
}
# tls_at_least KEY N - the counter KEY is N or more.
tls_at_least() {
	[ "$(tls "$1")" -ge "$2" ]
}
RESOLVE=(--resolve "shop.test:443:$SERVER" --resolve "other.test:443:$SERVER")
# hcode ARGS... - the HTTP status of curl ARGS over https (000: failed).
hcode() {
	sbx_exec curl -s -o /dev/null -m 10 -w '%{http_code}' --cacert "$tmp/ca.pem" "${RESOLVE[@]}" "$@" || true
}

# ------------------------------------------------------------- 1. curl
expect_eq "curl TLS 1.3: /healthz" "$(hcode --tlsv1.3 --tls-max 1.3 https://shop.test/healthz)" 200
expect_eq "curl TLS 1.2: /healthz" "$(hcode --tlsv1.2 --tls-max 1.2 https://shop.test/healthz)" 200
expect_eq "curl TLS 1.3: a buy" \
	"$(hcode --tlsv1.3 --tls-max 1.3 -H 'X-User-Id: 501' -X POST https://shop.test/v1/seckill/1)" 202
expect_eq "curl TLS 1.2: a buy" \
	"$(hcode --tlsv1.2 --tls-max 1.2 -H 'X-User-Id: 502' -X POST https://shop.test/v1/seckill/1)" 202
expect_eq "curl TLS 1.3 to other.test" "$(hcode --tlsv1.3 https://other.test/healthz)" 200
expect_eq "plain port 80 still serves" \
	"$(sbx_exec curl -s -o /dev/null -m 10 -w '%{http_code}' "$URL/healthz" || true)" 200
expect_eq "telemetry: 2 sold" "$(tele sold item1)" 2
check "telemetry: TLS 1.3 handshakes counted" tls_at_least tls13 3
check "telemetry: TLS 1.2 handshakes counted" tls_at_least tls12 2

# ---------------------------------------------------------- 2. s_client
# sc OUT ARGS... - openssl s_client ARGS to port 443 sending a GET
# /healthz with "Connection: close": its whole output in $tmp/OUT.
sc() {
	local out=$tmp/$1
	shift
	printf 'GET /healthz HTTP/1.1\r\nHost: shop.test\r\nConnection: close\r\n\r\n' | sbx_exec timeout 10 openssl s_client -connect "$SERVER:443" \
		-ign_eof "$@" >"$out" 2>&1 || true
}
# peer OUT - "CN KEYTYPE" of the server certificate in s_client output OUT.
peer() {
	local cn alg
	cn=$(openssl x509 -in "$tmp/$1" -noout -subject 2>/dev/null | sed -n 's/.*CN *= *//p')
	alg=$(openssl x509 -in "$tmp/$1" -noout -text 2>/dev/null |
		sed -n 's/.*Public Key Algorithm: *//p' | head -n 1)
	echo "$cn $alg"
}
sc sni_other -servername other.test
expect_eq "SNI other.test: its certificate" "$(peer sni_other)" "other.test id-ecPublicKey"
check "SNI other.test: served" grep -q '^HTTP/1.1 200' "$tmp/sni_other"
check "the server's close: s_client says closed (close_notify)" grep -qx 'closed' "$tmp/sni_other"
sc sni_unknown -servername nobody.test
expect_eq "SNI unknown name: the default pair" "$(peer sni_unknown)" "shop.test id-ecPublicKey"
sc sni_none -noservername
expect_eq "no SNI: the default pair" "$(peer sni_none)" "shop.test id-ecPublicKey"
sc sig_ec13 -servername shop.test -tls1_3 -sigalgs ECDSA+SHA256
expect_eq "TLS 1.3, -sigalgs ECDSA: the ECDSA pair" "$(peer sig_ec13)" "shop.test id-ecPublicKey"
sc sig_rsa13 -servername shop.test -tls1_3 -sigalgs rsa_pss_rsae_sha256
expect_eq "TLS 1.3, -sigalgs RSA-PSS: the RSA pair" "$(peer sig_rsa13)" "shop.test rsaEncryption"
check "TLS 1.3 RSA: served" grep -q '^HTTP/1.1 200' "$tmp/sig_rsa13"
sc sig_rsa12 -servername shop.test -tls1_2 -sigalgs RSA+SHA256
expect_eq "TLS 1.2, -sigalgs RSA: the RSA pair" "$(peer sig_rsa12)" "shop.test rsaEncryption"
check "TLS 1.2 RSA: served" grep -q '^HTTP/1.1 200' "$tmp/sig_rsa12"

# Resumption from a ticket, both versions.
for v in 1_3 1_2; do
	sc "full$v" -servername shop.test "-tls$v" -sess_out "$tmp/sess$v.pem"
	check "TLS ${v/_/.}: first connection is a full handshake" grep -q '^New, TLSv' "$tmp/full$v"
	sc "res$v" -servername shop.test "-tls$v" -sess_in "$tmp/sess$v.pem"
	check "TLS ${v/_/.}: -sess_in resumes (Reused)" grep -q "^Reused, TLSv${v/_/.}" "$tmp/res$v"
	check "TLS ${v/_/.}: resumed connection served" grep -q '^HTTP/1.1 200' "$tmp/res$v"
done
check "telemetry: hs_resumed >= 2" tls_at_least hs_resumed 2
check "telemetry: tickets issued" tls_at_least tickets_issued 2

# ALPN.
sc alpn_h2 -servername shop.test -alpn h2
check "ALPN h2 only: no_application_protocol alert" grep -q 'alert no application protocol' "$tmp/alpn_h2"
check "ALPN h2 only: not served" bash -c "! grep -q '^HTTP/1.1' '$tmp/alpn_h2'"
check "telemetry: alert no_application_protocol sent" tls_at_least alert_sent_no_application_protocol 1
sc alpn_h1 -servername shop.test -alpn http/1.1
check "ALPN http/1.1: taken" grep -q '^ALPN protocol: http/1.1' "$tmp/alpn_h1"
check "ALPN http/1.1: served" grep -q '^HTTP/1.1 200' "$tmp/alpn_h1"
sc alpn_both -servername shop.test -alpn h2,http/1.1
check "ALPN h2,http/1.1: http/1.1 taken" grep -q '^ALPN protocol: http/1.1' "$tmp/alpn_both"

# Renegotiation: s_client's "R" on an open TLS 1.2 connection. Its stdin is
# a FIFO this shell holds open, so it stays up until the answer.
mkfifo -m 600 "$tmp/in"
exec 3<>"$tmp/in"
sbx_exec timeout 20 openssl s_client -connect "$SERVER:443" -servername shop.test -tls1_2 \
	<"$tmp/in" >"$tmp/reneg" 2>&1 3>&- &
reneg_pid=$!
BG+=("$reneg_pid")
wait_for 10 "TLS 1.2 handshake for renegotiation" grep -q 'Verify return code' "$tmp/reneg" || true
printf 'R\n' >&3
wait_for 10 "s_client ends after R" bash -c "! kill -0 $reneg_pid" || true
exec 3>&-
check "renegotiation: s_client asked" grep -q '^RENEGOTIATING' "$tmp/reneg"
check "renegotiation: refused (OpenSSL says no renegotiation)" grep -q ':no renegotiation:' "$tmp/reneg"
expect_eq "telemetry: renegotiations" "$(tls renegotiations)" 1

# Early data: the server's tickets do not allow it ("Max Early Data: 0");
# a session edited to allow it resumes with its early data rejected, and
# the buy sent as early data never happens.
check "tickets allow no early data" grep -q 'Max Early Data: 0' "$tmp/full1_3"
"${TC[@]}" early "$tmp/sess1_3.pem" >"$tmp/early.pem"
printf 'POST /v1/seckill/1 HTTP/1.1\r\nHost: shop.test\r\nX-User-Id: 777\r\nContent-Length: 0\r\nConnection: close\r\n\r\n' \
	>"$tmp/early.txt"
sold0=$(tele sold item1)
sbx_exec timeout 10 openssl s_client -connect "$SERVER:443" -servername shop.test -tls1_3 \
	-sess_in "$tmp/early.pem" -early_data "$tmp/early.txt" </dev/null >"$tmp/early" 2>&1 || true
check "early data: not accepted" bash -c "grep -q 'Early data was rejected' '$tmp/early' ||
	! grep -q '^Reused\\|^New' '$tmp/early'"
check "early data: no answer to it" bash -c "! grep -q '^HTTP/1.1' '$tmp/early'"
expect_eq "early data: the buy did not happen" "$(tele sold item1)" "$sold0"
check "telemetry: early_data counted" tls_at_least early_data 1

# ----------------------------------------------------- 3. raw clients
sbx_exec timeout 30 "${TC[@]}" close "$SERVER" 443 shop.test >"$tmp/close.json" || true
cat "$tmp/close.json"
# j NAME PATH - the value at the dotted PATH of $tmp/NAME.json.
j() { itpy jsonq field "$tmp/$1.json" "$2"; }
# ge A B - the number A (may be a fraction) is B or more.
ge() { awk -v a="$1" -v b="$2" 'BEGIN { exit !(a + 0 >= b + 0) }'; }
expect_eq "server close: 200 first" "$(j close server_close.status)" "HTTP/1.1 200 OK"
expect_eq "server close: close_notify" "$(j close server_close.close_notify)" true
expect_eq "server close: then FIN" "$(j close server_close.end)" fin
expect_eq "client close: server answers close_notify" "$(j close client_close.close_notify_answered)" true
expect_eq "client close: then FIN" "$(j close client_close.end)" fin
check "telemetry: closed_notify counted" tls_at_least closed_notify 1

failed0=$(tls hs_failed)
sbx_exec timeout 60 "${TC[@]}" garbage "$SERVER" 443 >"$tmp/garbage.json" || true
cat "$tmp/garbage.json"
for c in junk_handshake oversized early_appdata; do
	check "$c: an alert" test "$(j garbage "$c.alert")" != None
	expect_match "$c: connection ended" "$(j garbage "$c.end")" '^(fin|rst)$'
done
expect_eq "oversized record: record_overflow (22)" "$(j garbage oversized.alert)" 22
expect_eq "application data first: unexpected_message (10)" "$(j garbage early_appdata.alert)" 10
expect_match "plain HTTP to 443: connection ended" "$(j garbage plain_http.end)" '^(fin|rst)$'
check "telemetry: hs_failed moved by 4" tls_at_least hs_failed $((failed0 + 4))
check "telemetry: alert record_overflow sent" tls_at_least alert_sent_record_overflow 1

# ------------------------------------------------------------ 4. wrk
sbx_exec timeout 30 wrk -t1 -c8 -d2s "https://$SERVER/healthz" | tee "$tmp/wrk.txt" || true
check "wrk https: served requests" grep -Eq '^ +[1-9][0-9]* requests in' "$tmp/wrk.txt"
check "wrk https: no socket errors" bash -c "! grep -q 'Socket errors' '$tmp/wrk.txt'"
check "wrk https: no non-2xx responses" bash -c "! grep -q 'Non-2xx' '$tmp/wrk.txt'"

# --------------------------------------------------- 5. hostile handshakes
# stall N MODE NAME - tls_clients.py stall in the background (20 s at
# most), its JSON in $tmp/NAME.json; returns once all N are connected.
stall() {
	rm -f "$tmp/$3.ready"
	sbx_exec timeout 30 "${TC[@]}" stall "$SERVER" 443 "$1" "$2" 20 "$tmp/$3.ready" \
		>"$tmp/$3.json" 2>"$tmp/$3.err" &
	BG+=($!)
	STALL_PID=$!
	wait_for 20 "$3: $1 connections open" test -s "$tmp/$3.ready" || true
}
stall_done() {
	wait "$STALL_PID" 2>/dev/null || true
	cat "$tmp/$1.json" "$tmp/$1.err"
}
FLOOD=48
limited0=$(tls hs_limited)
timeout0=$(tls hs_timeout)
stall $FLOOD silent flood
check "flood: $((FLOOD - MAX_HS)) reset at the cap (hs_limited)" \
	wait_for 10 "hs_limited" tls_at_least hs_limited $((limited0 + FLOOD - MAX_HS))
inflight=$(tls hs_inflight)
check "flood: in progress <= max_handshakes ($inflight)" test "$inflight" -le "$MAX_HS"
expect_eq "flood: plain port 80 serves meanwhile" \
	"$(sbx_exec curl -s -o /dev/null -m 10 -w '%{http_code}' "$URL/healthz" || true)" 200
check "flood: the $MAX_HS held ones reset at the deadline (hs_timeout)" \
	wait_for 15 "hs_timeout" tls_at_least hs_timeout $((timeout0 + MAX_HS))
expect_eq "after the flood: curl https served" "$(hcode --tlsv1.3 https://shop.test/healthz)" 200
stall_done flood
expect_eq "flood: every connection ended by the server" "$(j flood ended)" $FLOOD
expect_eq "flood: reset at once" "$(j flood ended_within_1s)" $((FLOOD - MAX_HS))
expect_eq "flood: held until the deadline" "$(j flood ended_after_1s)" $MAX_HS

for m in partial:6 drip:3; do
	mode=${m%:*} n=${m#*:}
	timeout0=$(tls hs_timeout)
	stall "$n" "$mode" "$mode"
	expect_eq "$mode x$n: curl https served meanwhile" "$(hcode --tlsv1.2 https://shop.test/healthz)" 200
	check "$mode x$n: reset at the deadline (hs_timeout)" \
		wait_for 15 "hs_timeout" tls_at_least hs_timeout $((timeout0 + n))
	stall_done "$mode"
	expect_eq "$mode x$n: every connection ended by the server" "$(j "$mode" ended)" "$n"
	first=$(j "$mode" first_end_s)
	check "$mode x$n: none ended before the deadline (first after $first s)" ge "$first" 1.7
done

# ------------------------------------------------------------- 6. totals
"$SBX" telemetry /seckill/tls >"$tmp/tls.json"
cat "$tmp/tls.json"
check "telemetry: full handshakes counted" tls_at_least hs_full 10
for k in bytes_in bytes_out records_in records_out; do
	check "telemetry: $k counted" tls_at_least "$k" 1
done
none_open() {
	[ "$(tele conns_open)" = 0 ]
}
check "nothing left open" wait_for 10 "conns_open 0" none_open
expect_eq "telemetry: no handshake in progress" "$(tls hs_inflight)" 0
expect_eq "telemetry: no plaintext buffer held" "$(tls buffers_used)" 0

# ------------------------------------------------ 7. plain = redirect
"$SBX" down >/dev/null || bad "sandbox down after the first run reported a problem"
sed -e 's/^plain = serve$/plain = redirect/' \
	-e 's/^auth = off$/auth = off\nip_rate = 1\nip_burst = 5\nip_slots = 1024/' \
	"$tmp/conf.ini" >"$tmp/redirect.ini"
sbx_up --lcores 1 --config "$tmp/redirect.ini"
out=$(sbx_exec curl -s -D - -o /dev/null -m 10 -H 'Host: shop.test' "$URL/v1/seckill/1?x=1" | tr -d '\r' || true)
expect_match "redirect: the plain port answers 308" "$(head -n 1 <<<"$out")" '^HTTP/1.1 308'
check "redirect: Location is the https URL" grep -qx 'Location: https://shop.test/v1/seckill/1?x=1' <<<"$out"
expect_eq "redirect: curl -L carries a POST over to https, a buy" \
	"$(hcode --resolve "shop.test:80:$SERVER" -L -H 'X-User-Id: 900' -X POST http://shop.test/v1/seckill/1)" 202
expect_eq "redirect: https serves directly" "$(hcode https://shop.test/healthz)" 200
# The burst of 5 is spent by now (the buy above took a handshake and the
# buy, /healthz a handshake): the next connections are reset before any
# crypto, at most one passing per second of refill.
codes=""
for _ in 1 2 3 4; do
	codes="$codes $(hcode https://shop.test/healthz)"
done
check "per-IP limit: new TLS connections refused ($codes)" grep -q '000' <<<"$codes"
check "per-IP limit: refused before the handshake (hs_ip_refused)" tls_at_least hs_ip_refused 1
finish
