#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# bench_flip.sh - how soon each appliance's dataplane has an item's
# sold-out flag after Redis flips it (issue 12, docs/cluster.md), above all
# at an appliance with no traffic, which learns it from the broadcast alone.
#
# Two appliances (members a and b, a sandbox each, both lcores on cpu 1
# with idle sleep) on one redis-server of the bench
# (tests/integration/lib/cluster.sh). Item 1 is a cluster sale of 1 unit.
# Then CYCLES times:
#   - a buyer at a buys the unit (a leases it back first when it has none:
#     the buyer is told "restocking" and asks again), a reports dry, Redis
#     flips the flag to sold out and publishes it; the bench waits until b
#     (no traffic) answers sold_out;
#   - `seckillctl stock add 1 1` on a: a unit is back in the pool, Redis
#     reopens the sale and publishes it; the bench waits until b no longer
#     says sold_out.
# Every broadcast a member receives is logged with its delay (event=broadcast
# delay_us=...): Redis's clock at the flip (TIME, carried in the message)
# to the member's store of the flag in the item table, which the dataplane
# reads on its next buy (CLOCK_REALTIME; same host, one clock). The bench
# prints p50, p99 and max per member and direction, and each member's
# seckill_cluster_broadcast_delay_seconds histogram from /metrics. Without
# --busy it then reads both members' Redis calls over 10 s with the item
# open and no traffic: what a quiet item costs Redis.
#
# With --busy, a crowd keeps buying another cluster item on both
# appliances meanwhile (the members lease and report while they listen).
#
#   bench/cluster/bench_flip.sh [--busy] [BUILD_DIR] [CYCLES]   (defaults build 100)
#
# Needs root (the sandboxes, like the integration tests), redis-server,
# curl, python3. Every wait is bounded; processes are stopped by PID.
BUSY=0
if [ "${1:-}" = --busy ]; then
	BUSY=1
	shift
fi
BUILD=$(cd "${1:-build}" && pwd)
CYCLES=${2:-100}
export SK_DATAPLANE=$BUILD/dataplane/seckill-dataplane
export SK_CROWD=$BUILD/tools/crowd/seckill-crowd
export SK_CONTROL=$BUILD/control/seckill-control
export SK_SECKILLCTL=$BUILD/seckillctl/seckillctl
IDLE_MS=2000 # if b leased the unit at preheat, it gives it back soon
# shellcheck source=../../tests/integration/lib.sh
. "$(dirname "$0")/../../tests/integration/lib.sh"
# shellcheck source=../../tests/integration/lib/cluster.sh
. "$IT_DIR/lib/cluster.sh"
require_env curl redis-server redis-cli python3

at_exit all_down
at_exit rm_tmp

# buy N USER - one buy of item 1 on appliance N; prints the HTTP status.
buy() {
	sbx "$1" exec curl -s -m 5 -o /dev/null -w '%{http_code}' -X POST \
		-H "X-User-Id: $2" "http://$(cat "$tmp/server-$1")/v1/seckill/1"
}

# buy_one CYCLE - buyers at a until one gets 200 (200 tries at most: the
# first are told "restocking" while a leases the unit; in the first cycle
# b may hold it until its idle give-back).
buy_one() {
	local try code
	for try in $(seq 1 200); do
		code=$(buy a $(($1 * 1000 + try)))
		[ "$code" = 200 ] && return 0
		[ "$code" = 503 ] || {
			echo "cycle $1: a buyer at a got $code"
			return 1
		}
	done
	echo "cycle $1: no unit at a after 200 tries"
	return 1
}

b_says() { [ "$(state b 1)" = "$1" ]; }
b_not_sold_out() { [ "$(state b 1)" != sold_out ]; }
b_open() { [[ "$(state b 1)" == @(on_sale|restocking) ]]; }

die() {
	local n
	echo "bench_flip: $*"
	for n in a b; do
		echo "--- $n: the cluster view of item 1, the member's log"
		cluster "$n" 1 . || true
		grep -aE 'event=(cluster|lease|giveback|sync|broadcast)' \
			"/run/$([ "$n" = a ] && echo "$NAME_A" || echo "$NAME_B")/control.log" | tail -20 || true
	done
	exit 1
}

redis_start || die "redis-server did not start"
appliance_up a || die "appliance a did not start"
appliance_up b || die "appliance b did not start"

