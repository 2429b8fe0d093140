#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# durable.sh - ack = durable and recovery, with the control plane in the
# sandbox (seckill-control + LMDB store), one lcore, X-User-Id:
#
#  1. a durable sale of 2,500 units on a status table of 2^10 slots (the
#     slots are reused, the lcore sells past them): every winner is answered
#     200 confirmed, every 200's order is in LMDB, LMDB live units ==
#     winners, reconcile passes; the control plane's map starts at 1 MiB
#     and grows online during the sale (map_grow_at = 5), seen in /metrics
#     and its log;
#  2. kill -9 of the dataplane at a random moment mid-sale (5 seeds), one
#     round killing the control plane too: restart both (recovery from
#     LMDB), then every order answered 200 is still in the store, its user
#     gets the same order back (no user has two orders), reconcile passes,
#     and a second wave buys exactly the units left;
#  3. kill -9 of the control plane mid-sale, restart it: every winner ends
#     in LMDB, reconcile passes;
#  4. payment timeout (3 s): the unpaid units come back and a second wave
#     buys exactly those; then pay vs timeout: half the orders are paid
#     right at their deadline, each order ends paid xor cancelled and the
#     units add up;
#  5. /metrics scraped: every line is a comment or "name{labels} value";
#  6. ack = queued with the control plane stopped, then kill -9 of the
#     dataplane: the orders answered 202 are lost; after the restart their
#     poll answers 410 not_placed (a stored one 200 settled), and their
#     buyer buys again and wins.
# Every crowd run is bounded (--max-seconds) and small.
. "$(dirname "$0")/lib.sh"
require_env curl SK_CROWD SK_CONTROL SK_SECKILLCTL
# shellcheck source=lib/durable.sh
. "$IT_DIR/lib/durable.sh"

tmp=$(mktemp -d)
# stop_clients - for at_exit: the background poller and crowds this shell
# started, whole trees, by PID (kill_tree skips any that already ended).
ppid="" cpid=""
stop_clients() {
	# shellcheck disable=SC2086 # empty ones vanish
	kill_tree TERM ${ppid:-} ${cpid:-}
}
at_exit stop_clients
at_exit rm_tmp
export SK_SBX_ADMIN_PORT=$((18000 + $$ % 1000))
ADMIN=http://127.0.0.1:$SK_SBX_ADMIN_PORT
TOTAL=200

# make_config FILE TOTAL [ACK] - a sale of item 1 with its store in
# $tmp/store, status_bits 10 (1,024 status slots per lcore), ack durable
# (5 s) or ACK. One file for both daemons: the sandbox starts seckill-control
# with --config FILE alone (its [store], [admin] and [control] keys; the
# sandbox's admin token); section 4 overrides payment_timeout_s by a flag.
make_config() {
	{
		cat "$REPO/config/sandbox.ini"
		cat <<-EOF

			[seckill]
			auth = off
			ack = ${3:-durable}
			ack_wait_ms = 5000
			status_bits = 10

			[store]
			path = $tmp/store
			batch_us = 500
			# A 1 MiB map grown at 5 % used: the sale makes it grow.
			map_mb = 1
			map_grow_at = 5

			[control]
			payment_timeout_s = 900

			[admin]
			socket = /run/$SK_SBX/admin.sock
			port = $SK_SBX_ADMIN_PORT
			token_file = /run/$SK_SBX/admin.token

			[item.1]
			name = durable sale
			total = $2
			dedup_slots = 65536
		EOF
	} >"$1"
}

up() {
	sbx_up --config "$1"
}

crowd() {
	sbx_exec taskset -c 0 "$SK_CROWD" --server "$SERVER" --item 1 --conns 32 \
		--timeout-ms 8000 --max-seconds 30 "$@"
}

# item_field, json_get, orders_in_store, same_orders, reconcile and
# wait_drained come from lib.sh.

cfg=$tmp/sale.ini
STOTAL=2500 # more than two turns of the status table
make_config "$cfg" $STOTAL

