#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# export.sh - the Kafka export of the event log through the real appliance:
# seckill-kafka broker (librdkafka's mock cluster on 127.0.0.1, topics
# seckill.orders and seckill.events), the sandbox with a store, ack =
# durable, auth off (X-User-Id) and the control plane started with
# --kafka BOOTSTRAP:
#
#  1. a sale of 500 units to 3,000 users: once the export backlog is 0,
#     seckill.orders holds exactly the winners' orders (keys = order ids),
#     every value is {"v":1, "type":"confirmed", "order" = key, "user" =
#     the winner, "units", "lines" of item 1}; delivered_total >= winners;
#  2. 5 orders paid (seckillctl order pay): seckill.events has "paid" events
#     for exactly those order ids;
#  3. broker outage (SIGUSR1: every broker down): a restock and a second
#     wave (200 units, new users) are still answered 200 (durable acks do
#     not wait for Kafka) and are in LMDB, reconcile passes, the export
#     cursor does not move and the backlog covers the second wave; SIGUSR2:
#     the backlog drains to 0 and seckill.orders holds every order of both
#     waves (at least once: duplicates allowed, with the same value);
#  4. restock, 2 more pays and at once kill -9 of the control plane (the
#     cursor is saved at most once a second, so the last events are
#     re-exported); the dataplane sells a third wave meanwhile (60 units,
#     answered 202 after ack_wait_ms); the control plane restarts with the
#     same --kafka: the third wave reaches LMDB, the backlog drains to 0,
#     seckill.orders holds every order of the three waves and nothing else,
#     seckill.events exactly the 7 paid orders, per key the seq values are
#     non-decreasing in consumption order, duplicates carry the same value,
#     every event 1..cursor was exported exactly under one key, and
#     reconcile passes;
#  5. a clean stop (SIGTERM) and start of the control plane: the cursor was
#     flushed at stop, nothing is produced again.
# Every crowd run, wait and consume is bounded; the broker is stopped by its
# PID on every exit path.
. "$(dirname "$0")/lib.sh"
require_env curl SK_CROWD SK_CONTROL SK_SECKILLCTL SK_KAFKA
# shellcheck source=lib/durable.sh
. "$IT_DIR/lib/durable.sh"
# shellcheck source=lib/kafka.sh
. "$IT_DIR/lib/kafka.sh"

tmp=$(mktemp -d)
KAFKA_PID=
cleanup() {
	local rc=$?
	if [ "$rc" != 0 ] && [ -f "/run/$SK_SBX/control.log" ]; then
		echo "--- control plane log (last lines)"
		tail -n 15 "/run/$SK_SBX/control.log"
		echo "--- broker log"
		tail -n 10 "$tmp/kafka.log" 2>/dev/null || true
	fi
	"$SBX" down >/dev/null 2>&1 || rc=1
	kafka_down
	rm -rf "$tmp"
	exit "$rc"
}
trap cleanup EXIT
trap 'exit 143' TERM INT
export SK_SBX_ADMIN_PORT=$((18000 + $$ % 1000))
# shellcheck disable=SC2034 # read by lib.sh's item_field and orders_in_store
ADMIN=http://127.0.0.1:$SK_SBX_ADMIN_PORT
T0=$SECONDS
W1=500 W2=200 W3=60

ctl() {
	"$SBX" ctl "$@"
}

# control_gone - the control plane's PID (sandbox state) is no seckill-control
# any more (a zombie waiting for its reaper counts as gone).
control_gone() {
	local pid
	pid=$(sed -n 's/^control_pid=//p' "/run/$SK_SBX/env")
	[ -n "$pid" ] && ! grep -q seckill-control "/proc/$pid/cmdline" 2>/dev/null
}

crowd() {
	sbx_exec taskset -c 0 "$SK_CROWD" --server "$SERVER" --item 1 --conns 32 \
		--timeout-ms 8000 --max-seconds 40 "$@"
}