start=$(($(date +%s) + 2))
for n in a b; do
	ctl "$n" activity add 1 --total 1 --cluster --name flip --start "$start"
	[ "$CTL_RC" = 0 ] || die "activity add on $n: $(cat "$tmp/ctl.out")"
	if [ "$BUSY" = 1 ]; then
		ctl "$n" activity add 2 --total 100000000 --cluster --name busy --start "$start"
		[ "$CTL_RC" = 0 ] || die "activity add 2 on $n: $(cat "$tmp/ctl.out")"
	fi
done
wait_for 30 "the sale opens at b" b_open || die "the sale did not open at b"

if [ "$BUSY" = 1 ]; then
	# As fast as 2 connections each go, for the whole bench (bounded by
	# count and by time; stopped by PID at the end).
	for n in a b; do
		base=1
		[ "$n" = a ] || base=5000001
		sbx "$n" exec timeout 700 "$SK_CROWD" --server "$(cat "$tmp/server-$n")" --item 2 \
			--users 3000000 --user-base "$base" --retriers 0 --conns 2 --timeout-ms 8000 \
			--max-seconds 600 --wait-start >"$tmp/busy-$n.out" 2>&1 &
		CROWD_PIDS+=($!)
	done
fi

t0=$SECONDS
for k in $(seq 1 "$CYCLES"); do
	buy_one "$k" || die "no sale in cycle $k"
	wait_for 10 "b says sold_out (cycle $k)" b_says sold_out || die "b missed the flip"
	ctl a stock add 1 1
	[ "$CTL_RC" = 0 ] || die "stock add: $(cat "$tmp/ctl.out")"
	wait_for 10 "b reopens (cycle $k)" b_not_sold_out || die "b missed the reopen"
done
echo "cycles: $CYCLES in $((SECONDS - t0)) s"
if [ "$BUSY" = 1 ]; then
	echo "meanwhile the crowds bought item 2: $(field a 2 sold) units at a, $(field b 2 sold) at b"
fi

if [ "$BUSY" = 0 ]; then
	# What an open item with no traffic costs: the members' Redis calls over
	# a window of WINDOW s (a measurement window, not a wait for anything).
	WINDOW=10
	ca=$(redis_calls a)
	cb=$(redis_calls b)
	sleep "$WINDOW"
	ca=$(($(redis_calls a) - ca))
	cb=$(($(redis_calls b) - cb))
	echo "no traffic, 1 open item: Redis calls per second, member a $(awk -v c="$ca" -v w="$WINDOW" \
		'BEGIN { printf "%.1f", c / w }'), member b $(awk -v c="$cb" -v w="$WINDOW" \
		'BEGIN { printf "%.1f", c / w }') (over ${WINDOW} s)"
fi

for n in a b; do
	name=$NAME_A
	[ "$n" = a ] || name=$NAME_B
	grep -a 'event=broadcast' "/run/$name/control.log" | grep -a 'item=1 ' >"$tmp/flips-$n"
	curl -sf "http://127.0.0.1:$([ "$n" = a ] && echo "$PORT_A" || echo "$PORT_B")/metrics" |
		grep -a '^seckill_cluster_broadcast_delay_seconds' >"$tmp/hist-$n" || true
done
python3 - "$tmp" <<'EOF'
import re, sys
tmp = sys.argv[1]
def pct(v, q):
    return v[min(len(v) - 1, max(0, int(len(v) * q + 0.5) - 1))]
print("| member | flip | n | p50 ms | p99 ms | max ms |")
print("|---|---|---:|---:|---:|---:|")
for n, role in (("b", "idle"), ("a", "selling")):
    lines = open(f"{tmp}/flips-{n}").read().splitlines()
    for flag, what in (("true", "sold out"), ("false", "reopen")):
        d = sorted(int(m.group(1)) / 1000 for l in lines
                   if f"sold_out={flag} " in l for m in [re.search(r"delay_us=(\d+)", l)] if m)
        if not d:
            print(f"| {n} ({role}) | {what} | 0 | - | - | - |")
            continue
        print(f"| {n} ({role}) | {what} | {len(d)} | {pct(d, .5):.2f} | {pct(d, .99):.2f} | {d[-1]:.2f} |")
for n in ("b", "a"):
    print(f"\n{n}: seckill_cluster_broadcast_delay_seconds (cumulative, every item)")
    for l in open(f"{tmp}/hist-{n}").read().splitlines():
        print("  " + l)
EOF
