#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# day2.sh - the day-2 commands on a running sale, with the real dataplane
# (two lcores: per-lcore buckets) and control plane in the sandbox: a store,
# ack = durable, auth = off (X-User-Id), a Kafka broker for the export.
#
#  1. pause during a crowd: the crowd hammers item 1 (20,000 units); once
#     200 are sold, `activity pause 1`: buys answer 503
#     {"status":"paused"} with Retry-After: 1, GET /v1/items/1 says paused,
#     the arena's sold count does not move while the crowd runs on, and
#     LMDB holds no order sold between the pause and the resume; `resume`:
#     a second crowd buys again; the outcome is counted in /metrics;
#  2. orders: `seckillctl orders --item 1 --user U` lists each winner's
#     order (50 checked), every page of `--state confirmed` (ascending ids,
#     cursor) adds up to LMDB's live units;
#  3. stock remove: more than unsold exits 5 and says how many are; 100
#     units removed once per request id (a rerun is "unchanged", other
#     units or a restock of the same id exit 5); a crowd then buys exactly
#     the units left; total == live + removed; a crowd on item 2 with
#     removals running beside it (some done while it buys): sold +
#     removed + remaining == total, every removal done or refused whole,
#     LMDB == arena;
#  4. extend: item 3 (--end +4s) extended to +1h sells after its first
#     end; an earlier end exits 5, the same end is "unchanged", never is
#     allowed; item 4 past its end stays ended (extend exits 5, buys 403);
#  5. kill -9 of both processes and a restart: the pause (item 3) and the
#     removed units (items 1, 2) come back from LMDB; resume sells again;
#  6. bad input exits 2 and unknown ids 4, nothing changed; archive: item
#     5 (two paid orders, ended during sections 4-5) archived once over and
#     exported, item 3 refused (not over); its orders leave LMDB and are
#     still found by `order show` and `orders`, marked archived; reconcile
#     (the command and the control plane's periodic run); the removed,
#     paused, resumed, extended and activity_archived events in
#     seckill.events.
#
. "$(dirname "$0")/lib.sh"
require_env curl SK_CROWD SK_CONTROL SK_SECKILLCTL SK_KAFKA
# shellcheck source=lib/durable.sh
. "$IT_DIR/lib/durable.sh"
# shellcheck source=lib/kafka.sh
. "$IT_DIR/lib/kafka.sh"

tmp=$(mktemp -d)
at_exit stop_crowd
at_exit kafka_down
at_exit rm_tmp
export SK_SBX_ADMIN_PORT=$((19000 + $$ % 1000))
ADMIN=http://127.0.0.1:$SK_SBX_ADMIN_PORT
T0=$SECONDS
cfg=$tmp/day2.ini
durable_config >"$cfg"

# ctl ARGS... - seckillctl against this sandbox; output in $tmp/ctl.out,
# exit code in CTL_RC (never fails the script).
ctl() {
	CTL_RC=0
	"$SBX" ctl "$@" >"$tmp/ctl.out" 2>&1 || CTL_RC=$?
	sed 's/^/    | /' "$tmp/ctl.out"
}

# ctl_says RC WORDS - the last ctl exited RC and printed WORDS.
ctl_says() {
	[ "$CTL_RC" = "$1" ] && grep -q -- "$2" "$tmp/ctl.out"
}

# act FIELD [ITEM] - a field of the admin API's item (dotted for nested).
act() {
	item_field "$1" "${2:-1}"
}

