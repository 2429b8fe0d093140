#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# ipv6_sale.sh - a flash sale over IPv6, from the client namespace's
# kernel to the dataplane's address6 2001:2::1 (client 2001:2::2):
#
#  1. the sale: 500 units, 5,000 users trying 3 times each, tokens on
#     (seckill-crowd --server [2001:2::1]:80, 128 keep-alive connections,
#     signed JWTs): exactly 500 distinct winners, no user and no order
#     twice, every winner's order polls as queued, the stock and the
#     telemetry agree;
#  2. wrk -d 3s against http://[2001:2::1]/healthz: requests served, no
#     socket errors, no non-2xx answers;
#  3. the prefix is configurable (a second run, tcp.ip6_prefix = 48 and a
#     per-IP limit of 1/s, burst 3): two /64s of one /48 now share one
#     bucket, where ipv6_basics.sh shows that with the default /64 they
#     do not.
. "$(dirname "$0")/lib.sh"
require_env curl wrk SK_CROWD
[ "$(nproc)" -ge 2 ] || skip "needs 2 cpus"

tmp=$(mktemp -d)
at_exit rm_tmp
head -c 32 /dev/urandom | od -An -tx1 | tr -d ' \n' >"$tmp/secret"
chmod 600 "$tmp/secret"

# v6_config EXTRA - the sandbox's config with address6 = 2001:2::1/64 in
# [port0], then EXTRA (more sections).
v6_config() {
	awk '
		/^[ \t]*\[/ { sec = $0; gsub(/[ \t\[\]]/, "", sec) }
		{ print }
		sec == "port0" && $0 ~ /^[ \t]*address[ \t]*=/ { print "address6 = 2001:2::1/64" }' \
		"$REPO/config/sandbox.ini"
	printf '%s\n' "$1"
}

# v6_client ADDR... - IPv6 on in the client namespace (the sandbox turns it
# off), ADDR.../64 on its link, and the dataplane reachable (ping -6, which
# waits for neighbour discovery). Exits the test if it cannot.
v6_client() {
	local dev a
	dev=$(sbx_exec ip -o link show | awk -F': ' '$2 != "lo" { sub(/@.*/, "", $2); print $2; exit }')
	[ -n "$dev" ] || {
		bad "no interface in the client namespace"
		finish
	}
	sbx_exec sysctl -qw net.ipv6.conf.all.disable_ipv6=0 "net.ipv6.conf.$dev.disable_ipv6=0"
	for a in "$@"; do
		sbx_exec ip -6 addr add "$a/64" dev "$dev" nodad
	done
	check "ping -6 2001:2::1 answers" wait_for 15 "ping -6" \
		sbx_exec ping -6 -c 1 -W 1 -q 2001:2::1
}

URL6="http://[2001:2::1]"

# ------------------------------------------------------------------ run 1
v6_config "
[seckill]
auth = on
secret_file = $tmp/secret
token_skew_s = 5

[item.1]
name = the sale over IPv6
total = 500
price = 99900
dedup_slots = 65536" >"$tmp/run1.ini"
sbx_up --lcores 2 --config "$tmp/run1.ini"
v6_client 2001:2::2

# --- 1. the sale
rc=0
sbx_exec timeout 150 "$SK_CROWD" --server "[2001:2::1]:80" --item 1 --users 5000 \
	--attempts 15000 --retriers 1 --conns 128 --secret-file "$tmp/secret" \
	--expect-units 500 --poll --max-seconds 120 --cpu 0 --json "$tmp/crowd.json" \
	--orders "$tmp/orders.txt" || rc=$?
expect_eq "crowd over IPv6: every check passed (exit status)" "$rc" 0
itpy reports crowd "$tmp/crowd.json" >"$tmp/crowd.txt"
cat "$tmp/crowd.txt"
val() {
	sed -n "s/^$1 //p" "$tmp/crowd.txt"
}
expect_eq "the crowd spoke to [2001:2::1]:80" "$(itpy jsonq field "$tmp/crowd.json" server)" \
	"[2001:2::1]:80"
expect_eq "exactly 500 distinct winners" "$(val winners)" 500
expect_eq "500 fresh wins" "$(val fresh_wins)" 500
expect_eq "every one of the 15000 attempts answered" "$(val answered)" 15000
expect_eq "every 202 is a win or a duplicate of one" "$(val dup_vs_202)" 0
expect_eq "every winner's order polls as queued" "$(val polls_queued)" 500
expect_eq "no client errors" "$(val errors)" 0
expect_eq "500 winner lines" "$(wc -l <"$tmp/orders.txt")" 500
expect_eq "no user won twice" "$(cut -d' ' -f1 "$tmp/orders.txt" | sort | uniq -d | wc -l)" 0
expect_eq "no order given twice" "$(cut -d' ' -f2 "$tmp/orders.txt" | sort | uniq -d | wc -l)" 0
expect_eq "item 1 reads sold_out" "$(val item_state)" sold_out
expect_eq "item 1 remaining (curl -6)" \
	"$(sbx_exec curl -6 -s -m 5 "$URL6/v1/items/1" | itpy jsonq field - remaining)" 0
expect_eq "telemetry: buy_won" "$(tele buy_won)" 500
expect_eq "telemetry: engine_ok" "$(tele engine_ok)" 500
expect_eq "telemetry: item1 sold" "$(tele sold item1)" 500
expect_eq "telemetry: item1 remaining" "$(tele remaining item1)" 0

# --- 2. wrk over IPv6, bounded
sbx_exec timeout 30 wrk -t1 -c32 -d3s "$URL6/healthz" | tee "$tmp/wrk.txt"
check "wrk -6: served requests" grep -Eq '^ +[1-9][0-9]* requests in' "$tmp/wrk.txt"
check "wrk -6: no socket errors" bash -c "! grep -q 'Socket errors' '$tmp/wrk.txt'"
check "wrk -6: no non-2xx responses" bash -c "! grep -q 'Non-2xx' '$tmp/wrk.txt'"
"$SBX" down >/dev/null || bad "sandbox down after run 1 reported a problem"

# ------------------------------------------------------------------ run 2
v6_config "
[tcp]
ip6_prefix = 48

[seckill]
auth = off
ip_rate = 1
ip_burst = 3
ip_slots = 1024

[item.1]
total = 1000
per_user_limit = 100" >"$tmp/run2.ini"
sbx_up --config "$tmp/run2.ini"
v6_client 2001:2::2 2001:2:0:1::2
# 3 buys from 2001:2::2 take the burst; the 4th, from another /64 of the
# same /48, is refused. One curl run, so the four come well inside a second.
buy_args=()
n=0
for src in 2001:2::2 2001:2::2 2001:2::2 2001:2:0:1::2; do
	n=$((n + 1))
	[ "$n" -gt 1 ] && buy_args+=(--next)
	buy_args+=(-6 -s -o /dev/null -m 10 --interface "$src" -w '%{http_code} '
		-H "X-User-Id: $((8000 + n))" -X POST "$URL6/v1/seckill/1")
done
expect_eq "ip6_prefix = 48: 2001:2::2 x3, then 2001:2:0:1::2 (same /48) is limited" \
	"$(sbx_exec curl "${buy_args[@]}" || true)" "202 202 202 429 "
expect_eq "telemetry: rl_refused_ip" "$(tele rl_refused_ip)" 1
finish