# ------------------------------------------------------------ 1. durable sale
check "seckillctl config check: the sale's file is good" "$SK_SECKILLCTL" config check "$cfg"
up "$cfg"
cpid=$(sed -n 's/^control_pid=//p' "/run/$SK_SBX/env")
expect_eq "seckill-control started from the file alone" \
	"$(tr '\0' ' ' <"/proc/$cpid/cmdline" | sed 's/.* -- //')" "--config /run/$SK_SBX/config.ini "
rc=0
crowd --users 6000 --attempts 8000 --seed 1 --expect-units $STOTAL \
	--json "$tmp/c1.json" --orders "$tmp/o1" >"$tmp/c1.out" || rc=$?
cat "$tmp/c1.out"
expect_eq "durable sale: crowd checks pass" "$rc" 0
expect_eq "durable sale: answers only 200 and 410" \
	"$(json_get "$tmp/c1.json" 'sorted(d["http"])')" "['200', '410']"
expect_eq "durable sale: every 200 is in LMDB" "$(orders_in_store "$tmp/o1")" $STOTAL
expect_eq "durable sale: LMDB live units == winners" "$(item_field ledger.live)" \
	"$(json_get "$tmp/c1.json" 'd["winners"]')"
# Parked answers that became 200: every winner, and retries of winners
# whose order was still queued (parked as well); never more than the 200s.
d200=$(tele durable_200)
check "durable sale: telemetry durable_200 >= winners" test "$d200" -ge $STOTAL
check "durable sale: telemetry durable_200 <= the crowd's 200 answers" \
	test "$d200" -le "$(json_get "$tmp/c1.json" 'd["http"]["200"]')"
check "durable sale: reconcile passes" reconcile
# The dataplane's request metrics, as the control plane's /metrics serves them.
curl -sf "$ADMIN/metrics" >"$tmp/m1"
prom() { sed -n "s/^$1 //p" "$tmp/m1"; }
expect_eq "durable sale: metrics won == winners" \
	"$(prom 'seckill_requests_total{outcome="won"}')" "$(json_get "$tmp/c1.json" 'd["winners"]')"
expect_eq "durable sale: metrics won == telemetry buy_won" \
	"$(prom 'seckill_requests_total{outcome="won"}')" "$(tele buy_won)"
check "durable sale: buy latency histogram counted" \
	test "$(prom seckill_buy_latency_seconds_count)" -gt 0
expect_eq "durable sale: every buy answer timed" "$(prom seckill_buy_latency_seconds_count)" \
	"$(awk '/^seckill_requests_total\{/ { n += $2 } END { print n }' "$tmp/m1")"
check "durable sale: the map grew online" test "$(prom seckill_store_map_grows_total)" -ge 1
check "durable sale: the map is above its 1 MiB start" \
	test "$(prom seckill_store_map_bytes)" -gt 1048576
expect_eq "durable sale: the map is not capped" "$(prom seckill_store_map_capped)" 0
check "durable sale: the grow is logged" \
	grep -q 'event=store old_bytes=1048576 new_bytes=2097152 .*msg="map grown"' \
	"/run/$SK_SBX/control.log"
"$SBX" down >/dev/null
make_config "$cfg" $TOTAL

