#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# http_basics.sh - the HTTP/1.x behaviour of the front door through a real
# kernel client: curl (1.1, 1.0, reuse, Expect: 100-continue, 431, 400,
# 404, 405), two pipelined requests in one write, ping.
. "$(dirname "$0")/lib.sh"
require_env curl nc ping
sbx_up

# code ARGS... - the HTTP status curl got.
code() {
	sbx_exec curl -s -o /dev/null -m 5 -w '%{http_code}' "$@" || true
}

expect_eq "GET /healthz HTTP/1.1" "$(code "$URL/healthz")" 200
expect_eq "GET /healthz body" "$(sbx_exec curl -s -m 5 "$URL/healthz")" '{"status":"ok"}'
expect_eq "HEAD /healthz" "$(code -I "$URL/healthz")" 200
expect_eq "GET /healthz HTTP/1.0" "$(code -0 "$URL/healthz")" 200
expect_eq "HTTP/1.0 answers Connection: close" \
	"$(sbx_exec curl -s -0 -D - -o /dev/null -m 5 "$URL/healthz" | tr -d '\r' | grep -ci '^connection: close')" 1
expect_eq "unknown path" "$(code "$URL/no/such/thing")" 404
expect_eq "404 is JSON" "$(sbx_exec curl -s -m 5 "$URL/nope")" '{"status":"not_found"}'
expect_eq "POST /healthz" "$(code -d x "$URL/healthz")" 405

# Connection reuse: three requests, one TCP connection.
expect_eq "keep-alive reuse (connects for 3 requests)" \
	"$(sbx_exec curl -s -o /dev/null -o /dev/null -o /dev/null -m 5 -w '%{num_connects}' \
		"$URL/healthz" "$URL/healthz" "$URL/x" | tr -d '\n')" 100

# Expect: 100-continue gets the interim response, then the final one.
out=$(sbx_exec curl -sv -m 5 -H 'Expect: 100-continue' --data-binary 0123456789 "$URL/healthz" 2>&1 || true)
check "Expect: 100-continue -> 100 Continue" grep -q '< HTTP/1.1 100 Continue' <<<"$out"
check "Expect: 100-continue -> then 405" grep -q '< HTTP/1.1 405' <<<"$out"

big=$(head -c 9000 /dev/zero | tr '\0' a)
expect_eq "9000-byte header -> 431" "$(code -H "X-Big: $big" "$URL/healthz")" 431

raw() {
	sbx_exec bash -c "printf '$1' | timeout 5 nc -q 2 $SERVER 80" || true
}
out=$(raw 'GARBAGE\r\n\r\n')
check "malformed request line -> 400" grep -q '^HTTP/1.1 400' <<<"$out"
out=$(raw 'GET /healthz HTTP/1.1\r\n\r\n')
check "HTTP/1.1 without Host -> 400" grep -q '^HTTP/1.1 400' <<<"$out"
out=$(raw 'GET /healthz HTTP/2.0\r\nHost: a\r\n\r\n')
check "HTTP/2.0 request line -> 505" grep -q '^HTTP/1.1 505' <<<"$out"

# Two pipelined requests in one write: two answers, in order.
out=$(raw 'GET /healthz HTTP/1.1\r\nHost: a\r\n\r\nGET /nope HTTP/1.1\r\nHost: a\r\nConnection: close\r\n\r\n')
expect_eq "pipelined: two status lines in order" \
	"$(grep -o 'HTTP/1.1 [0-9]*' <<<"$out" | tr '\n' ' ')" "HTTP/1.1 200 HTTP/1.1 404 "

ping3() {
	sbx_exec ping -c 3 -i 0.2 -W 2 -q "$SERVER" >/dev/null
}
check "ping answers (3 of 3)" ping3

expect_eq "telemetry counted the 431" "$(tele http_431)" 1
# The last clients' FINs reach the dataplane after they exit: wait for the
# connections to close (5 s at most).
for _ in $(seq 1 50); do
	[ "$(tele conns_open)" = 0 ] && break
	sleep 0.1
done
expect_eq "telemetry: no connection left open" "$(tele conns_open)" 0
finish
