#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# durable_dispatch.sh - ack = durable with TWO dataplane lcores on a
# one-queue port (the sandbox's af_packet veth; software dispatch,
# dataplane/sk_dispatch.c), the control plane in the sandbox, tokens on
# (JWT HS256):
#
#  1. a durable sale of 2,000 units to 20,000 users (30,000 attempts, some
#     users retrying; seckill-crowd, not pinned): exactly 2,000 winners, no
#     user twice, every winner answered 200 confirmed (a 202 is tolerated
#     only if the final poll finds the order confirmed, and reported), every
#     winner's order in LMDB with its user (admin API for all, seckillctl
#     order show for a sample of both lcores), orders won on lcore 0 AND 1
#     (order ids: epoch30 | member5 | lcore6 | seq23), each lcore's settled mark past
#     its last order, the ledger (seckillctl items) == winners, reconcile
#     exits 0, seckill_orders_committed_total == winners;
#  2. kill -9 of the dataplane mid-sale (2 rounds, at a seeded count of units sold), restart
#     on 2 lcores: every order answered 200 is still in LMDB, orders of both
#     lcores survived, recovery restored at least those units, reconcile
#     passes, a second wave (old and new users) buys exactly the rest and
#     old winners get their order back;
#  3. a winner's retry that lands on the OTHER lcore while the order is
#     still queued (control plane stopped on purpose, connections steered
#     to an lcore by probing): it must be answered 200 confirmed as soon as
#     the order commits - not 202 at once, not after ack_wait_ms.
# Every crowd run and every wait is bounded in count and time.
. "$(dirname "$0")/lib.sh"
require_env curl SK_CROWD SK_TOKEN SK_CONTROL SK_SECKILLCTL
[ "$(nproc)" -ge 2 ] || skip "needs 2 cpus"
# shellcheck source=lib/durable.sh
. "$IT_DIR/lib/durable.sh"

tmp=$(mktemp -d)
# stop_clients - for at_exit: the background poller, crowds and steering
# driver this shell started, whole trees, by PID (kill_tree skips any that
# already ended).
ppid="" cpid="" dpid=""
stop_clients() {
	# shellcheck disable=SC2086 # empty ones vanish
	kill_tree TERM ${ppid:-} ${cpid:-} ${dpid:-}
}
at_exit stop_clients
at_exit rm_tmp
export SK_SBX_ADMIN_PORT=$((19000 + $$ % 1000))
ADMIN=http://127.0.0.1:$SK_SBX_ADMIN_PORT
head -c 32 /dev/urandom | od -An -tx1 | tr -d ' \n' >"$tmp/secret"
chmod 600 "$tmp/secret"
T0=$SECONDS

# make_config FILE TOTAL ACK_WAIT_MS - item 1 (TOTAL units) and item 2 (100
# units), auth on, store in $tmp/store.
make_config() {
	{
		cat "$REPO/config/sandbox.ini"
		cat <<-EOF

			[seckill]
			auth = on
			secret_file = $tmp/secret
			store = $tmp/store
			ack_wait_ms = $3

			[item.1]
			name = durable dispatch sale
			total = $2
			dedup_slots = 65536

			[item.2]
			name = steered retries
			total = 100
		EOF
	} >"$1"
}

up2() {
	sbx_up --lcores 2 --config "$1"
	grep -q "event=port .*mode=dispatch" "/run/$SK_SBX/log" || {
		bad "the dataplane runs its software dispatch: $(grep -E "event=(port|ready)" "/run/$SK_SBX/log")"
		finish
		exit 1
	}
}

# crowd ARGS... - seckill-crowd on item 1 from the namespace, not pinned (the
# dataplane has both cores), bounded by --max-seconds and timeout(1).
crowd() {
	sbx_exec timeout 100 "$SK_CROWD" --server "$SERVER" --item 1 --secret-file "$tmp/secret" \
		--timeout-ms 8000 --max-seconds 60 "$@"
}

# orders_durable FILE - orders_in_store without its count on stdout.
orders_durable() {
	orders_in_store "$1" >/dev/null
}

# lcore_tele KEY - "v0 v1": a per-lcore value of /seckill/stats.
lcore_tele() {
	"$SBX" telemetry | itpy jsonq lcores - "$1"
}

# ------------------------------------------------------------ 1. durable sale
TOTAL=2000
make_config "$tmp/sale.ini" $TOTAL 5000
up2 "$tmp/sale.ini"
rc=0
crowd --users 20000 --attempts 30000 --retriers 0.2 --conns 128 --seed 1 --poll \
	--expect-units $TOTAL --json "$tmp/c1.json" --orders "$tmp/o1" >"$tmp/c1.out" || rc=$?