# cx FILE FIELD - a field of an export_check.py result (tests/lib/python).
cx() {
	json_get "$1" "d['$2']"
}

# consume_both TAG - both topics from the beginning into $tmp/TAG.orders.json
# and $tmp/TAG.events.json.
consume_both() {
	kafka_consume seckill.orders "$tmp/$1.orders.json" || bad "$1: consume seckill.orders"
	kafka_consume seckill.events "$tmp/$1.events.json" || bad "$1: consume seckill.events"
}

# ------------------------------------------------------------------ broker + sandbox
kafka_start seckill.orders seckill.events

cfg=$tmp/export.ini
{
	durable_config
	cat <<-EOF

		[item.1]
		name = export sale
		total = $W1
		dedup_slots = 65536
	EOF
} >"$cfg"
sbx_start --config "$cfg"
check "control plane exports to $KAFKA_BOOTSTRAP" grep -q "event=ready .*kafka=$KAFKA_BOOTSTRAP" "/run/$SK_SBX/control.log"

# ------------------------------------------------------------------ 1. a sale
rc=0
crowd --users 3000 --attempts 4000 --seed 1 --expect-units $W1 \
	--json "$tmp/c1.json" --orders "$tmp/o1" >"$tmp/c1.out" 2>&1 || rc=$?
cat "$tmp/c1.out"
expect_eq "wave 1: crowd checks pass" "$rc" 0
expect_eq "wave 1: $W1 winners" "$(wc -l <"$tmp/o1")" $W1
check "wave 1: LMDB drained" wait_drained
check "wave 1: export backlog reaches 0 (30 s)" wait_metric seckill_export_backlog -eq 0 30
check "wave 1: seckill_export_delivered_total >= winners" \
	wait_metric seckill_export_delivered_total -ge $W1 5
kafka_consume seckill.orders "$tmp/x1.orders.json" || bad "wave 1: consume seckill.orders"
itpy export_check "$tmp/x1.orders.json" - "$tmp/o1" - 0 >"$tmp/x1.json"
cat "$tmp/x1.json"
expect_eq "wave 1: every winner's order is in seckill.orders" "$(cx "$tmp/x1.json" o_missing)" 0
expect_eq "wave 1: no other key in seckill.orders" "$(cx "$tmp/x1.json" o_extra)" 0
expect_eq "wave 1: every value v1 confirmed with the winner's user and lines" \
	"$(cx "$tmp/x1.json" o_bad):$(cx "$tmp/x1.json" bad_json)" "0:0"
expect_eq "wave 1: duplicates carry the same value" "$(cx "$tmp/x1.json" dup_mismatch)" 0

# ------------------------------------------------------------------ 2. pay a few
head -n 5 "$tmp/o1" | awk '{ print $2 }' >"$tmp/paid"
npaid=0
while read -r id; do
	ctl order pay "$id" >/dev/null && npaid=$((npaid + 1))
done <"$tmp/paid"
expect_eq "pay: seckillctl order pay x5" "$npaid" 5
check "pay: export backlog back to 0 (30 s)" wait_metric seckill_export_backlog -eq 0 30
consume_both x2
itpy export_check "$tmp/x2.orders.json" "$tmp/x2.events.json" "$tmp/o1" "$tmp/paid" \
	"$(metric seckill_export_cursor)" >"$tmp/x2.json"
cat "$tmp/x2.json"
expect_eq "pay: seckill.events has paid events for exactly the 5 paid orders" \
	"$(cx "$tmp/x2.json" paid_missing):$(cx "$tmp/x2.json" paid_extra)" "0:0"
expect_eq "pay: every event value well-formed" \
	"$(cx "$tmp/x2.json" e_bad):$(cx "$tmp/x2.json" bad_json)" "0:0"
expect_eq "pay: every event of the log so far exported" "$(cx "$tmp/x2.json" seq_missing)" 0