# buy ITEM USER - one buy from inside the namespace; sets CODE, BODY and
# RETRY (its Retry-After, empty if none).
buy() {
	local out
	out=$(sbx_exec curl -s -m 10 -D "$tmp/hdrs" -o - -w '\n%{http_code}' -X POST \
		-H "X-User-Id: $2" "http://$SERVER/v1/seckill/$1") || true
	CODE=${out##*$'\n'}
	BODY=${out%$'\n'*}
	RETRY=$(sbx_exec sed -n 's/^Retry-After: \([0-9]*\).*/\1/p' "$tmp/hdrs" | head -1)
}

# item_get ITEM - the dataplane's GET /v1/items/ITEM body.
item_get() {
	sbx_exec curl -s -m 5 "http://$SERVER/v1/items/$1"
}

# crowd ITEM USER_BASE USERS NAME [crowd options] - USERS distinct users
# buy ITEM once each (summary $tmp/NAME.json, winners $tmp/NAME.orders).
crowd() {
	local item=$1 base=$2 users=$3 name=$4
	shift 4
	sbx_exec timeout 100 "$SK_CROWD" --server "$SERVER" --item "$item" \
		--users "$users" --user-base "$base" --retriers 0 --conns 16 \
		--timeout-ms 8000 --max-seconds 60 --json "$tmp/$name.json" \
		--orders "$tmp/$name.orders" "$@" >"$tmp/$name.out" 2>&1
}

# crowd_bg ... - crowd in the background, its PID in CROWD_PID.
crowd_bg() {
	crowd "$@" &
	CROWD_PID=$!
}

stop_crowd() {
	[ -z "${CROWD_PID:-}" ] || kill_tree TERM "$CROWD_PID"
}

# crowd_wait - wait for the background crowd (bounded by its --max-seconds).
crowd_wait() {
	local rc=0
	wait "$CROWD_PID" || rc=$?
	CROWD_PID=
	return "$rc"
}

sold_at_least() {
	[ "$(act sold "$1")" -ge "$2" ]
}

crowd_done() {
	! kill -0 "$CROWD_PID" 2>/dev/null
}

# past T - the wall clock is past unix second T.
past() {
	[ "$(date +%s)" -gt "$1" ]
}

paused_answers_at_least() {
	local v
	v=$(metric 'seckill_requests_total{outcome="paused"}')
	[ -n "$v" ] && [ "$v" -ge "$1" ]
}

# snap - what the bad input must not change: each activity's units, pause, end.
snap() {
	admin_curl -sf "$ADMIN/v1/activities" | itpy jsonq get - \
		'[(a["item"], a["activity"]["total"], a["activity"]["added"], a["activity"]["removed"], a["activity"]["paused"], a["activity"]["end_ns"], a.get("remaining")) for a in d["activities"]]'
}

kafka_start seckill.orders seckill.events
sbx_up --config "$cfg" --lcores 2

# ------------------------------------------------ 1. pause during a crowd
ctl activity add 1 --total 20000 --name "day2 pause"
expect_eq "add 1: exit 0" "$CTL_RC" 0
crowd_bg 1 1 40000 a
wait_for 30 "for 200 units of item 1 sold" sold_at_least 1 200 || bad "waited for 200 units of item 1 sold"
ctl activity pause 1
t_pause=$(date +%s%N)
check "pause 1 during the crowd: exit 0 'paused'" ctl_says 0 "activity 1: paused"
sold1=$(act sold)
buy 1 900001
expect_eq "paused: a buy is 503 paused with Retry-After: 1" "$CODE $BODY $RETRY" \
	'503 {"status":"paused"} 1'
expect_match "paused: the dataplane's item 1 says paused" "$(item_get 1)" '"state":"paused"'
expect_eq "paused: the admin API says paused" "$(act state):$(act activity.paused)" "paused:true"
# The crowd goes on: wait until it has been answered "paused" a thousand
# times (or is done), then nothing may have been sold meanwhile.
wait_for 30 "for the crowd's paused answers" paused_answers_at_least 1000 || bad "waited for the crowd's paused answers"
expect_eq "paused: no unit sold while the crowd runs on" "$(act sold)" "$sold1"
ctl activity pause 1
check "pause again: exit 0 'unchanged'" ctl_says 0 "unchanged"
wait_for 70 "for crowd a" crowd_done || bad "waited for crowd a"
crowd_wait || true
cat "$tmp/a.out"
expect_eq "crowd a: one order per user, orders unique, no error" \
	"$(json_get "$tmp/a.json" '[d["checks"][k] for k in ("one_order_per_user", "orders_unique", "no_errors")]')" \
	"[True, True, True]"
check "crowd a: answered 503 (paused) while paused" \
	test "$(json_get "$tmp/a.json" 'd["http"].get("503", 0)')" -gt 0
expect_eq "paused: still no unit sold after the crowd" "$(act sold)" "$sold1"
wins_a=$(json_get "$tmp/a.json" 'd["fresh_wins"]')
t_resume=$(date +%s%N)
ctl activity resume 1
check "resume 1: exit 0 'resumed'" ctl_says 0 "activity 1: resumed"
expect_match "resumed: the dataplane's item 1 is open" "$(item_get 1)" '"state":"open"'
check "LMDB drained after crowd a" wait_drained
looked=$(itpy day2_check window "$ADMIN" 1 "$t_pause" "$t_resume") ||
	bad "LMDB holds an order of item 1 sold while it was paused"
expect_eq "LMDB: every order of item 1 looked at, none sold while paused" "$looked" "$wins_a"
expect_eq "crowd a: every 200 is in LMDB" "$(orders_in_store "$tmp/a.orders")" "$wins_a"
check "metrics: seckill_requests_total{outcome=\"paused\"} counts the paused answers" \
	paused_answers_at_least 1000

# ------------------------------------------------ 2. orders queries
n=$(itpy day2_check users "$ADMIN" 1 "$tmp/a.orders" 50) || bad "orders by user: a winner's order missing"
expect_eq "orders --user: 50 winners each find their order" "$n" 50
u=$(head -1 "$tmp/a.orders" | cut -d' ' -f1)
o=$(head -1 "$tmp/a.orders" | cut -d' ' -f2)
ctl orders --item 1 --user "$u"
check "seckillctl orders --item 1 --user $u: exit 0, its order, 1 orders" \
	ctl_says 0 "^$o "
check "seckillctl orders --item 1 --user $u: 1 orders" grep -q "^1 orders$" "$tmp/ctl.out"
pg=$(itpy day2_check pages "$ADMIN" 1 confirmed 1000) ||
	bad "orders --state confirmed: the pages are wrong"
read -r n pages <<<"$pg"
expect_eq "orders --state confirmed: every page adds up to LMDB live" "$n" "$(act ledger.live)"
check "orders --state confirmed: more than one page ($pages)" test "${pages:-0}" -gt 1
ctl orders --item 1 --state confirmed --limit 3
check "seckillctl orders --state confirmed --limit 3: a cursor for more" \
	ctl_says 0 "3 orders; more: rerun with --after "

# ------------------------------------------------ 3. stock remove
rem=$(act remaining)
ctl stock remove 1 $((rem + 1)) --request-id 70
check "remove more than unsold: exit 5, how many are unsold" ctl_says 5 "only $rem units are unsold"
expect_eq "remove refused: nothing removed" "$(act remaining):$(act removed)" "$rem:0"
ctl stock remove 1 100 --request-id 71
check "remove 100 (request 71): exit 0 'removed'" ctl_says 0 "removed, 100 units (request id 71)"
expect_eq "remove: 100 fewer on sale, removed 100 (arena and LMDB)" \
	"$(act remaining):$(act removed):$(act activity.removed)" "$((rem - 100)):100:100"
ctl stock remove 1 100 --request-id 71
check "remove rerun, same request id: exit 0 'unchanged'" ctl_says 0 "unchanged"
ctl stock remove 1 99 --request-id 71
expect_eq "remove, same request id with other units: exit 5" "$CTL_RC" 5
ctl stock add 1 99 --request-id 71
expect_eq "stock add under a removal's request id: exit 5" "$CTL_RC" 5
expect_eq "remove applied once" "$(act remaining):$(act removed):$(act added)" "$((rem - 100)):100:0"
left=$(act remaining)
rc=0
crowd 1 100001 $((left + 500)) b --expect-units "$left" || rc=$?
cat "$tmp/b.out"
expect_eq "crowd b: exactly the units left are sold (checks pass)" "$rc" 0
check "LMDB drained after crowd b" wait_drained
expect_eq "item 1: total 20000 == LMDB live + removed" \
	"$(($(act ledger.live) + $(act removed)))" 20000
expect_eq "item 1: LMDB live == the winners of both crowds" \
	"$(act ledger.live)" "$((wins_a + left))"
check "item 1: reconcile" reconcile

# Removals racing a crowd on item 2: no unit sold and removed, none lost.
ctl activity add 2 --total 15000 --name "day2 remove"
crowd_bg 2 200001 20000 c
wait_for 30 "for item 2 to sell" sold_at_least 2 1 || bad "waited for item 2 to sell"
done_n=0
short_n=0
busy_n=0
during=0
for i in $(seq 1 400); do
	crowd_done && break
	ctl stock remove 2 40 --request-id $((300 + i)) >/dev/null
	case $CTL_RC in
	0)
		done_n=$((done_n + 1))
		crowd_done || during=$((during + 1))
		;;
	5) short_n=$((short_n + 1)) ;;
	1) busy_n=$((busy_n + 1)) ;; # 503: raced the buyers, nothing removed
	*) bad "remove during crowd c: exit $CTL_RC" ;;
	esac
