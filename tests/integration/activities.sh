#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# activities.sh - sales created, restocked and closed at run time through the
# control plane (seckillctl activity / stock), with the real dataplane and
# control plane in the sandbox: [seckill] store, ack = durable, auth = off
# (X-User-Id), and NO [item.N] in the config - every item comes from LMDB.
#
#  1. before any activity, a buy of item 1 is 404;
#  2. activity add 1 --total 50: created; the same command again (no
#     --start: the stored start is kept) is "unchanged", and so is a rerun
#     with an absolute --start (item 4); another --total
#     exits 5; 80 users -> exactly 50 x 200 confirmed, 30 x 410; reconcile;
#     LMDB live == 50; metrics count the creations;
#  3. stock add 1 20 --request-id 5 reopens the sold-out item; the same
#     request again is "unchanged" (remaining not doubled), with other units
#     exit 5; an earlier winner gets its own order back (200 duplicate, no
#     second unit); 60 new users -> exactly 20 winners; after the sell-out an
#     earlier winner still gets its own order back (never "sold out");
#  4. activity add 2 --start +4s: 425 with starts_in_ms, 200 after the
#     start; close: 403 for everyone, closing again "unchanged", stock add
#     exits 5, nothing changed; item 6 with --end +3s: 200, then 403 ended;
#  5. kill -9 of both processes, restart with the same store and still no
#     [item.N]: item 1 comes back from LMDB (remaining 0, total + added 70),
#     earlier winners cannot buy, stock add 1 5 -> exactly 5 new winners and
#     earlier winners get their same order; the closed item 2 and the ended
#     item 6 are not loaded (404, also after a few preheat passes); an
#     activity's --pay-timeout 5 cancels its unpaid orders and the units
#     and buyers come back;
#  6. bad input exits 2 and changes nothing (--total-from without Redis
#     exits 5); unknown ids exit 4; reconcile
#     at the end; the activity metrics are counters.
#
. "$(dirname "$0")/lib.sh"
require_env curl SK_CROWD SK_CONTROL SK_SECKILLCTL
# shellcheck source=lib/durable.sh
. "$IT_DIR/lib/durable.sh"

tmp=$(mktemp -d)
at_exit rm_tmp
export SK_SBX_ADMIN_PORT=$((18000 + $$ % 1000))
# shellcheck disable=SC2034 # read by lib.sh's orders_in_store
ADMIN=http://127.0.0.1:$SK_SBX_ADMIN_PORT
T0=$SECONDS

# The sandbox's config plus the control plane's store: no [item.N] at all.
cfg=$tmp/activities.ini
{
	cat "$REPO/config/sandbox.ini"
	cat <<-EOF

		[seckill]
		auth = off
		store = $tmp/store
		ack = durable
		ack_wait_ms = 5000
	EOF
} >"$cfg"

no_config_items() {
	! grep -q '^\[item\.' "$cfg"
}
if ! no_config_items; then
	bad "the config must hold no [item.N]"
	finish
	exit 1
fi

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

# ctl_unchanged - the last ctl exited 0 and printed "unchanged".
ctl_unchanged() {
	[ "$CTL_RC" = 0 ] && grep -q "unchanged" "$tmp/ctl.out"
}

# act FIELD [ITEM] - a field of `seckillctl --json activity show ITEM`
# (dotted for nested ones: "ledger.live", "activity.closed").
act() {
	"$SBX" ctl --json activity show "${2:-1}" | itpy jsonq field - "$1"
}