cat "$tmp/c1.out"
expect_eq "sale: crowd checks pass (one order per user, orders unique, polls, no error)" "$rc" 0
expect_eq "sale: exactly $TOTAL winners, $TOTAL fresh wins" \
	"$(json_get "$tmp/c1.json" '(d["winners"], d["fresh_wins"])')" "($TOTAL, $TOTAL)"
expect_eq "sale: every attempt answered" "$(json_get "$tmp/c1.json" 'd["answered"]')" 30000
# Two tries of one user in flight at once on two lcores: one may meet the
# other's pending dedup slot and get 429 busy (seckill.sh); that is allowed.
expect_eq "sale: answers only 200, 410 (429 busy, 202 allowed, see below)" \
	"$(json_get "$tmp/c1.json" '[k for k in sorted(d["http"]) if k not in ("200", "202", "410", "429")]')" "[]"
n202=$(json_get "$tmp/c1.json" 'd["http"].get("202", 0)')
expect_eq "sale: every winner's poll says confirmed" \
	"$(json_get "$tmp/c1.json" 'd["polls"]["status"].get("confirmed", 0)')" $TOTAL
# With ack_wait_ms 5000 and a live control plane every parked winner is
# answered 200, also a retry parked on the other lcore (part 3).
expect_eq "sale: no winner answered 202 (every parked answer settled)" "$n202" 0
lc1=$(order_lcores "$tmp/o1")
echo "winners per lcore (from order ids): $lc1"
check "sale: both lcore 0 and lcore 1 won orders" \
	itpy orders lcores-both --won "$lc1"
expect_eq "sale: wins per lcore in telemetry == order ids per lcore" \
	"$(lcore_tele buy_won | sed 's/ /:/')" \
	"$(itpy orders lcores-pair "$lc1")"
expect_eq "sale: every winner's order in LMDB with its user (admin API, all)" "$(orders_in_store "$tmp/o1")" $TOTAL
# seckillctl order show for 150 winners of each lcore.
check "sale: seckillctl order show: 150 winners per lcore confirmed in LMDB" itpy orders ctl-show "$tmp/o1" "$SBX"
"$SBX" ctl --json items >"$tmp/items.json"
expect_eq "sale: seckillctl items: ledger live/lines == winners, arena sold == winners" \
	"$(json_get "$tmp/items.json" '[(i["ledger"]["live"], i["ledger"]["lines"], i["sold"]) for i in d["items"] if i["item"] == 1][0]')" \
	"($TOTAL, $TOTAL, $TOTAL)"
check "sale: seckillctl reconcile exits 0" reconcile
expect_eq "sale: seckill_orders_committed_total == winners" "$(metric seckill_orders_committed_total)" $TOTAL
check "sale: each lcore's settled mark is past its last order" itpy orders settled-past "$tmp/o1" \
	"$(metric 'seckill_settled_seq{lcore="0"}')" "$(metric 'seckill_settled_seq{lcore="1"}')"
read -r dt_timeout dt_200 dt_parked <<<"$(tele durable_timeout) $(tele durable_200) $(tele durable_parked)"
echo "durable: parked $dt_parked, answered 200 $dt_200, wait ran out $dt_timeout; per lcore parked: $(lcore_tele durable_parked)"
check "sale: durable_200 >= winners" test "$dt_200" -ge $TOTAL
# No parked answer waits out ack_wait_ms (5 s; a commit takes ~10 ms here).
expect_eq "sale: no parked answer waited out ack_wait_ms" "$dt_timeout" 0
expect_eq "sale: no dispatch drops" "$(tele dispatch_drops)" 0
"$SBX" down >/dev/null
echo "part 1 done at $((SECONDS - T0)) s"