done
crowd_wait || true
cat "$tmp/c.out"
echo "removals during crowd c: $done_n done ($during while it ran), $short_n too few unsold, $busy_n busy"
check "removals done while crowd c was buying ($during)" test "$during" -gt 0
check "LMDB drained after crowd c" wait_drained 2
wins_c=$(json_get "$tmp/c.json" 'd["fresh_wins"]')
expect_eq "item 2: removed == 40 per removal done" "$(act removed 2)" $((40 * done_n))
expect_eq "item 2: sold + removed + remaining == 15000" \
	"$((wins_c + $(act removed 2) + $(act remaining 2)))" 15000
expect_eq "item 2: LMDB live == the crowd's winners" "$(act ledger.live 2)" "$wins_c"
check "item 2: every 200 is in LMDB" orders_in_store "$tmp/c.orders"
check "item 2: reconcile" reconcile

# ------------------------------------------------ 4. extend
end3=$(($(date +%s) + 4))
ctl activity add 3 --total 10 --end "$end3" --name "day2 extend"
expect_eq "add 3 ending in 4 s: exit 0" "$CTL_RC" 0
new3=$(($(date +%s) + 3600))
ctl activity extend 3 --end "$new3"
check "extend 3 to +1h: exit 0 'extended'" ctl_says 0 "activity 3: extended"
expect_match "extend: the dataplane's item 3 ends an hour later" "$(item_get 3)" "\"ends_at\":${new3}000"
wait_for 10 "for item 3's first end to pass" past "$end3" || bad "waited for item 3's first end to pass"
buy 3 300001
expect_match "extend: a buy after the first end is 200 confirmed" "$CODE $BODY" \
	'^200 \{"status":"confirmed","order":"[0-9]+"\}$'
