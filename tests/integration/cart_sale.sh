#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# cart_sale.sh - a sale of three items where half the crowd buys 3-line
# carts (POST /v1/cart, seckill-crowd --mix cart=50,lines=3) and the other
# half buys item 1 alone, with the control plane storing the orders in LMDB
# (ack = durable, one lcore, X-User-Id):
#
#  1. item 1 has 300 units, items 2 and 3 have 120 each; 1,500 users, 2,000
#     attempts (retries included): the crowd's checks pass (300 distinct
#     winners of item 1, one order per user, no order twice, no error), and
#     winners are answered 200 confirmed (durable ack, carts as buys);
#  2. the exact stock of every line: for each item, the arena's sold units
#     equal the units of the stored orders naming it, the store's live
#     units, and the total minus what the item read says is left; items 2
#     and 3 sold exactly as many units as there were cart winners;
#  3. no partial cart in LMDB: every stored order of item 1 is item 1 alone
#     or all three lines (items 1, 2, 3, one unit each);
#  4. seckillctl reconcile passes.
# Before the sale, over the wire: a body that is not a cart is 400 naming
# its line, a Content-Type that is not JSON 415, a body over http.body_max
# 413; none of them takes a unit.
# The crowd run is bounded (--max-seconds).
. "$(dirname "$0")/lib.sh"
require_env curl SK_CROWD SK_CONTROL SK_SECKILLCTL
# shellcheck source=lib/durable.sh
. "$IT_DIR/lib/durable.sh"

tmp=$(mktemp -d)
at_exit rm_tmp
export SK_SBX_ADMIN_PORT=$((17000 + $$ % 1000))
ADMIN=http://127.0.0.1:$SK_SBX_ADMIN_PORT
TOTAL=(0 300 120 120)
{
	durable_config
	cat <<-EOF

		[item.1]
		name = cart sale, the lead item
		total = ${TOTAL[1]}
		dedup_slots = 65536

		[item.2]
		name = cart sale, second line
		total = ${TOTAL[2]}

		[item.3]
		name = cart sale, third line
		total = ${TOTAL[3]}
	EOF
} >"$tmp/sale.ini"
sbx_up --config "$tmp/sale.ini"

# ------------------------------------------------------------ 0. refusals
# post CTYPE BODY - POST /v1/cart as user 9 from the client namespace; prints
# the status code and the body.
post() {
	sbx_exec curl -s -m 5 -X POST -H 'X-User-Id: 9' -H "Content-Type: $1" --data-binary "$2" \
		-w ' %{http_code}' "http://$SERVER/v1/cart" || true
}
expect_eq "a qty of 0 is 400 naming line 1" \
	"$(post application/json '{"lines":[{"item":1,"qty":1},{"item":2,"qty":0}]}')" \
	'{"status":"bad_request","line":1,"detail":"qty out of range 1..1000"} 400'
expect_eq "text/plain is 415" "$(post text/plain '{"lines":[{"item":1,"qty":1}]}')" \
	'{"status":"unsupported_media_type"} 415'
expect_match "a body over http.body_max is 413" \
	"$(post application/json "$(printf '%02000d' 0)")" ' 413$'
expect_eq "item 1 untouched by the refusals" "$(item_field sold 1)" 0

# ------------------------------------------------------------ 1. the sale
rc=0
sbx_exec taskset -c 0 "$SK_CROWD" --server "$SERVER" --item 1 --users 1500 --attempts 2000 \
	--retriers 0.3 --seed 5 --conns 32 --timeout-ms 8000 --max-seconds 60 \
	--mix cart=50,lines=3 --expect-units "${TOTAL[1]}" --json "$tmp/c.json" \
	--orders "$tmp/o" >"$tmp/c.out" || rc=$?
cat "$tmp/c.out"
expect_eq "sale: the crowd's checks pass" "$rc" 0
expect_eq "sale: carts were sent and some won" \
	"$(json_get "$tmp/c.json" 'd["carts"]["sent"] > 0 and d["carts"]["status"].get("confirmed", 0) > 0')" \
	True
expect_eq "sale: winners answered 200 confirmed, losers 410 (or a cart's 409 duplicate)" \
	"$(json_get "$tmp/c.json" 'sorted(set(d["http"]) - {"409"})')" "['200', '410']"
expect_eq "sale: every winner's order is in LMDB" "$(orders_in_store "$tmp/o")" "${TOTAL[1]}"

# ------------------------------------------------------------ 2. and 3. LMDB
for i in 1 2 3; do
	check "item $i: LMDB drained" wait_drained "$i"
done
check "no partial cart in LMDB (every order of item 1 is whole)" \
	itpy orders carts "$ADMIN" 1 3 >"$tmp/carts"
read -r norders ncarts units <"$tmp/carts"
echo "LMDB: $norders orders of item 1, $ncarts of them carts, $units"
expect_eq "LMDB: one order per winner of item 1" "$norders" "${TOTAL[1]}"
IFS=, read -r u1 u2 u3 <<<"${units#units:}"
stored=(0 "$u1" "$u2" "$u3")
for i in 1 2 3; do
	sold=$(item_field sold "$i")
	expect_eq "item $i: sold units == units of its stored orders" "$sold" "${stored[$i]}"
	expect_eq "item $i: LMDB live units == sold" "$(item_field ledger.live "$i")" "$sold"
	expect_eq "item $i: remaining == total - sold" "$(item_field remaining "$i")" \
		$((TOTAL[i] - sold))
done
expect_eq "items 2 and 3: one unit each per cart won" "$u2 $u3" "$ncarts $ncarts"

# ------------------------------------------------------------ 4. reconcile
check "seckillctl reconcile passes" reconcile
finish