# --------------------------------------- 2. kill -9 of the dataplane mid-sale
# 3,000 units on 8 connections and 2 lcores: each win waits for its group
# commit, so the sale lasts over a second and the kill lands in the middle.
KTOTAL=3000
make_config "$tmp/kill.ini" $KTOTAL 5000
for seed in 1 2; do
	rm -rf "$tmp/store" "$tmp/k1" "$tmp/k.json"
	up2 "$tmp/kill.ini"
	# (not inside $(...): a subshell reseeds RANDOM)
	RANDOM=$seed
	at=$((200 + RANDOM % 1000))
	# attempts == users: nobody retries, so every answer is a fresh one.
	# Mid-sale: the poller (the crowd starts once it had its first answer;
	# 10 s at most) reads the arena through the admin API and SIGKILLs the
	# dataplane itself, by the PID the sandbox recorded, as soon as a seeded
	# 200..1199 of the 3,000 units are sold: no sleep between what it saw
	# and the kill, so a fast sale cannot end in between.
	kill_poller_start "$at" 10 "$(sed -n 's/^pid=//p' "/run/$SK_SBX/env")"
	crowd --users 6000 --attempts 6000 --seed "$seed" --json "$tmp/k.json" --conns 8 \
		--orders "$tmp/k1" --timeout-ms 6000 --max-seconds 8 >"$tmp/k.out" 2>&1 &
	cpid=$!
	wait "$ppid" || true
	"$SBX" kill # already dead: waits until it is gone
	wait "$cpid" || true
	head -n 4 "$tmp/k.out"
	touch "$tmp/k1" # an empty file if the crowd had no winner to write
	wins=$(wc -l <"$tmp/k1")
	n202=$(json_get "$tmp/k.json" 'd["http"].get("202", 0)' 2>/dev/null || echo "no crowd summary")
	klc=$(order_lcores "$tmp/k1")
	"$SBX" down >/dev/null
	up2 "$tmp/kill.ini"
	restored=$(sed -n 's/.*event=recovery .* units=\([0-9]*\) holdings=.*/\1/p' "/run/$SK_SBX/log")
	echo "seed $seed: killed once $at were sold: $wins winners answered ($klc by lcore), $n202 of them 202; $restored units restored"
	expect_eq "kill $seed: no winner answered 202 (wait 5 s)" "$n202" 0
	check "kill $seed: winners answered before the kill on both lcores" \
		itpy orders lcores-both "$klc"
	check "kill $seed: the kill came mid-sale (some but not all units answered)" \
		test "$wins" -gt 0 -a "$wins" -lt $KTOTAL
	check "kill $seed: every 200 still in LMDB, both lcores' orders" orders_durable "$tmp/k1"
	check "kill $seed: restored units >= winners answered 200" test "${restored:-0}" -ge "$wins"
	check "kill $seed: reconcile after restart" reconcile
	left=$((KTOTAL - restored))
	crowd --users 10000 --attempts 10000 --seed $((seed + 100)) --conns 64 \
		--json "$tmp/k2.json" --orders "$tmp/k2" >"$tmp/k2.out" 2>&1 || true
	check_second_wave "$seed" "$left" "$KTOTAL"
	"$SBX" down >/dev/null
done
echo "part 2 done at $((SECONDS - T0)) s"

# --------------------------- 3. a queued winner's retry on the other lcore
# A retry of a winner whose order of this run is still queued is parked on
# the lcore that received it, which under the software dispatch (and RSS)
# is often not the lcore that sold the order. park_poll() (dataplane/
# sk_app.c) must judge it by the SELLER's settled mark (the lcore in the
# order id): judged by the receiving lcore's mark it either waited out
# ack_wait_ms although its order had committed (a: that mark below the
# order's sequence), or was released at once and answered 202 while the
# order was not durable yet (b: that mark above it). Both cases are
# steered here.
rm -rf "$tmp/store"
make_config "$tmp/steer.ini" 10 8000
up2 "$tmp/steer.ini"
for u in $(seq 9001 9100); do
	echo "$u $("$SK_TOKEN" --secret-file "$tmp/secret" --sub "$u" --item 2 --ttl 600)"
done >"$tmp/tokens"
# The driver runs in the namespace; it asks for the control plane to be
# stopped and started through files ($tmp/req.N -> $tmp/ack.N).
sbx_exec timeout 120 python3 "$IT_PY/steer_park.py" "$SERVER" "$tmp" >"$tmp/steer.out" 2>&1 &
dpid=$!
for n in 1 2 3 4; do
	for _ in $(seq 1 600); do
		[ -f "$tmp/req.$n" ] && break
		kill -0 "$dpid" 2>/dev/null || break
		sleep 0.05
	done
	[ -f "$tmp/req.$n" ] || break
	case $(cat "$tmp/req.$n") in
	stop) "$SBX" control stop ;;
	start) "$SBX" control start ;;
	esac
	touch "$tmp/ack.$n"
done
rc=0
wait "$dpid" || rc=$?
cat "$tmp/steer.out"
expect_eq "steer: the driver ran through (both lcores reached, probes won)" "$rc" 0
sres=$(tail -n 1 "$tmp/steer.out")
st() {
	itpy jsonq get - "$1" <<<"$sres" 2>/dev/null || echo "?"
}
for c in a b; do
	expect_eq "steer $c: the win on lcore 0 is answered 200 once the control plane is back" \
		"$(st "d['$c']['win'][0]")" 200
done
check "steer a: the retry on lcore 1 (its mark below the order's seq) is answered 200 within 2 s of the win, not after ack_wait_ms (8 s)" \
	test "$(st "d['a']['retry'][0] == 200 and d['a']['retry_s'] - d['a']['win_s'] < 2")" = True
check "steer b: the retry on lcore 1 (its mark above the order's seq) is not answered while the order is queued" \
	test "$(st "d['b']['retry_early']")" = False
check "steer b: ... and is answered 200 confirmed once the order commits" \
	test "$(st "d['b']['retry'][0]")" = 200
check "steer: LMDB drained" wait_drained 2
check "steer: reconcile" reconcile
"$SBX" down >/dev/null
echo "part 3 done at $((SECONDS - T0)) s"

finish
