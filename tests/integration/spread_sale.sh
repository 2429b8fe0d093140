#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# spread_sale.sh - a JWT sale on TWO dataplane lcores over a two-queue memif
# port (the spread layout: no RSS, no software dispatch; the loadgen's stack
# k sends its flows on queue k, which dataplane lcore k owns), with the
# control plane storing the orders in LMDB:
#
#  1. the port comes up in mode=spread with 2 queues;
#  2. wave A: seckill-loadgen on 2 lcores, users 1..2000, each user twice
#     (its retry on the same stack): every attempt is answered with the
#     user's order (a win, then the same order again: 200/202), both
#     loadgen stacks sent and got answers, both dataplane lcores served;
#  3. wave B: users 1001..3000, each twice, split the other way: users
#     1001..2000, who won on lcore 1 in wave A, now arrive on lcore 0 (and
#     must get their order back, not a second unit), users 2001..3000 race
#     for the last 500 units: the 500 losers get 410 on both attempts, the
#     item sold out (sold 2,500 = total, remaining 0);
#  4. LMDB holds 2,500 confirmed orders of 2,500 distinct users, from
#     lcore 0 AND lcore 1: nobody won twice, on either lcore.
# Every loadgen run is bounded by its request count and a timeout.
. "$(dirname "$0")/lib.sh"
require_env curl SK_LOADGEN SK_CONTROL SK_SECKILLCTL
[ "$(nproc)" -ge 2 ] || skip "needs 2 cpus"
tmp=$(mktemp -d)
at_exit rm_tmp
export SK_SBX_ADMIN_PORT=$((19000 + $$ % 1000))
ADMIN=http://127.0.0.1:$SK_SBX_ADMIN_PORT
LG_PREFIX=sk-spread-lg-$$
secret_file "$tmp/secret"
{
	cat "$REPO/config/sandbox.ini"
	cat <<-EOF

		[seckill]
		auth = on
		secret_file = $tmp/secret
		store = $tmp/store

		[item.1]
		name = spread sale
		total = 2500
	EOF
} >"$tmp/sale.ini"
sbx_up --memif --lcores 2 --config "$tmp/sale.ini"
MEMIF=$(echo "$SBX_OUT" | sed -n 's/.* memif=\([^ ]*\).*/\1/p')
MEMIF_ADDR=$(echo "$SBX_OUT" | sed -n 's/.* memif_addr=\([0-9.]*\).*/\1/p')
expect_match "the memif port is spread over 2 queues" \
	"$(grep 'event=port port=1 ' "/run/$SK_SBX/log")" "mode=spread queues=2"

# wave NAME USER_BASE - 2,000 tokens from USER_BASE, 4,000 requests (each
# user twice), on loadgen lcores 0 and 1; JSON in $tmp/NAME.json.
wave() {
	local rc=0
	timeout 180 "$SK_LOADGEN" -l 0,1 --in-memory --no-telemetry --file-prefix "$LG_PREFIX" \
		--no-pci --log-level=lib.eal:warning \
		--vdev "net_memif0,role=client,socket=$MEMIF,socket-abstract=no" -- \
		--server "$MEMIF_ADDR" --quiet --json --mix buy_jwt=1 --item 1 \
		--secret-file "$tmp/secret" --user-base "$2" --tokens 2000 --requests 4000 \
		--conns 16 --depth 4 --duration 120 >"$tmp/$1.json" 2>"$tmp/$1.log" || rc=$?
	sed -n '/^seckill-loadgen: /,$p' "$tmp/$1.log"
	expect_eq "wave $1: loadgen exit status" "$rc" 0
	expect_eq "wave $1: every request answered, no error" \
		"$(json_get "$tmp/$1.json" '(d["all_answered"], d["errors"]["total"])')" "(True, 0)"
	expect_eq "wave $1: both loadgen stacks sent and got answers" \
		"$(json_get "$tmp/$1.json" '[x["answered"] > 0 for x in d["lcores"]]')" "[True, True]"
}
# served - requests per dataplane lcore, "N0 N1"
served() {
	"$SBX" telemetry | itpy jsonq lcores - requests
}

wave a 1
expect_eq "wave a: every attempt answered with the user's order (200/202)" \
	"$(json_get "$tmp/a.json" 'd["wins"]["total"]')" 4000
read -ra per_lcore <<<"$(served)"
echo "requests per dataplane lcore after wave a: ${per_lcore[*]}"
check "both dataplane lcores served (flows on both queues)" itpy jsonq positive 2 "${per_lcore[@]}"

wave b 1001
expect_eq "wave b: 500 new users lost (410 twice each), everyone else has an order" \
	"$(json_get "$tmp/b.json" '(d["status"].get("410", 0), d["wins"]["total"])')" "(1000, 3000)"
expect_eq "item 1 sold out exactly (sold, remaining)" \
	"$("$SBX" telemetry /seckill/items | itpy jsonq field - item1.sold),$("$SBX" telemetry /seckill/items | itpy jsonq field - item1.remaining)" "2500,0"

in_store() {
	itpy orders store-list "$ADMIN" 1 >"$tmp/orders" && [ "$(wc -l <"$tmp/orders")" = 2500 ]
}
wait_for 60 "the 2,500 orders in LMDB" in_store
expect_eq "LMDB: 2,500 orders of 2,500 distinct users" \
	"$(wc -l <"$tmp/orders") $(cut -d' ' -f1 "$tmp/orders" | sort -u | wc -l)" "2500 2500"
lc=$(itpy orders lcores "$tmp/orders")
echo "orders per lcore: $lc"
check "orders sold on lcore 0 and lcore 1" itpy orders lcores-both --won "$lc"
rm -rf "/var/run/dpdk/$LG_PREFIX"
finish