# --------------------------------------- 2. kill -9 of the dataplane mid-sale
# Seeds 1..5 kill the dataplane alone; seed 6 kills the control plane too.
# A bigger sale on 8 connections: each win waits for its group commit, so
# the sale lasts over a second and the kill lands in the middle of it.
KTOTAL=1000
make_config "$tmp/kill.ini" $KTOTAL
for seed in 1 2 3 4 5 6; do
	rm -rf "$tmp/store"
	up "$tmp/kill.ini"
	RANDOM=$seed
	at=$((50 + RANDOM % 700)) # here, not in $(...): a subshell reseeds RANDOM
	# Mid-sale, whatever the machine's speed: a poller (the admin API's view
	# of the arena, 5 ms apart; 15 s at most) SIGKILLs what it must, by the
	# PIDs the sandbox recorded, once a seeded 50..749 of the 1,000 units
	# are sold. The crowd starts once the poller had its first answer.
	kpids=() # the control plane first
	if [ "$seed" = 6 ]; then
		kpid=$(sed -n 's/^control_pid=//p' "/run/$SK_SBX/env")
		[ -z "$kpid" ] || kpids+=("$kpid")
	fi
	kpids+=("$(sed -n 's/^pid=//p' "/run/$SK_SBX/env")")
	kill_poller_start "$at" 15 "${kpids[@]}"
	crowd --users 3000 --attempts 3000 --seed "$seed" --json "$tmp/k.json" --conns 8 \
		--orders "$tmp/k1" --timeout-ms 6000 --max-seconds 12 >"$tmp/k.out" 2>&1 &
	cpid=$!
	wait "$ppid" || true
	[ "$seed" = 6 ] && "$SBX" control kill # already dead: waits until it is gone
	"$SBX" kill
	wait "$cpid" || true
	wins=$(wc -l <"$tmp/k1")
	n202=$(json_get "$tmp/k.json" 'd["http"].get("202", 0)')
	"$SBX" down >/dev/null
	up "$tmp/kill.ini"
	restored=$(sed -n 's/.*event=recovery .* units=\([0-9]*\) holdings=.*/\1/p' "/run/$SK_SBX/log")
	echo "seed $seed: killed once $at were sold: $wins winners answered, $n202 of them 202; $restored units restored"
	expect_eq "kill $seed: no winner answered 202 (wait 5 s)" "$n202" 0
	check "kill $seed: the kill came mid-sale (some but not all units answered)" \
		test "$wins" -gt 0 -a "$wins" -lt $KTOTAL
	check "kill $seed: every 200 still in LMDB" orders_in_store "$tmp/k1"
	check "kill $seed: restored units >= winners answered 200" test "${restored:-0}" -ge "$wins"
	check "kill $seed: reconcile after restart" reconcile
	left=$((KTOTAL - restored))
	# The first wave's users again, and new ones: earlier winners get their
	# order back (duplicate) while units remain, the rest buy what is left.
	crowd --users 5000 --attempts 5000 --seed $((seed + 100)) --conns 32 \
		--json "$tmp/k2.json" --orders "$tmp/k2" >"$tmp/k2.out" 2>&1 || true
	check_second_wave "$seed" "$left" "$KTOTAL"
	"$SBX" down >/dev/null
done

# --------------------------------------- 3. kill -9 of the control plane mid-sale
rm -rf "$tmp/store"
up "$cfg"
crowd --users 3000 --attempts 6000 --seed 7 --expect-units $TOTAL --json "$tmp/p.json" \
	--orders "$tmp/p1" >"$tmp/p.out" 2>&1 &
cpid=$!
# Kill once the sale is under way: the first orders are in LMDB (10 s at
# most, or until the crowd is done).
# sale_begun - an order is in LMDB, or the crowd is done.
sale_begun() {
	[ "$(item_field ledger.live 2>/dev/null || echo 0)" -gt 0 ] || ! kill -0 "$cpid" 2>/dev/null
}
wait_for 10 "the first orders in LMDB" sale_begun || true
"$SBX" control kill
# Under ASan the secondary's EAL init once failed here while the crowd and
# the dataplane loaded both cores: up to 3 tries, each reported.
for try in 1 2 3; do
	"$SBX" control start && break
	echo "control plane restart: try $try failed"
done
rc=0
wait "$cpid" || rc=$?
cat "$tmp/p.out"
expect_eq "control killed: crowd checks pass" "$rc" 0
check "control killed: LMDB drained" wait_drained
expect_eq "control killed: every winner in LMDB" "$(orders_in_store "$tmp/p1")" $TOTAL
expect_eq "control killed: LMDB live units == total" "$(item_field ledger.live)" $TOTAL
check "control killed: reconcile" reconcile
"$SBX" down >/dev/null

# --------------------------------------- 4. payment timeout, pay vs timeout
rm -rf "$tmp/store"
make_config "$cfg" 50
SK_SBX_CONTROL_ARGS="--payment-timeout 3" up "$cfg"
crowd --users 500 --seed 8 --expect-units 50 --orders "$tmp/t1" >/dev/null
expect_eq "timeout: 50 live before the deadline" "$(item_field ledger.live)" 50
# live_units_are N - LMDB's live units of item 1 are N.
live_units_are() {
	[ "$(item_field ledger.live)" = "$1" ]
}
wait_for 10 "unpaid orders cancelled" live_units_are 0 || true
expect_eq "timeout: unpaid orders cancelled after 3 s" "$(item_field ledger.live)" 0
expect_eq "timeout: units back in the arena" "$(item_field remaining)" 50
rc=0
crowd --users 500 --user-base 1001 --seed 9 --expect-units 50 --json "$tmp/t2.json" \
	--orders "$tmp/t2" >/dev/null || rc=$?
