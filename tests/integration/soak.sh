#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# soak.sh - a month of nightly sales in one run of the dataplane: thirty
# activities back to back on a small map and a status table of 1,024 orders
# per lcore, with retention on. The real dataplane and control plane in the
# sandbox: auth = off (X-User-Id), ack = durable, one lcore.
#
# Each night N (item N, a fresh crowd of users):
#  1. activity add N --total UNITS --pay-timeout 2; a crowd of USERS
#     distinct users: exactly UNITS answered 200 confirmed, the rest 410,
#     every 200 in LMDB;
#  2. the activity is closed; half the winners pay (seckillctl order pay),
#     the other half are cancelled by their payment deadline; reconcile;
#  3. the night before last is archived (seckillctl activity archive: over
#     for 5 s by now, settled), its purge ends, one of its paid orders is
#     still found (from the archive, "archived":true, paid) and an order of
#     the first night too; LMDB holds no more order lines than two nights';
# then the last two nights are archived, LMDB holds no order line at all,
# reconcile passes, and the dataplane is the process it was at the start:
# thirty sales of 60 orders went through a status table of 1,024 slots
# without a restart.
#
. "$(dirname "$0")/lib.sh"
require_env curl SK_CROWD SK_CONTROL SK_SECKILLCTL
# shellcheck source=lib/durable.sh
. "$IT_DIR/lib/durable.sh"

NIGHTS=30
UNITS=60
USERS=80

tmp=$(mktemp -d)
at_exit rm_tmp
export SK_SBX_ADMIN_PORT=$((19000 + $$ % 1000))
# shellcheck disable=SC2034 # read by lib/durable.sh's orders_in_store
ADMIN=http://127.0.0.1:$SK_SBX_ADMIN_PORT

cfg=$tmp/soak.ini
{
	cat "$REPO/config/sandbox.ini"
	cat <<-EOF

		[seckill]
		auth = off
		ack = durable
		ack_wait_ms = 5000
		status_bits = 10

		[store]
		path = $tmp/store
		map_mb = 64

		# Retention on: the policy archives what is over for a day; the
		# nights here are archived by the operator's command, and the
		# event log is trimmed to its tail (no Kafka).
		[retention]
		keep_days = 1
	EOF
} >"$cfg"

# act FIELD ITEM - a field of `seckillctl --json activity show ITEM`.
act() {
	"$SBX" ctl --json activity show "$2" | itpy jsonq field - "$1"
}

# ctl ARGS... - seckillctl against this sandbox; exit code in CTL_RC.
ctl() {
	CTL_RC=0
	"$SBX" ctl "$@" >"$tmp/ctl.out" 2>&1 || CTL_RC=$?
}

# crowd ITEM USER_BASE NAME - USERS distinct users buy ITEM once each;
# summary in $tmp/NAME.json, winners' "user order" lines in $tmp/NAME.orders.
crowd() {
	sbx_exec taskset -c 0 "$SK_CROWD" --server "$SERVER" --item "$1" \
		--users "$USERS" --user-base "$2" --retriers 0 --conns 16 \
		--timeout-ms 8000 --max-seconds 30 --json "$tmp/$3.json" \
		--orders "$tmp/$3.orders" --expect-units "$UNITS" >"$tmp/$3.out" 2>&1
}

# pay_half NAME - pay the first half of the winners of NAME; 0 if each
# payment exits 0.
pay_half() {
	local id
	while read -r _ id; do
		"$SBX" ctl order pay "$id" >/dev/null 2>&1 || return 1
	done < <(head -n $((UNITS / 2)) "$tmp/$1.orders")
}

# settled ITEM - every order of ITEM is paid or cancelled: the live units
# in LMDB are the paid ones.
settled() {
	[ "$(act ledger.live "$1")" = "$(act ledger.paid "$1")" ]
}

# archived ITEM - archive ITEM (0 once the archive is done, purge included).
archived() {
	ctl activity archive "$1"
	[ "$(act archive.state "$1")" = "done" ]
}

# found_archived ORDER - seckillctl order show answers ORDER from the
# archive, paid.
found_archived() {
	"$SBX" ctl --json order show "$1" >"$tmp/order.json" || return 1
	[ "$(json_get "$tmp/order.json" '(d.get("archived"), d.get("status"))')" = "(True, 'paid')" ]
}

# archive_night N - archive night N and check what is left.
archive_night() {
	check "night $1: archived once over and settled" wait_for 30 "archive $1" archived "$1"
	check "night $1: a paid order is found in the archive" \
		found_archived "$(head -n 1 "$tmp/n$1.orders" | cut -d' ' -f2)"
}

sbx_up --config "$cfg"
dp_pid=$("$SBX" status | sed -n 's/^up: pid=\([0-9]*\).*/\1/p')

for n in $(seq 1 "$NIGHTS"); do
	ctl activity add "$n" --total "$UNITS" --name "night $n" --pay-timeout 2
	expect_eq "night $n: activity add exits 0" "$CTL_RC" 0
	rc=0
	crowd "$n" $((n * 1000)) "n$n" || rc=$?
	[ "$rc" = 0 ] || cat "$tmp/n$n.out"
	expect_eq "night $n: exactly $UNITS answered 200 confirmed, the rest 410" \
		"$(json_get "$tmp/n$n.json" 'sorted(d["http"].items())'):$(json_get "$tmp/n$n.json" 'd["status"].get("confirmed")')" \
		"[('200', $UNITS), ('410', $((USERS - UNITS)))]:$UNITS"
	expect_eq "night $n: every 200 is in LMDB" "$(orders_in_store "$tmp/n$n.orders")" "$UNITS"
	ctl activity close "$n"
	expect_eq "night $n: activity close exits 0" "$CTL_RC" 0
	check "night $n: half the winners pay" pay_half "n$n"
	check "night $n: the other half is cancelled by its deadline" \
		wait_for 20 "night $n settled" settled "$n"
	expect_eq "night $n: paid units" "$(act ledger.paid "$n")" $((UNITS / 2))
	check "night $n: reconcile" reconcile
	if [ "$n" -gt 2 ]; then
		archive_night $((n - 2))
		lines=$(metric seckill_store_order_lines)
		check "night $n: LMDB holds at most two nights' order lines ($lines)" \
			test "${lines:-999999}" -le $((2 * UNITS))
		check "night $n: night 1's order is still found" \
			found_archived "$(head -n 1 "$tmp/n1.orders" | cut -d' ' -f2)"
	fi
done

archive_night $((NIGHTS - 1))
archive_night "$NIGHTS"
expect_eq "the end: LMDB holds no order line" "$(metric seckill_store_order_lines)" 0
check "the end: reconcile" reconcile
expect_eq "the end: the dataplane of the first night sold every night" \
	"$("$SBX" status | sed -n 's/^up: pid=\([0-9]*\).*/\1/p')" "$dp_pid"
echo "used bytes of the store: $(metric seckill_store_used_bytes), map $(metric seckill_store_map_bytes)"

finish
