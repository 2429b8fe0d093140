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
require_env wrk taskset
[ -x "${SK_CROWD:-}" ] || skip "SK_CROWD is not an executable (run through meson test)"
[ -x "${SK_TOKEN:-}" ] || skip "SK_TOKEN is not an executable (run through meson test)"

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
	python3 - "$@" <<-'PY'
		import json, sys
		name, a, b, rps = sys.argv[1], json.load(open(sys.argv[2]))["total"], json.load(open(sys.argv[3]))["total"], sys.argv[4]
		req = max(1, b["requests"] - a["requests"])
		busy = b["busy_tsc"] - a["busy_tsc"]
		pmd = b["busy_pmd_tsc"] - a["busy_pmd_tsc"]
		passes = max(1, b["busy_passes"] - a["busy_passes"])
		print(f"FIGURES {name}: rps={rps} requests={req} busy_cycles/request={busy / req:.0f} "
		      f"tap_pmd={pmd / req:.0f} own={(busy - pmd) / req:.0f} requests/busy_pass={req / passes:.1f}")
	PY
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
won=$(python3 -c 'import json, sys; a, b = (json.load(open(f))["total"] for f in sys.argv[1:]); print(b["buy_won"] - a["buy_won"])' "$tmp/w0.json" "$tmp/w1.json")
expect_eq "winning: every request won" "$won" "$USERS"
figures winning "$tmp/w0.json" "$tmp/w1.json" \
	"$(python3 -c 'import json, sys; print(round(json.load(open(sys.argv[1]))["rps"]))' "$tmp/win.json")"

# --- the sold-out answer
good=$(
	"$SK_TOKEN" --secret-file "$tmp/secret" --sub 4242 --item 2
)
snap "$tmp/s0.json"
wrk_post soldout "$URL/v1/seckill/2" "$good"
snap "$tmp/s1.json"
check "sold out: no socket errors" bash -c "! grep -q 'Socket errors' '$tmp/soldout.txt'"
expect_eq "sold out: every answer refused" "$(non2xx_of "$tmp/soldout.txt")" "$(total_of "$tmp/soldout.txt")"
check "sold out: every refusal a 410" python3 -c 'import json, sys; a, b = (json.load(open(f))["total"] for f in sys.argv[1:]); sys.exit(b["http_410"] - a["http_410"] != b["requests"] - a["requests"])' "$tmp/s0.json" "$tmp/s1.json"
figures sold_out "$tmp/s0.json" "$tmp/s1.json" "$(rps_of "$tmp/soldout.txt")"

# --- 401: a forged token, refused after the HMAC
forged=$(
	"$SK_TOKEN" --secret-file "$tmp/other-secret" --sub 4242 --item 3
)
snap "$tmp/u0.json"
wrk_post unauthorized "$URL/v1/seckill/3" "$forged"
snap "$tmp/u1.json"
check "401: no socket errors" bash -c "! grep -q 'Socket errors' '$tmp/unauthorized.txt'"
check "401: every answer a 401 with a bad signature" python3 -c 'import json, sys; a, b = (json.load(open(f))["total"] for f in sys.argv[1:]); n = b["requests"] - a["requests"]; sys.exit(not (n > 0 and b["http_401"] - a["http_401"] == n and b["token_bad_signature"] - a["token_bad_signature"] == n))' "$tmp/u0.json" "$tmp/u1.json"
figures unauthorized "$tmp/u0.json" "$tmp/u1.json" "$(rps_of "$tmp/unauthorized.txt")"
expect_eq "item 3 untouched by the 401s" "$(tele remaining item3)" 10
finish