expect_eq "timeout: second wave buys exactly the returned units" \
	"$rc:$(json_get "$tmp/t2.json" 'd["fresh_wins"]')" "0:50"

# Pay the first 25 orders of the second wave right at their deadline.
itpy orders pay-race "$tmp/t2" "$ADMIN" >"$tmp/race"
read -r paid cancelled badn <"$tmp/race"
echo "pay vs timeout: $paid paid, $cancelled cancelled"
expect_eq "pay vs timeout: each order paid xor cancelled, as its pay answer said" "$badn" 0
expect_eq "pay vs timeout: paid + cancelled == orders" "$((paid + cancelled))" 50
expect_eq "pay vs timeout: LMDB live units == paid" "$(item_field ledger.live)" "$paid"
expect_eq "pay vs timeout: arena remaining == cancelled" "$(item_field remaining)" "$cancelled"
check "pay vs timeout: reconcile" reconcile

# --------------------------------------- 5. /metrics
curl -sf "$ADMIN/metrics" >"$tmp/metrics"
check "metrics: every line a comment or 'name{labels} value'" itpy metrics format "$tmp/metrics"
check "metrics: orders committed counted" grep -qE '^seckill_orders_committed_total [1-9]' "$tmp/metrics"
"$SBX" down >/dev/null

# --------------------------------------- 6. 202 lost with a crash: buy again
# buy USER - "<status> <order>" of one buy of item 1 by USER.
buy() {
	local body
	body=$(sbx_exec curl -s -m 5 -X POST -H "X-User-Id: $1" "$URL/v1/seckill/1")
	echo "$(echo "$body" | sed -n 's/.*"status":"\([a-z_]*\)".*/\1/p') $(echo "$body" | sed -n 's/.*"order":"\([0-9]*\)".*/\1/p')"
}
# poll ORDER - "<http status> <body>" of GET /v1/orders/ORDER.
poll() {
	sbx_exec curl -s -m 5 -w ' %{http_code}' "$URL/v1/orders/$1" |
		awk '{ code = $NF; $NF = ""; sub(/ $/, ""); print code " " $0 }'
}
rm -rf "$tmp/store"
make_config "$tmp/lost.ini" 10 queued
sbx_up --config "$tmp/lost.ini" >/dev/null
read -r st1 o1 <<<"$(buy 601)"
expect_eq "lost: a buy with the control plane up is queued" "$st1" queued
check "lost: that order reaches LMDB" wait_drained
"$SBX" control kill
read -r st2 o2 <<<"$(buy 602)"
expect_eq "lost: a buy with the control plane down is queued (202)" "$st2" queued
"$SBX" kill
"$SBX" down >/dev/null
sbx_up --config "$tmp/lost.ini" >/dev/null
expect_eq "lost: the lost order polls as not placed" "$(poll "$o2")" \
	"410 {\"order\":\"$o2\",\"status\":\"not_placed\",\"detail\":\"buy again\"}"
expect_eq "lost: the stored order polls as settled" "$(poll "$o1")" \
	"200 {\"order\":\"$o1\",\"status\":\"settled\"}"
read -r st3 o3 <<<"$(buy 602)"
expect_eq "lost: its buyer buys again and wins a new order" \
	"$st3:$([ -n "$o3" ] && [ "$o3" != "$o2" ] && echo new)" queued:new
read -r st4 o4 <<<"$(buy 601)"
expect_eq "lost: the stored order's buyer gets it back" "$st4 $o4" "confirmed $o1"
check "lost: LMDB drained" wait_drained
expect_eq "lost: LMDB live units == the two orders" "$(item_field ledger.live)" 2
check "lost: reconcile" reconcile
"$SBX" down >/dev/null

finish