# ------------------------------------------------------------------ 3. broker outage
check "outage: SIGUSR1 takes the brokers down" kafka_signal USR1 down "$tmp"
cursor0=$(metric seckill_export_cursor)
ctl stock add 1 $W2 --request-id 1 >/dev/null || bad "outage: stock add 1 $W2 while Kafka is down"
rc=0
crowd --users 1500 --user-base 10001 --seed 2 --expect-units $W2 \
	--json "$tmp/c2.json" --orders "$tmp/o2" >"$tmp/c2.out" 2>&1 || rc=$?
cat "$tmp/c2.out"
expect_eq "outage: wave 2 crowd checks pass" "$rc" 0
expect_eq "outage: wave 2 answered only 200 and 410 (durable acks do not wait for Kafka)" \
	"$(json_get "$tmp/c2.json" 'sorted(d["http"])')" "['200', '410']"
check "outage: export backlog >= wave-2 orders while down (10 s)" \
	wait_metric seckill_export_backlog -ge $W2 10
expect_eq "outage: the export cursor did not move while down" \
	"$(metric seckill_export_cursor)" "$cursor0"
expect_eq "outage: every wave-2 order durable in LMDB" "$(orders_in_store "$tmp/o2")" $W2
expect_eq "outage: LMDB live units == both waves" "$(item_field ledger.live)" $((W1 + W2))
check "outage: reconcile" reconcile
echo "outage: backlog $(metric seckill_export_backlog), produced $(metric seckill_export_produced_total), failed $(metric seckill_export_failed_total)"
check "outage: SIGUSR2 brings the brokers up" kafka_signal USR2 up "$tmp"
t=$SECONDS
check "outage over: export backlog drains to 0 (60 s)" wait_metric seckill_export_backlog -eq 0 60
echo "outage over: backlog 0 after $((SECONDS - t)) s; rewinds $(metric seckill_export_rewinds_total), failed $(metric seckill_export_failed_total)"
check "outage over: seckill_export_delivered_total >= both waves" \
	wait_metric seckill_export_delivered_total -ge $((W1 + W2)) 5
cat "$tmp/o1" "$tmp/o2" >"$tmp/o12"
kafka_consume seckill.orders "$tmp/x3.orders.json" || bad "outage over: consume seckill.orders"
itpy export_check "$tmp/x3.orders.json" - "$tmp/o12" - 0 >"$tmp/x3.json"
cat "$tmp/x3.json"
expect_eq "outage over: every order of both waves is in seckill.orders" "$(cx "$tmp/x3.json" o_missing)" 0
expect_eq "outage over: no other key in seckill.orders" "$(cx "$tmp/x3.json" o_extra)" 0
expect_eq "outage over: values well-formed" \
	"$(cx "$tmp/x3.json" o_bad):$(cx "$tmp/x3.json" bad_json)" "0:0"
expect_eq "outage over: duplicates carry the same value" "$(cx "$tmp/x3.json" dup_mismatch)" 0
expect_eq "outage over: per key, seq non-decreasing" "$(cx "$tmp/x3.json" seq_back)" 0

# ------------------------------------------------------------------ 4. kill -9 of the control plane
ctl stock add 1 $W3 --request-id 2 >/dev/null || bad "kill: stock add 1 $W3"
# Two pays and at once the kill: their events are delivered but the cursor
# (saved at most once a second) most likely not past them.
sed -n '6,7p' "$tmp/o1" | awk '{ print $2 }' >"$tmp/paid2"
npaid=0
while read -r id; do
	ctl order pay "$id" >/dev/null && npaid=$((npaid + 1))
done <"$tmp/paid2"
expect_eq "kill: 2 more orders paid" "$npaid" 2
cat "$tmp/paid2" >>"$tmp/paid"
delivered_before=$(metric seckill_export_delivered_total)
"$SBX" control kill
check "kill: the control plane is gone" control_gone
rc=0
crowd --users 1000 --user-base 20001 --seed 3 --expect-units $W3 \
	--json "$tmp/c3.json" --orders "$tmp/o3" >"$tmp/c3.out" 2>&1 || rc=$?