ctl activity extend 3 --end "$new3"
check "extend to the same end: exit 0 'unchanged'" ctl_says 0 "unchanged"
ctl activity extend 3 --end $((new3 - 60))
check "extend to an earlier end: exit 5" ctl_says 5 "only moves later"
ctl activity extend 3 --end never
check "extend to never: exit 0" ctl_says 0 "never"
expect_match "extend never: the dataplane's item 3 has no end" "$(item_get 3)" '"ends_at":null'
ctl activity add 4 --total 5 --end +3s
expect_eq "add 4 ending in 3 s: exit 0" "$CTL_RC" 0
item4_ended() {
	[[ $(item_get 4) == *'"state":"ended"'* ]]
}
wait_for 10 "for item 4 to end" item4_ended || bad "waited for item 4 to end"
ctl activity extend 4 --end +1h
check "extend an ended sale: exit 5, it stays ended" ctl_says 5 "ended"
buy 4 400001
expect_eq "ended item 4: a buy is 403 ended" "$CODE $BODY" '403 {"status":"ended"}'
ctl activity pause 4
expect_eq "pause of an ended sale: exit 5" "$CTL_RC" 5
# Item 5, archived in section 6: two orders, both paid; it ends meanwhile.
ctl activity add 5 --total 5 --end +3s --name "day2 archive"
expect_eq "add 5 ending in 3 s: exit 0" "$CTL_RC" 0
orders5=()
for u in 500001 500002; do
	buy 5 "$u"
	expect_match "item 5: a buy is 200 confirmed" "$CODE $BODY" '^200 \{"status":"confirmed"'
	orders5+=("$(sed -n 's/.*"order":"\([0-9]*\)".*/\1/p' <<<"$BODY")")
	ctl order pay "${orders5[-1]}"
	check "item 5: order paid" ctl_says 0 "paid"
done

