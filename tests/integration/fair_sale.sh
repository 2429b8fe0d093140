#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# fair_sale.sh - the fair sale's checks together (docs/api.md, the buy
# route's order of checks): a JWT sale of one item created with
# `seckillctl activity add --gate --reserved-only`, on the real dataplane
# (two lcores) and control plane, ack = durable:
#
#  1. seckill-crowd --prepare writes the ids of the 80 % of its 3,000 users
#     who reserved (a fixed draw from --seed); seckillctl activity reserve
#     loads them;
#  2. the sale: 3,000 users, 30 % of them without the gate claim
#     (seckill-crowd --gate 70: user index mod 100 >= 70) and 20 % not
#     reserved, 800 units: exactly 800 winners, each one both reserved
#     and holding the claim (checked from the winners' ids against the
#     claim's rule and the reserved ids file); the crowd's own gate and
#     reserved_only checks pass (no claim holder refused 403 gate, no
#     reserved user refused 403 not_reserved); every 403 answer is one of
#     the two, counted apart in the dataplane's /metrics;
#  3. the books: LMDB holds the 800 orders, reconcile is clean.
. "$(dirname "$0")/lib.sh"
require_env curl SK_CROWD SK_CONTROL SK_SECKILLCTL
[ "$(nproc)" -ge 2 ] || skip "needs 2 cpus"
# shellcheck source=lib/durable.sh
. "$IT_DIR/lib/durable.sh"

tmp=$(mktemp -d)
at_exit rm_tmp
export SK_SBX_ADMIN_PORT=$((17000 + $$ % 1000))
# shellcheck disable=SC2034 # read by lib/durable.sh
ADMIN=http://127.0.0.1:$SK_SBX_ADMIN_PORT
USERS=3000
UNITS=800
secret_file "$tmp/secret"
{
	cat "$REPO/config/sandbox.ini"
	cat <<-EOF

		[seckill]
		auth = on
		secret_file = $tmp/secret
		token_skew_s = 5
		store = $tmp/store
		ack = durable
		ack_wait_ms = 5000
		ip_rate = 0
		reserve_mb = 8
	EOF
} >"$tmp/fair.ini"
sbx_up --lcores 2 --config "$tmp/fair.ini"

# ctl ARGS... - seckillctl against this sandbox; output in $tmp/ctl.out,
# exit code in CTL_RC (never fails the script).
ctl() {
	CTL_RC=0
	"$SBX" ctl "$@" >"$tmp/ctl.out" 2>&1 || CTL_RC=$?
	sed 's/^/    | /' "$tmp/ctl.out"
}
# act FIELD - a field of `seckillctl --json activity show 1`.
act() {
	"$SBX" ctl --json activity show 1 | itpy jsonq field - "$1"
}
# open - the dataplane sells item 1 (its activity preheated).
open() {
	[[ $(sbx_exec curl -s -m 5 "$URL/v1/items/1") == *'"state":"open"'* ]]
}
# crowd NAME [options] - the crowd, 30 % without the claim, 80 % reserved
# (seed 11), from inside the namespace on core 0; its reserved ids in
# $tmp/NAME.ids. Bounded: 120 s.
crowd() {
	local name=$1
	shift
	sbx_exec timeout 150 taskset -c 0 "$SK_CROWD" --server "$SERVER" --item 1 \
		--users "$USERS" --attempts $((USERS * 6 / 5)) --retriers 0.1 --seed 11 \
		--conns 64 --secret-file "$tmp/secret" --gate 70 --reserved 80 \
		--reserved-file "$tmp/$name.ids" --timeout-ms 8000 --max-seconds 120 \
		"$@" >"$tmp/$name.out" 2>&1
}

# ------------------------------------------------ 1. the sale and its set
ctl activity add 1 --total "$UNITS" --limit 1 --gate --reserved-only --name "fair sale"
expect_eq "activity add --gate --reserved-only exits 0" "$CTL_RC" 0
expect_eq "activity show: gate" "$(act activity.gate)" true
expect_eq "activity show: reserved_only" "$(act activity.reserved_only)" true
check "item 1 open in the dataplane" wait_for 10 "item 1 open" open
rc=0
crowd prep --prepare || rc=$?
expect_eq "crowd --prepare exits 0" "$rc" 0
n=$(wc -l <"$tmp/prep.ids")
between() { [ "$1" -gt "$2" ] && [ "$1" -lt "$3" ]; }
check "about 80 % of $USERS users reserved ($n)" between "$n" 2200 2600
ctl activity reserve 1 "$tmp/prep.ids"
expect_eq "activity reserve exits 0" "$CTL_RC" 0
expect_eq "activity show: $n reserved" "$(act reserved)" "$n"

# ------------------------------------------------ 2. the sale
rc=0
crowd sale --expect-units "$UNITS" --json "$tmp/sale.json" --orders "$tmp/sale.orders" || rc=$?
cat "$tmp/sale.out"
expect_eq "crowd: every check passed, gate and reserved_only included (exit status)" "$rc" 0
check "crowd: the same reserved users as prepared" cmp -s "$tmp/prep.ids" "$tmp/sale.ids"
expect_eq "crowd: exactly $UNITS winners" "$(json_get "$tmp/sale.json" "d['winners']")" "$UNITS"
expect_eq "crowd: gate check" "$(json_get "$tmp/sale.json" "d['checks']['gate']")" True
expect_eq "crowd: reserved_only check" \
	"$(json_get "$tmp/sale.json" "d['checks']['reserved_only']")" True
# The winners' ids against both rules, from the ids themselves.
# shellcheck disable=SC2016 # an awk program
check "winners: $UNITS distinct users, each with the claim and reserved" \
	awk 'NR == FNR { r[$1] = 1; next }
		($1 - 1) % 100 >= 70 || !($1 in r) { bad++ } !seen[$1]++ { n++ }
		END { exit !(n == '"$UNITS"' && FNR == '"$UNITS"' && bad == 0) }' \
	"$tmp/sale.ids" "$tmp/sale.orders"
gate=$(json_get "$tmp/sale.json" "d['status'].get('gate', 0)")
nr=$(json_get "$tmp/sale.json" "d['status'].get('not_reserved', 0)")
both() { [ "${1:-0}" -gt 0 ] && [ "${2:-0}" -gt 0 ]; }
check "crowd: both refusals seen (gate $gate, not_reserved $nr)" both "$gate" "$nr"
expect_eq "crowd: every 403 is a gate or a not_reserved refusal" \
	"$(json_get "$tmp/sale.json" "d['http'].get('403', 0)")" $((gate + nr))
check "metrics: seckill_requests_total{outcome=\"gate\"} counts them" \
	wait_metric 'seckill_requests_total{outcome="gate"}' -eq "$gate" 10
check "metrics: seckill_requests_total{outcome=\"not_reserved\"} counts them" \
	wait_metric 'seckill_requests_total{outcome="not_reserved"}' -eq "$nr" 10

# ------------------------------------------------ 3. the books
check "LMDB drained" wait_drained
expect_eq "LMDB live == the winners" "$(act ledger.live)" "$UNITS"
ctl reconcile
expect_eq "reconcile exits 0" "$CTL_RC" 0
finish
