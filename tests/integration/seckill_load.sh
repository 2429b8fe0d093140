#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# seckill_load.sh - what a buy costs the dataplane, through the tap, tokens
# on, one lcore (the last core) with the load generators on core 0:
#
#   healthz    wrk -t1 -c64 -d8s GET /healthz (the baseline: HTTP + tap)
#   winning    seckill-crowd: 150,000 users buying once each, 64 conns, all
#              win (signed JWTs, dedup insert, stock, order ring)
#   sold out   wrk -t1 -c64 -d8s POST on a sold-out item (the 99% answer)
#   401        wrk -t1 -c64 -d8s POST with a forged token (HMAC checked)
#
# Each phase is checked (every answer the expected one, no socket error)
# and prints a FIGURES line: rps, busy TSC cycles per request from the
# telemetry, the part spent inside the tap PMD (its bursts are system
# calls), and the rest - the dataplane's own cycles. The figures go to
# docs/benchmarks.md.
. "$(dirname "$0")/lib.sh"
require_env wrk taskset SK_CROWD SK_TOKEN

USERS=${SK_LOAD_USERS:-150000}
tmp=$(mktemp -d)
at_exit rm_tmp
head -c 32 /dev/urandom | od -An -tx1 | tr -d ' \n' >"$tmp/secret"
head -c 32 /dev/urandom | od -An -tx1 | tr -d ' \n' >"$tmp/other-secret"
{
	cat "$REPO/config/sandbox.ini"
	cat <<-EOF

		[seckill]
		auth = on
		secret_file = $tmp/secret
		order_ring = 262144

		[item.1]
		name = winners
		total = $((USERS + 1000))
		dedup_slots = 524288

		[item.2]
		name = sold out from the start
		total = 0

		[item.3]
		name = for the 401s
		total = 10
	EOF
} >"$tmp/load.ini"
sbx_up --lcores 1 --config "$tmp/load.ini"

snap() {
	"$SBX" telemetry >"$1"
}
# figures NAME BEFORE AFTER RPS - one FIGURES line from two snapshots.
figures() {
	itpy reports rate "$@"
}
# wrk_post NAME URL TOKEN - wrk POSTs with a bearer token; prints rps.
wrk_post() {
	cat >"$tmp/post.lua" <<-EOF
		wrk.method = "POST"
		wrk.headers["Authorization"] = "Bearer $3"
		wrk.headers["Content-Length"] = "0"
	EOF
	sbx_exec taskset -c 0 timeout 60 wrk -t1 -c64 -d8s -s "$tmp/post.lua" "$2" >"$tmp/$1.txt"
	cat "$tmp/$1.txt" >&2
}
rps_of() {
	sed -n 's/^Requests\/sec: *\([0-9.]*\).*/\1/p' "$1"
}
# total_of FILE - requests wrk completed.
total_of() {
	sed -n 's/^ *\([0-9]*\) requests in .*/\1/p' "$1"
}
non2xx_of() {
	sed -n 's/^ *Non-2xx or 3xx responses: *\([0-9]*\).*/\1/p' "$1"
}

# --- baseline
snap "$tmp/h0.json"
sbx_exec taskset -c 0 timeout 60 wrk -t1 -c64 -d8s "$URL/healthz" >"$tmp/healthz.txt"
snap "$tmp/h1.json"
check "healthz: no socket errors" bash -c "! grep -q 'Socket errors' '$tmp/healthz.txt'"
figures healthz "$tmp/h0.json" "$tmp/h1.json" "$(rps_of "$tmp/healthz.txt")"

# --- winning buys
snap "$tmp/w0.json"
rc=0
sbx_exec timeout 120 "$SK_CROWD" --server "$SERVER" --item 1 --users "$USERS" --conns 64 \
	--secret-file "$tmp/secret" --expect-units "$USERS" --max-seconds 90 --cpu 0 \
	--json "$tmp/win.json" >&2 || rc=$?
snap "$tmp/w1.json"
expect_eq "winning: crowd checks passed" "$rc" 0
won=$(itpy jsonq delta "$tmp/w0.json" "$tmp/w1.json" buy_won)
expect_eq "winning: every request won" "$won" "$USERS"
figures winning "$tmp/w0.json" "$tmp/w1.json" \
	"$(json_get "$tmp/win.json" 'round(d["rps"])')"

# --- the sold-out answer
good=$(
	"$SK_TOKEN" --secret-file "$tmp/secret" --sub 4242 --item 2
)
snap "$tmp/s0.json"
wrk_post soldout "$URL/v1/seckill/2" "$good"
snap "$tmp/s1.json"
check "sold out: no socket errors" bash -c "! grep -q 'Socket errors' '$tmp/soldout.txt'"
expect_eq "sold out: every answer refused" "$(non2xx_of "$tmp/soldout.txt")" "$(total_of "$tmp/soldout.txt")"
expect_eq "sold out: every refusal a 410" "$(itpy jsonq delta "$tmp/s0.json" "$tmp/s1.json" http_410)" \
	"$(itpy jsonq delta "$tmp/s0.json" "$tmp/s1.json" requests)"
figures sold_out "$tmp/s0.json" "$tmp/s1.json" "$(rps_of "$tmp/soldout.txt")"

# --- 401: a forged token, refused after the HMAC
forged=$(
	"$SK_TOKEN" --secret-file "$tmp/other-secret" --sub 4242 --item 3
)
snap "$tmp/u0.json"
wrk_post unauthorized "$URL/v1/seckill/3" "$forged"
snap "$tmp/u1.json"
check "401: no socket errors" bash -c "! grep -q 'Socket errors' '$tmp/unauthorized.txt'"
n=$(itpy jsonq delta "$tmp/u0.json" "$tmp/u1.json" requests)
n401=$(itpy jsonq delta "$tmp/u0.json" "$tmp/u1.json" http_401)
nbad=$(itpy jsonq delta "$tmp/u0.json" "$tmp/u1.json" token_bad_signature)
expect_eq "401: every answer a 401 with a bad signature (answers > 0, 401s, bad signatures)" \
	"$((n > 0)) $n401 $nbad" "1 $n $n"
figures unauthorized "$tmp/u0.json" "$tmp/u1.json" "$(rps_of "$tmp/unauthorized.txt")"
expect_eq "item 3 untouched by the 401s" "$(tele remaining item3)" 10
finish