# ------------------------------------------------ 5. kill -9, restart from LMDB
ctl activity pause 3
check "pause 3 before the restart: exit 0" ctl_says 0 "paused"
"$SBX" control kill
"$SBX" kill
"$SBX" down >/dev/null
sbx_up --config "$cfg" --lcores 2
buy 3 300002
expect_eq "restart: item 3 comes back paused (503)" "$CODE $BODY" '503 {"status":"paused"}'
expect_eq "restart: item 3 paused in the arena and LMDB" "$(act state 3):$(act activity.paused 3)" \
	"paused:true"
expect_eq "restart: item 1's removed units come back (arena, LMDB), nothing on sale" \
	"$(act removed 1):$(act activity.removed 1):$(act remaining 1)" "100:100:0"
expect_eq "restart: item 2's removed units come back" "$(act removed 2)" $((40 * done_n))
expect_match "restart: item 3 still never ends" "$(item_get 3)" '"ends_at":null'
ctl activity resume 3
check "restart: resume 3: exit 0" ctl_says 0 "resumed"
buy 3 300002
expect_match "restart: resumed item 3 sells (200 confirmed)" "$CODE $BODY" \
	'^200 \{"status":"confirmed","order":"[0-9]+"\}$'
check "restart: reconcile" reconcile

# ------------------------------------------------ 6. bad input, unknown ids, export
before=$(snap)
for args in "orders" "orders --item 1" "orders --item 1 --state bogus" \
	"orders --item 1 --user 0" "orders --item 1 --state paid --limit 0" \
	"activity extend 3" "activity extend 3 --end soon" "activity pause" \
	"activity pause x" "stock remove 1 0" "stock remove 1 x" \
	"stock remove 1 5 --request-id 0"; do
	# shellcheck disable=SC2086
	ctl $args
	expect_eq "bad input '$args': exit 2" "$CTL_RC" 2
done
for args in "activity pause 99" "activity resume 99" "activity extend 99 --end +1h" \
	"stock remove 99 1"; do
	# shellcheck disable=SC2086
	ctl $args
	expect_eq "unknown id '$args': exit 4" "$CTL_RC" 4
done
expect_eq "bad input and unknown ids: nothing changed" "$(snap)" "$before"
# Archive: refused while not over; item 5 once over (5 s after its end)
# and every event of it exported (the exporter saves its cursor each second).
ctl activity archive 3
check "archive a sale without an end: exit 5, not over" ctl_says 5 "not over"
archive5() {
	ctl activity archive 5 && [ "$CTL_RC" = 0 ]
}
wait_for 20 "for item 5 to be archived" archive5 || bad "waited for item 5 to be archived"
wait_metric seckill_orders_archived_total -eq 2 10 || bad "item 5's orders not purged"
ctl activity archive 5
check "archive twice: exit 5, already" ctl_says 5 "already"
ctl activity show 5
check "show 5: archived, 2 orders" ctl_says 0 "archived  *yes, 2 orders (done)"
ctl order show "${orders5[0]}"
check "an archived order is found, from the archive" ctl_says 0 "from the activity's archive"
ctl orders --item 5 --state paid
check "orders of an archived item: both listed" ctl_says 0 "^2 orders"
check "end: reconcile" reconcile
# The control plane's own reconcile (every 5 s) counts removed units too.
reconcile_ran() {
	local v
	v=$(metric 'seckill_reconcile_runs_total{result="ok"}')
	[ -n "$v" ] && [ "$v" -ge 2 ]
}
wait_for 20 "for two periodic reconcile runs" reconcile_ran || bad "waited for two periodic reconcile runs"
expect_eq "periodic reconcile: no mismatch on the items with removals" \
	"$(metric 'seckill_reconcile_mismatch{item="1"}'):$(metric 'seckill_reconcile_mismatch{item="2"}')" "0:0"

# The export: one removed event per removal done, the pause and extends.
wait_metric seckill_export_backlog -eq 0 30 || bad "export backlog not drained"
kafka_consume seckill.events "$tmp/events.json"
types=$(itpy day2_check events "$tmp/events.json" removed paused resumed extended \
	activity_archived)
expect_eq "seckill.events: removed, paused, resumed, extended, archived events" "$types" \
	"removed=$((1 + done_n)) paused=2 resumed=2 extended=2 activity_archived=1"
"$SBX" down >/dev/null

echo "day2: $((SECONDS - T0)) s"
finish