# buy ITEM USER - one buy from inside the namespace; sets CODE and BODY.
buy() {
	BODY=$(sbx_exec curl -s -m 10 -o - -w '\n%{http_code}' -X POST \
		-H "X-User-Id: $2" "http://$SERVER/v1/seckill/$1") || true
	CODE=${BODY##*$'\n'}
	BODY=${BODY%$'\n'*}
}

# crowd ITEM USER_BASE USERS NAME [crowd options] - USERS distinct users
# (no retries) buy ITEM once each; summary in $tmp/NAME.json, winners'
# "user order" lines in $tmp/NAME.orders. Bounded: 30 s.
crowd() {
	local item=$1 base=$2 users=$3 name=$4
	shift 4
	sbx_exec taskset -c 0 "$SK_CROWD" --server "$SERVER" --item "$item" \
		--users "$users" --user-base "$base" --retriers 0 --conns 16 \
		--timeout-ms 8000 --max-seconds 30 --json "$tmp/$name.json" \
		--orders "$tmp/$name.orders" "$@" >"$tmp/$name.out" 2>&1
}

# is_counter NAME - the metrics declare NAME a counter.
is_counter() {
	"$SBX" ctl metrics >"$tmp/metrics" || return 1
	grep -qx "# TYPE $1 counter" "$tmp/metrics"
}

# disjoint_users A B - no user of orders file A ("user order" lines) is in B.
disjoint_users() {
	itpy orders disjoint "$1" "$2"
}

up

# ------------------------------------------------ 1. nothing on sale yet
buy 1 1
expect_eq "no activity: buy of item 1 is 404" "$CODE $BODY" '404 {"status":"not_found"}'
ctl activity list
expect_eq "no activity: activity list exits 0" "$CTL_RC" 0
ctl activity show 1
expect_eq "no activity: activity show 1 exits 4" "$CTL_RC" 4

# ------------------------------------------------ 2. create, sell out
ctl activity add 1 --total 50 --name "flash one"
expect_eq "add 1: exit 0" "$CTL_RC" 0
check "add 1: prints 'created'" grep -q "^activity 1: created" "$tmp/ctl.out"
expect_eq "add 1: on sale with 50 units" "$(act remaining):$(act in_arena)" "50:true"
b=$(sbx_exec curl -s -m 5 "http://$SERVER/v1/items/1")
expect_match "add 1: the dataplane shows item 1 open" "$b" '"state":"open","remaining":50'
# The very same command line again: without --start the stored start is
# kept, so a retried add is the same definition.
ctl activity add 1 --total 50 --name "flash one"
check "add 1 again, same command: exit 0 'unchanged' (got exit $CTL_RC)" ctl_unchanged
ctl activity add 1 --total 60 --name "flash one"
expect_eq "add 1 with another --total: exit 5" "$CTL_RC" 5
expect_eq "add 1: still 50 units, added 0 after the refused adds" \
	"$(act activity.total):$(act total):$(act added)" "50:50:0"

# Idempotence where the definition can be repeated: an absolute --start.
abs=$(date +%s)
ctl activity add 4 --total 3 --price 1999 --name "abs start" --start "$abs"
expect_eq "add 4 (absolute --start): exit 0 created" \
	"$CTL_RC:$(grep -c '^activity 4: created' "$tmp/ctl.out")" "0:1"
ctl activity add 4 --total 3 --price 1999 --name "abs start" --start "$abs"
expect_eq "add 4 again, same definition: exit 0 'unchanged'" \
	"$CTL_RC:$(grep -c 'unchanged' "$tmp/ctl.out")" "0:1"
ctl activity add 4 --total 3 --price 2000 --name "abs start" --start "$abs"
expect_eq "add 4 with another --price: exit 5" "$CTL_RC" 5
expect_eq "add 4: the definition kept" "$(act activity.price 4):$(act total 4)" "1999:3"

rc=0
crowd 1 1 80 w1 --expect-units 50 || rc=$?
cat "$tmp/w1.out"
expect_eq "wave 1: crowd checks pass (80 users, 50 units)" "$rc" 0
expect_eq "wave 1: exactly 50 answered 200 confirmed, the rest 410" \
	"$(json_get "$tmp/w1.json" 'sorted(d["http"].items())'):$(json_get "$tmp/w1.json" 'd["status"].get("confirmed")')" \
	"[('200', 50), ('410', 30)]:50"
expect_eq "wave 1: every 200 is in LMDB" "$(orders_in_store "$tmp/w1.orders")" 50
ctl reconcile
expect_eq "wave 1: seckillctl reconcile exits 0" "$CTL_RC" 0
expect_eq "wave 1: activity show 1: ledger live 50, remaining 0, sold out" \
	"$(act ledger.live):$(act remaining):$(act sold_out)" "50:0:true"
check "metrics: seckill_activities_created_total is a counter" is_counter seckill_activities_created_total
expect_eq "metrics: two activities created (1 and 4)" "$(metric seckill_activities_created_total)" 2

# ------------------------------------------------ 3. restock
w1_user=$(head -1 "$tmp/w1.orders" | cut -d' ' -f1)
w1_order=$(head -1 "$tmp/w1.orders" | cut -d' ' -f2)
buy 1 "$w1_user"
expect_eq "sold out: an earlier winner gets its own order back, not 410" "$CODE $BODY" \
	"200 {\"status\":\"confirmed\",\"order\":\"$w1_order\",\"duplicate\":true}"
ctl stock add 1 20 --request-id 5
expect_eq "restock 20 (request 5): exit 0" "$CTL_RC" 0
check "restock: prints 'restocked'" grep -q "restocked, 20 units (request id 5)" "$tmp/ctl.out"
expect_eq "restock: item 1 reopens with 20" "$(act remaining):$(act sold_out):$(act added)" "20:false:20"
b=$(sbx_exec curl -s -m 5 "http://$SERVER/v1/items/1")
expect_match "restock: the dataplane shows item 1 open again" "$b" '"state":"open","remaining":20'
ctl stock add 1 20 --request-id 5
expect_eq "restock rerun, same request id: exit 0 'unchanged'" \
	"$CTL_RC:$(grep -c 'unchanged' "$tmp/ctl.out")" "0:1"
ctl stock add 1 21 --request-id 5
expect_eq "restock, same request id with other units: exit 5" "$CTL_RC" 5
expect_eq "restock applied once: remaining 20, added 20" "$(act remaining):$(act added)" "20:20"
# docs/api.md: per-user limit 1, a retry of a winner gets the same order
# back ("duplicate":true, 200 once it is confirmed) while units remain.
buy 1 "$w1_user"
expect_eq "reopened: an earlier winner gets its own order back, no second unit" \
	"$CODE $BODY" "200 {\"status\":\"confirmed\",\"order\":\"$w1_order\",\"duplicate\":true}"
expect_eq "reopened: the retry took no unit" "$(act remaining)" 20
rc=0
crowd 1 1001 60 w2 --expect-units 20 || rc=$?
cat "$tmp/w2.out"
expect_eq "wave 2: crowd checks pass (60 new users, 20 units)" "$rc" 0
expect_eq "wave 2: exactly 20 winners (200 confirmed), the rest 410" \
	"$(json_get "$tmp/w2.json" 'sorted(d["http"].items())'):$(json_get "$tmp/w2.json" 'd["fresh_wins"]')" \
	"[('200', 20), ('410', 40)]:20"
check "wave 2: winners are new users" disjoint_users "$tmp/w1.orders" "$tmp/w2.orders"
expect_eq "wave 2: every 200 is in LMDB" "$(orders_in_store "$tmp/w2.orders")" 20
buy 1 "$w1_user"
expect_eq "sold out again: an earlier winner gets its own order back" "$CODE $BODY" \
	"200 {\"status\":\"confirmed\",\"order\":\"$w1_order\",\"duplicate\":true}"
expect_eq "wave 2: ledger live 70, remaining 0" "$(act ledger.live):$(act remaining)" "70:0"
expect_eq "metrics: 20 units restocked" "$(metric seckill_units_restocked_total)" 20

# ------------------------------------------------ 4. start time, end, close
# Item 6 ends 3 s from now (checked after item 2's start, and at the restart).
ctl activity add 6 --total 5 --end +3s --name "short sale"
expect_eq "add 6 --end +3s: exit 0" "$CTL_RC" 0
buy 6 6001
expect_match "add 6: a buy before the end is 200 confirmed" "$CODE $BODY" \
	'^200 \{"status":"confirmed","order":"[0-9]+"\}$'
ctl activity add 2 --total 10 --start +4s
expect_eq "add 2 --start +4s: exit 0" "$CTL_RC" 0
buy 2 5001
expect_match "add 2: a buy right away is 425 not_started" "$CODE $BODY" \
	'^425 \{"status":"not_started","starts_in_ms":[0-9]+\}$'
wait_ms=$(echo "$BODY" | sed -n 's/.*"starts_in_ms":\([0-9]*\).*/\1/p')
b=$(sbx_exec curl -s -m 5 "http://$SERVER/v1/items/2")
expect_match "add 2: the dataplane shows item 2 scheduled" "$b" '"state":"scheduled","remaining":10'
{ [ -n "$wait_ms" ] && [ "$wait_ms" -le 5000 ]; } || bad "add 2: starts_in_ms '$wait_ms' not within 5 s"
# Until the dataplane shows item 2 open (its start has passed); bounded: 8 s.
for _ in $(seq 1 80); do
	b=$(sbx_exec curl -s -m 2 "http://$SERVER/v1/items/2")
	[[ $b == *'"state":"open"'* ]] && break
	sleep 0.1
done
expect_match "add 2: the dataplane shows item 2 open after its start" "$b" '"state":"open"'
buy 2 5001
expect_match "add 2: after the start a buy is 200 confirmed" "$CODE $BODY" \
	'^200 \{"status":"confirmed","order":"[0-9]+"\}$'
ctl activity close 2
expect_eq "close 2: exit 0 'closed'" "$CTL_RC:$(grep -c '^activity 2: closed' "$tmp/ctl.out")" "0:1"
buy 2 5002
expect_eq "closed: a new user's buy is 403 ended" "$CODE $BODY" '403 {"status":"ended"}'
buy 2 5001
expect_eq "closed: the winner's retry is 403 too" "$CODE" 403
b=$(sbx_exec curl -s -m 5 "http://$SERVER/v1/items/2")
expect_match "closed: the dataplane shows item 2 ended" "$b" '"state":"ended","remaining":9'
ctl activity close 2
expect_eq "close 2 again: exit 0 'unchanged'" "$CTL_RC:$(grep -c 'unchanged' "$tmp/ctl.out")" "0:1"
ctl stock add 2 1
expect_eq "stock add on a closed item: exit 5" "$CTL_RC" 5
expect_eq "closed: nothing restocked, the order stays (added 0, remaining 9, live 1)" \
	"$(act added 2):$(act remaining 2):$(act ledger.live 2):$(act activity.closed 2)" "0:9:1:true"
# Item 6's end has passed by now (item 2 waited 4 s); bounded: 5 s more.
for _ in $(seq 1 50); do
	b=$(sbx_exec curl -s -m 2 "http://$SERVER/v1/items/6")
	[[ $b == *'"state":"ended"'* ]] && break
	sleep 0.1
done
expect_match "item 6 past its end: the dataplane shows it ended" "$b" '"state":"ended","remaining":4'
buy 6 6002
expect_eq "item 6 past its end: a buy is 403 ended" "$CODE $BODY" '403 {"status":"ended"}'
ctl reconcile
expect_eq "before the restart: reconcile exits 0" "$CTL_RC" 0

# ------------------------------------------------ 5. kill -9, restart from LMDB
"$SBX" control kill
"$SBX" kill
"$SBX" down >/dev/null
up
grep -h "event=recovery" "/run/$SK_SBX/log" || true
check "restart: the config still holds no [item.N]" no_config_items
expect_eq "restart: item 1 loaded from LMDB: in arena, remaining 0, total + added 70" \
	"$(act in_arena):$(act remaining):$(($(act total) + $(act added)))" "true:0:70"
ctl activity show 1
expect_eq "restart: activity show 1 exits 0" "$CTL_RC" 0
check "restart: activity show 1 prints remaining 0" grep -qE '^remaining +0$' "$tmp/ctl.out"
check "restart: activity show 1 prints total 50 added 20" grep -q 'total 50 added 20' "$tmp/ctl.out"
expect_eq "restart: ledger live 70" "$(act ledger.live)" 70
buy 1 "$w1_user"
expect_eq "restart: an earlier winner cannot buy; it gets its order of the earlier run back" \
	"$CODE $BODY" "200 {\"status\":\"confirmed\",\"order\":\"$w1_order\",\"duplicate\":true}"
buy 2 5003
expect_eq "restart: closed item 2 is not on sale (404)" "$CODE $BODY" '404 {"status":"not_found"}'
expect_eq "restart: item 2 stays in the store only, closed" \
	"$(act in_arena 2):$(act activity.closed 2):$(act ledger.live 2)" "false:true:1"
expect_eq "restart: item 4 loaded with its 3 units" "$(act in_arena 4):$(act remaining 4)" "true:3"

ctl stock add 1 5
expect_eq "restart: stock add 1 5 exits 0" "$CTL_RC" 0
expect_eq "restart: item 1 reopens with 5" "$(act remaining):$(act added)" "5:25"
w2_user=$(head -1 "$tmp/w2.orders" | cut -d' ' -f1)
w2_order=$(head -1 "$tmp/w2.orders" | cut -d' ' -f2)
# A winner of an earlier dataplane run gets its order back (restored from
# LMDB at start: durable, so 200 confirmed with "duplicate":true), no unit.
buy 1 "$w2_user"
expect_eq "restart: an earlier winner's retry gets its own order, no second unit" \
	"$CODE $BODY" "200 {\"status\":\"confirmed\",\"order\":\"$w2_order\",\"duplicate\":true}"
expect_eq "restart: the retry took no unit" "$(act remaining)" 5
# Wave 3: users 41..100 - 41..80 were in wave 1 (41..50 won there unless the
# crowd's order said otherwise), 81..100 are new.
rc=0
crowd 1 41 60 w3 || rc=$?
cat "$tmp/w3.out"
echo "wave 3: crowd exit $rc"
expect_eq "wave 3: one order per user, orders unique, no error" \
	"$(json_get "$tmp/w3.json" '[d["checks"][k] for k in ("one_order_per_user", "orders_unique", "no_errors", "all_answered")]')" \
	"[True, True, True, True]"
cat "$tmp/w1.orders" "$tmp/w2.orders" >"$tmp/w12.orders"
check "wave 3: an earlier winner seen again got the same order" same_orders "$tmp/w12.orders" "$tmp/w3.orders"
itpy orders new "$tmp/w12.orders" "$tmp/w3.orders" >"$tmp/w3.new"
expect_eq "wave 3: exactly 5 new winners" "$(wc -l <"$tmp/w3.new")" 5
expect_eq "wave 3: crowd counts 5 fresh wins" "$(json_get "$tmp/w3.json" 'd["fresh_wins"]')" 5
expect_eq "wave 3: the new winners' orders are in LMDB" "$(orders_in_store "$tmp/w3.new")" 5
expect_eq "wave 3: ledger live 75, remaining 0" "$(act ledger.live):$(act remaining)" "75:0"
# The control plane's preheat runs every second: it must not load item 2.
# Wait for two passes after this point (bounded: 10 s).
passes() { curl -sf "$ADMIN/metrics" | awk '$1 == "seckill_preheat_passes_total" { print $2 }'; }
p0=$(passes)
for _ in $(seq 1 100); do
	[ "$(passes)" -ge $((p0 + 2)) ] && break
	sleep 0.1
done
check "restart: two preheat passes ran" [ "$(passes)" -ge $((p0 + 2)) ]
buy 2 5004
expect_eq "restart: closed item 2 still not on sale after preheat passes (404)" "$CODE" 404
buy 6 6003
expect_eq "restart: ended item 6 is not loaded (404)" "$CODE" 404
expect_eq "restart: item 6 stays in the store only, its order live" \
	"$(act in_arena 6):$(act ledger.live 6)" "false:1"
# A restock of an ended sale is refused (its units could never sell).
ctl stock add 6 1 --request-id 9
expect_eq "restock of ended item 6: exit 5, nothing stored" \
	"$CTL_RC:$(act activity.added 6):$(act in_arena 6)" "5:0:false"

# ------------------------------------------------ 5b. activity payment timeout
# --pay-timeout 5: unpaid orders are cancelled after 5 s (the control plane's
# default is 900 s), their units come back and the buyers may buy again.
ctl activity add 5 --total 2 --pay-timeout 5 --name "pay fast"
expect_eq "add 5 --pay-timeout 5: exit 0" "$CTL_RC" 0
buy 5 7001
c1=$CODE
o1=$(echo "$BODY" | sed -n 's/.*"order":"\([0-9]*\)".*/\1/p')
buy 5 7002
c2=$CODE
buy 5 7003
expect_eq "item 5: two winners, then 410" "$c1 $c2 $CODE" "200 200 410"
expect_eq "item 5: two live orders" "$(act ledger.live 5)" 2
# wait_unpaid_cancelled RETURNED - wait (20 s at most) until item 5 has no
# live order and RETURNED units returned.
wait_unpaid_cancelled() {
	local end=$((SECONDS + 20))
	while [ "$SECONDS" -lt "$end" ]; do
		[ "$(act ledger.live 5):$(act ledger.returned 5)" = "0:$1" ] && return 0
		sleep 0.1
	done
	return 1
}
wait_unpaid_cancelled 2 || true
expect_eq "item 5: unpaid orders cancelled after 5 s, units back" \
	"$(act ledger.live 5):$(act ledger.returned 5):$(act remaining 5)" "0:2:2"
buy 5 7001
o1b=$(echo "$BODY" | sed -n 's/.*"order":"\([0-9]*\)".*/\1/p')
check "item 5: the cancelled buyer buys again: 200, a new order" \
	test "$CODE" = 200 -a -n "$o1b" -a "$o1b" != "$o1"
# Its new order is cancelled 5 s later too: wait for it, so that nothing
# moves under the snapshots of the bad-input section below.
wait_unpaid_cancelled 3 || true
expect_eq "item 5: the new order is cancelled unpaid too, its unit back" \
	"$(act ledger.live 5):$(act ledger.returned 5):$(act remaining 5)" "0:3:2"

# ------------------------------------------------ 6. bad input, unknown ids
snap() {
	"$SBX" ctl --json activity list | itpy reports activities
}
before=$(snap)
echo "activities: $before"
for args in "activity add 3 --total 0" \
	"activity add 3" \
	"activity add 3 --total 5 --limit 0" \
	"activity add 3 --total 5 --start tomorrow" \
	"activity add 3 --total 5 --start 1000 --end 2000" \
	"activity add 0 --total 5" \
	"activity add 3 --total 5 --total-from stock:{sku3}" \
	"stock add 1 0" \
	"stock add 1 abc" \
	"stock add 1 3 --request-id 0"; do
	# shellcheck disable=SC2086
	ctl $args
	expect_eq "bad input '$args': exit 2" "$CTL_RC" 2
done
ctl activity add 3 --total-from 'stock:{sku3}'
check "--total-from without Redis: exit 5, says so" \
	bash -c "[ $CTL_RC = 5 ] && grep -q 'no Redis' '$tmp/ctl.out'"
ctl activity show 3
expect_eq "bad input: activity 3 was not created (show exits 4)" "$CTL_RC" 4
expect_eq "bad input: nothing changed" "$(snap)" "$before"
ctl activity show 99
expect_eq "activity show 99: exit 4" "$CTL_RC" 4
ctl activity close 99
expect_eq "activity close 99: exit 4" "$CTL_RC" 4
ctl stock add 99 1
expect_eq "stock add 99 1: exit 4" "$CTL_RC" 4
expect_eq "unknown ids: nothing changed" "$(snap)" "$before"

ctl reconcile
expect_eq "end: seckillctl reconcile exits 0" "$CTL_RC" 0
check "metrics: seckill_activities_created_total is a counter" is_counter seckill_activities_created_total
check "metrics: seckill_units_restocked_total is a counter" is_counter seckill_units_restocked_total
expect_eq "metrics: 5 units restocked by this control plane" "$(metric seckill_units_restocked_total)" 5
"$SBX" down >/dev/null

echo "activities: $((SECONDS - T0)) s"
finish
