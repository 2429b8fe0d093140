# SPDX-License-Identifier: BSD-3-Clause
# shellcheck shell=bash
# durable.sh - the fixture of a control plane with a durable store (a
# sandbox with a [seckill] section): its config, its items, orders, metrics,
# reconcile, drain, kill rounds and logs. Source it after lib.sh:
#   # shellcheck source=lib/durable.sh
#   . "$IT_DIR/lib/durable.sh"
# ADMIN must hold the admin API's base URL (http://127.0.0.1:$SK_SBX_ADMIN_PORT)
# and tmp the test's scratch folder. A test may define its own function of
# the same name after sourcing this file.
# shellcheck disable=SC2154 # tmp: the caller's

# durable_config - print the head of a sandbox config for the tests of the
# control plane: config/sandbox.ini, auth off, the store in $tmp/store,
# ack = durable (3 s). The test appends its [item.N] sections.
durable_config() {
	cat "$REPO/config/sandbox.ini"
	cat <<-EOF

		[seckill]
		auth = off
		store = ${tmp:?}/store
		ack = durable
		ack_wait_ms = 3000
	EOF
}

# item_field FIELD [ITEM] - a field of the control plane's item (default 1),
# dotted for nested ones: "ledger.live", "sold" ...
item_field() {
	admin_curl -sf "${ADMIN:?}/v1/items/${2:-1}" | itpy jsonq field - "$1"
}

# orders_in_store FILE - every "user order" line of FILE is confirmed or paid
# in LMDB with that user (admin API GET /v1/orders/{id}); prints the number
# checked, exit 1 otherwise.
orders_in_store() {
	itpy orders in-store "$1" "${ADMIN:?}"
}

# same_orders A B - every user of orders file A found in B has the same order
# there.
same_orders() {
	itpy orders same "$1" "$2"
}

# metric NAME - a value of the control plane's /metrics (NAME with its
# labels, as printed); empty if absent. The metrics go to a file first: a
# reader that stops early (awk exit) would SIGPIPE seckillctl under pipefail.
metric() {
	"$SBX" ctl metrics >"$tmp/metrics" 2>&1 || true
	awk -v n="$1" '$1 == n { print $2; exit }' "$tmp/metrics"
}

# wait_metric NAME OP VALUE SECONDS - wait until the control plane's metric
# NAME compares OP (-eq, -gt, -ge ...) to VALUE; at most SECONDS.
wait_metric() {
	local v end=$((SECONDS + $4))
	while :; do
		v=$(metric "$1")
		[ -n "$v" ] && test "$v" "$2" "$3" && return 0
		[ "$SECONDS" -lt "$end" ] || return 1
		sleep 0.2
	done
}

# reconcile - seckillctl reconcile passes (its report printed if not).
reconcile() {
	"$SBX" ctl reconcile >"$tmp/reconcile" 2>&1 || {
		cat "$tmp/reconcile"
		return 1
	}
}

# wait_drained [ITEM] - wait (10 s at most) until LMDB's live units of ITEM
# (default 1) equal the arena's sold - returned.
wait_drained() {
	for _ in $(seq 1 100); do
		[ "$(item_field ledger.live "${1:-1}")" = "$(($(item_field sold "${1:-1}") - $(item_field returned "${1:-1}")))" ] && return 0
		sleep 0.1
	done
	return 1
}

# kill_poller_start AT SECONDS PID... - start tests/lib/python/kill_poller.py
# in the background (its PID in ppid): it SIGKILLs the PIDs, in that order,
# once the admin API shows AT units of item 1 sold (SECONDS at most).
# Returns once the poller had its first answer (10 s at most), so that the
# crowd started next is watched from its first unit. Uses $tmp.
kill_poller_start() {
	local at=$1 secs=$2
	shift 2
	rm -f "$tmp/poller.ready"
	itpy kill_poller "${ADMIN:?}" "$at" "$secs" --ready "$tmp/poller.ready" "$@" &
	ppid=$!
	for _ in $(seq 1 100); do
		[ -f "$tmp/poller.ready" ] && return 0
		kill -0 "$ppid" 2>/dev/null || return 0
		sleep 0.1
	done
}

# order_lcores FILE - "lcore:count ..." of the order ids in the "user order"
# lines of FILE (ids are epoch30 | member5 | lcore6 | seq23, stock/sk_order.h),
# lcores in order.
order_lcores() {
	itpy orders lcores "$1"
}

# check_second_wave SEED LEFT TOTAL - after a kill round and a second crowd
# wave (summary $tmp/k2.json, orders $tmp/k2; first wave's orders $tmp/k1):
# one order per user, exactly LEFT units sold, first-wave winners kept their
# orders, LMDB holds TOTAL live units of item 1, reconcile passes.
check_second_wave() {
	local seed=$1 left=$2 total=$3
	expect_eq "kill $seed: second wave: one order per user, orders unique, no error" \
		"$(json_get "$tmp/k2.json" '[d["checks"][k] for k in ("one_order_per_user", "orders_unique", "no_errors")]')" \
		"[True, True, True]"
	expect_eq "kill $seed: second wave buys exactly the units left" \
		"$(json_get "$tmp/k2.json" 'd["fresh_wins"]')" "$left"
	check "kill $seed: a first-wave winner seen again got the same order" same_orders "$tmp/k1" "$tmp/k2"
	check "kill $seed: LMDB drained" wait_drained
	expect_eq "kill $seed: LMDB live units == total" "$(item_field ledger.live)" "$total"
	check "kill $seed: reconcile after the second wave" reconcile
}

# logs_check WRITER_LOG - every line the sandbox's dataplane and control
# plane wrote (their logs in /run/$SK_SBX) and the writer's WRITER_LOG
# (if given) is a logfmt log line (docs/logs.md: ts=, level=, prog=,
# event=) of that daemon, and each said ready; a summary is printed.
logs_check() {
	local d=/run/$SK_SBX
	check "logs: the dataplane's lines are logfmt, its ready line among them" \
		itpy logfmt_check --prog seckill-dataplane "$d/log"
	check "logs: the dataplane said ready" grep -q "level=notice prog=seckill-dataplane event=ready " "$d/log"
	check "logs: the control plane's lines are logfmt" \
		itpy logfmt_check --prog seckill-control "$d/control.log"
	check "logs: the control plane said ready" grep -q "level=notice prog=seckill-control event=ready " "$d/control.log"
	[ -n "${1:-}" ] || return 0
	check "logs: the writer's lines are logfmt" itpy logfmt_check --prog seckill-mysql-writer "$1"
	check "logs: the writer said ready" grep -q "level=notice prog=seckill-mysql-writer event=ready " "$1"
}