cat "$tmp/c3.out"
expect_eq "kill: wave 3 (control plane down) crowd checks pass" "$rc" 0
expect_eq "kill: wave 3 winners answered 202 queued" \
	"$(json_get "$tmp/c3.json" 'd["http"].get("202", 0)')" "$(json_get "$tmp/c3.json" 'd["fresh_wins"]')"
restarted=0
for try in 1 2 3; do
	"$SBX" control start && {
		restarted=1
		break
	}
	echo "control plane restart: try $try failed"
done
expect_eq "kill: control plane restarted with --kafka" "$restarted" 1
check "kill: LMDB drained after the restart" wait_drained
expect_eq "kill: every wave-3 order durable in LMDB" "$(orders_in_store "$tmp/o3")" $W3
check "kill: export backlog drains to 0 after the restart (60 s)" \
	wait_metric seckill_export_backlog -eq 0 60
echo "after the restart: produced $(metric seckill_export_produced_total), delivered $(metric seckill_export_delivered_total) (before the kill: $delivered_before), cursor $(metric seckill_export_cursor)"
cat "$tmp/o1" "$tmp/o2" "$tmp/o3" >"$tmp/o123"
cursor=$(metric seckill_export_cursor)
consume_both x4
itpy export_check "$tmp/x4.orders.json" "$tmp/x4.events.json" "$tmp/o123" "$tmp/paid" \
	"${cursor:-0}" >"$tmp/x4.json"
cat "$tmp/x4.json"
expect_eq "kill: every order of the three waves is in seckill.orders" "$(cx "$tmp/x4.json" o_missing)" 0
expect_eq "kill: no other key in seckill.orders" "$(cx "$tmp/x4.json" o_extra)" 0
expect_eq "kill: values well-formed" \
	"$(cx "$tmp/x4.json" o_bad):$(cx "$tmp/x4.json" e_bad):$(cx "$tmp/x4.json" bad_json)" "0:0:0"
expect_eq "kill: seckill.events has paid events for exactly the 7 paid orders" \
	"$(cx "$tmp/x4.json" paid_missing):$(cx "$tmp/x4.json" paid_extra)" "0:0"
expect_eq "kill: per key, seq non-decreasing in consumption order" "$(cx "$tmp/x4.json" seq_back)" 0
expect_eq "kill: duplicates carry the same value" "$(cx "$tmp/x4.json" dup_mismatch)" 0
expect_eq "kill: one key per event seq" "$(cx "$tmp/x4.json" seq_clash)" 0
expect_eq "kill: every event 1..cursor exported, none beyond" \
	"$(cx "$tmp/x4.json" seq_missing):$(cx "$tmp/x4.json" seq_over)" "0:0"
expect_eq "kill: 2 restocks exported" "$(json_get "$tmp/x4.json" 'd["e_types"].get("restocked", 0)')" 2
echo "re-exported (duplicates consumers drop): $(cx "$tmp/x4.json" o_dups) in seckill.orders, $(cx "$tmp/x4.json" e_dups) in seckill.events"
check "kill: reconcile" reconcile

# ------------------------------------------------------------------ 5. graceful stop
# SIGTERM: the exporter flushes and writes the cursor at stop, so the next
# control plane has nothing to produce again.
"$SBX" control stop
check "stop: the control plane is gone" control_gone
check "stop: control plane started again" "$SBX" control start
sleep 1
expect_eq "stop: nothing re-exported after a clean stop (produced, backlog)" \
	"$(metric seckill_export_produced_total):$(metric seckill_export_backlog)" "0:0"
expect_eq "stop: the cursor read back is the one before the stop" \
	"$(metric seckill_export_cursor)" "$cursor"

echo "export test: $((SECONDS - T0)) s"
finish
