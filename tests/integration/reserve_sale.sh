#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# reserve_sale.sh - a reserved-only sale (docs/control.md, "Reservations"), on the
# real dataplane and control plane in the sandbox: [seckill] store,
# ack = durable, auth = off (X-User-Id), no [item.N].
#
#  1. activity add 1 --reserved-only; seckill-crowd --prepare writes the ids
#     of 80% of its 3000 users; seckillctl activity reserve loads them (in
#     batches): added == reserved == the file's lines; again from stdin:
#     0 added; a bad line exits 2 and adds nothing; one more user from stdin;
#  2. one buyer outside the set: 403 {"status":"not_reserved"}; the added
#     user buys (200);
#  3. the control plane killed and restarted: activity show still counts
#     the set; then both processes killed and restarted (a new, empty
#     memzone): the set comes back from LMDB, same count;
#  4. the sale: the crowd (same seed: the same 80%) buys 300 units: exactly
#     299 more winners, every one reserved, no reserved user refused
#     not_reserved, not_reserved answers counted apart; the dataplane's
#     not_reserved outcome in /metrics; LMDB holds every winner; reconcile.
. "$(dirname "$0")/lib.sh"
require_env curl SK_CROWD SK_CONTROL SK_SECKILLCTL
# shellcheck source=lib/durable.sh
. "$IT_DIR/lib/durable.sh"

tmp=$(mktemp -d)
at_exit rm_tmp
export SK_SBX_ADMIN_PORT=$((17000 + $$ % 1000))
# shellcheck disable=SC2034 # read by lib/durable.sh
ADMIN=http://127.0.0.1:$SK_SBX_ADMIN_PORT
USERS=3000
UNITS=300
cfg=$tmp/reserve.ini
{
	cat "$REPO/config/sandbox.ini"
	cat <<-EOF

		[seckill]
		auth = off
		store = $tmp/store
		ack = durable
		ack_wait_ms = 5000
		reserve_mb = 8
	EOF
} >"$cfg"

up() {
	sbx_up --config "$cfg"
}

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

# buy USER - one buy of item 1 from inside the namespace; CODE and BODY.
buy() {
	BODY=$(sbx_exec curl -s -m 10 -o - -w '\n%{http_code}' -X POST \
		-H "X-User-Id: $1" "http://$SERVER/v1/seckill/1") || true
	CODE=${BODY##*$'\n'}
	BODY=${BODY%$'\n'*}
}

# crowd NAME [options] - the crowd of USERS users, 80% reserved (seed 7),
# from inside the namespace; its reserved ids in $tmp/NAME.ids. Bounded: 60 s.
crowd() {
	local name=$1
	shift
	sbx_exec taskset -c 0 "$SK_CROWD" --server "$SERVER" --item 1 --users "$USERS" \
		--seed 7 --retriers 0 --conns 16 --timeout-ms 8000 --max-seconds 60 \
		--reserved 80 --reserved-file "$tmp/$name.ids" "$@" >"$tmp/$name.out" 2>&1
}

up

# ------------------------------------------------ 1. the set loaded
ctl activity add 1 --total "$UNITS" --limit 1 --reserved-only
expect_eq "activity add --reserved-only exits 0" "$CTL_RC" 0
rc=0
crowd prep --prepare || rc=$?
expect_eq "crowd --prepare exits 0" "$rc" 0
n=$(wc -l <"$tmp/prep.ids")
between() { [ "$1" -gt "$2" ] && [ "$1" -lt "$3" ]; }
check "about 80% of $USERS users reserved ($n)" between "$n" 2200 2600
ctl activity reserve 1 "$tmp/prep.ids"
expect_eq "activity reserve exits 0" "$CTL_RC" 0
check "activity reserve: $n added, $n reserved" grep -q "^activity 1: $n added, $n reserved$" "$tmp/ctl.out"
CTL_RC=0
"$SBX" ctl activity reserve 1 - <"$tmp/prep.ids" >"$tmp/ctl.out" 2>&1 || CTL_RC=$?
expect_eq "again from stdin: exits 0" "$CTL_RC" 0
check "again from stdin: 0 added, $n reserved" grep -q "^activity 1: 0 added, $n reserved$" "$tmp/ctl.out"
printf '900001\n900003\nnot-a-user\n' >"$tmp/bad.ids"
ctl activity reserve 1 "$tmp/bad.ids"
expect_eq "a bad line exits 2" "$CTL_RC" 2
check "a bad line is named" grep -q "bad.ids:3: not a user id" "$tmp/ctl.out"
CTL_RC=0
echo 900001 | "$SBX" ctl activity reserve 1 - >"$tmp/ctl.out" 2>&1 || CTL_RC=$?
expect_eq "one more from stdin: 1 added" "$CTL_RC:$(cat "$tmp/ctl.out")" "0:activity 1: 1 added, $((n + 1)) reserved"
expect_eq "activity show: reserved" "$(act reserved)" $((n + 1))

# ------------------------------------------------ 2. one buyer in, one out
buy 900003
expect_eq "a user outside the set: 403 not_reserved" "$CODE $BODY" '403 {"status":"not_reserved"}'
buy 900001
expect_eq "the added user buys: 200" "$CODE" 200

# ------------------------------------------------ 3. restarts
"$SBX" control kill
for try in 1 2 3; do
	"$SBX" control start && break
	echo "control plane restart: try $try failed"
done
expect_eq "control plane restarted: the set is counted" "$(act reserved)" $((n + 1))
buy 900003
expect_eq "control plane restarted: still 403 not_reserved" "$CODE" 403
"$SBX" control kill
"$SBX" kill
"$SBX" down >/dev/null
up
expect_eq "both restarted: the set came back from LMDB" "$(act reserved)" $((n + 1))
check "both restarted: the control plane loaded it" \
	grep -q "event=reserve item=1 users=$((n + 1)) msg=\"set loaded\"" "/run/$SK_SBX/control.log"
buy 900001
expect_eq "both restarted: the earlier buyer gets its order back" "$CODE" 200
buy 900003
expect_eq "both restarted: still 403 not_reserved" "$CODE $BODY" '403 {"status":"not_reserved"}'

# ------------------------------------------------ 4. the sale
rc=0
crowd sale --expect-units $((UNITS - 1)) --json "$tmp/sale.json" || rc=$?
cat "$tmp/sale.out"
expect_eq "sale: crowd checks pass (winners == units, all reserved)" "$rc" 0
check "sale: the same 80% as prepared" cmp -s "$tmp/prep.ids" "$tmp/sale.ids"
expect_eq "sale: reserved_only check passed" \
	"$(json_get "$tmp/sale.json" 'd["checks"]["reserved_only"]')" True
nr=$(json_get "$tmp/sale.json" 'd["status"].get("not_reserved", 0)')
check "sale: not_reserved answers counted apart ($nr)" [ "${nr:-0}" -gt 0 ]
check "sale: LMDB drained" wait_drained
expect_eq "sale: LMDB live == all winners" "$(act ledger.live)" "$UNITS"
check "sale: /metrics counts the not_reserved outcome" \
	wait_metric 'seckill_requests_total{outcome="not_reserved"}' -ge "$nr" 10
ctl reconcile
expect_eq "sale: reconcile exits 0" "$CTL_RC" 0
finish
