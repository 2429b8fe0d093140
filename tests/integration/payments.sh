#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# payments.sh - payments and refunds coming back through Kafka (issue 13):
# seckill-kafka broker (mock cluster on 127.0.0.1; topics seckill.orders,
# seckill.events, seckill.payments), the sandbox with a store, ack =
# durable, auth off, and the control plane started with --kafka (it
# consumes seckill.payments). Messages are published with
# "seckill-kafka produce --sign-key-file", keyed by order id.
#
#  0. seckill-control refuses --kafka without --payments-key-file, and a
#     request table that forgets sooner than the topic keeps a message;
#  1. a sale: item 1 (6 units, limit 1) to 6 users, item 2 (4 units, limit
#     1, payment timeout 3 s) to 4 users, item 3 (4 units, limit 3) three
#     times to one user; every order confirmed;
#  2. paid messages for 10 orders, two of them delivered twice, a second
#     payment of one order under another request id, and two malformed
#     messages: 10 done, 1 already, 2 duplicates, 2 malformed; states paid;
#  3. the pay/timeout race: the 2 unpaid orders of item 2 are cancelled at
#     their deadline, then their paid messages arrive: recorded as
#     conflicts, the orders stay cancelled, their units stay on sale (two
#     new buyers get them, a third is sold out);
#  4. refunds: a whole order, its redelivery, 2 units of a 1-unit order
#     (refused: too many), the same order's 1 unit, an unpaid order
#     (refused), a cancelled one (refused), and one of the three 1-unit
#     orders of the limit-3 user (refunds in parts): states, arena status
#     (the dataplane's order poll says "refunded"), and the units back on
#     sale: the refunded limit-1 buyer buys again, a new buyer gets the
#     second unit, a third is sold out; the limit-3 user buys one more,
#     then is at the limit;
#     and an unsigned refund of a paid order (issue 26): refused - counted
#     as seckill_payments_rejected_total{reason="unsigned"}, the order stays
#     paid, no unit back on sale - and exported as a pay_rejected event;
#  5. LMDB, the arena and the export agree: LMDB drained on every item,
#     seckillctl reconcile passes, the ledgers count the refunds, and
#     seckill.events holds exactly one "refunded" event per refunded line
#     and one "pay_conflict" per late payment, with their request ids, and
#     a "paid" event per paid order;
#  6. a clean restart of the control plane: the consumer group resumes
#     after the committed offsets (nothing applied or counted again); a
#     last payment is applied;
#  7. MariaDB follows: seckill-mysql-writer (a temporary mariadbd, unix
#     socket only) reads both topics from the start; its rows say the same
#     as LMDB ("verify"): 18 orders, the states, the refunded units, the two
#     conflicts, each item's per-user limit from its activity event, no
#     guard refusal, nothing parked.
# Every wait is on a condition and bounded; the broker, mariadbd and the
# writer are stopped by their PIDs on every exit path.
. "$(dirname "$0")/lib.sh"
require_env curl SK_CONTROL SK_SECKILLCTL SK_KAFKA SK_MYSQL_WRITER
for t in mariadbd mariadb-install-db mariadb mariadb-admin; do
	command -v "$t" >/dev/null || skip "needs $t (Debian: mariadb-server, mariadb-client)"
done
# shellcheck source=lib/durable.sh
. "$IT_DIR/lib/durable.sh"
# shellcheck source=lib/kafka.sh
. "$IT_DIR/lib/kafka.sh"
# shellcheck source=lib/mariadb.sh
. "$IT_DIR/lib/mariadb.sh"

tmp=$(mktemp -d)
KAFKA_PID=
show_logs() {
	[ "$FAILS" = 0 ] && return 0
	echo "--- control plane log (last lines)"
	tail -n 20 "/run/$SK_SBX/control.log" 2>/dev/null || true
	echo "--- broker log"
	tail -n 10 "$tmp/kafka.log" 2>/dev/null || true
	echo "--- writer log (last lines)"
	tail -n 20 "$tmp/writer.log" 2>/dev/null || true
}
stop_db() {
	writer_stop KILL
	db_stop KILL
}
at_exit show_logs
at_exit stop_db
at_exit kafka_down
at_exit rm_tmp
export SK_SBX_ADMIN_PORT=$((19000 + $$ % 1000))
MPORT=$((16000 + $$ % 1000))
SOCK=$tmp/db.sock
# shellcheck disable=SC2034 # read by lib.sh's item_field
ADMIN=http://127.0.0.1:$SK_SBX_ADMIN_PORT
T0=$SECONDS

ctl() {
	"$SBX" ctl "$@"
}

# buy ITEM USER - one buy from inside the namespace: "CODE ORDER" (ORDER
# empty when none).
buy() {
	local out
	out=$(sbx_exec curl -s -m 10 -w ' %{http_code}' -X POST -H "X-User-Id: $2" \
		"http://$SERVER/v1/seckill/$1") || true
	echo "${out##* } $(sed -n 's/.*"order":"\([0-9]*\)".*/\1/p' <<<"$out")"
}

# buy_ok ITEM USER - a buy answered 200: its order id ("none-CODE" if not).
buy_ok() {
	local r
	r=$(buy "$1" "$2")
	if [ "${r% *}" = 200 ]; then echo "${r#* }"; else echo "none-${r% *}"; fi
}

# times N WORD - "WORD WORD ..." (N times).
times() {
	local s=""
	for _ in $(seq "$1"); do s="$s $2"; done
	echo "${s# }"
}

# msg REQ ORDER KIND [UNITS [ITEM]] - a payment message "ORDER=JSON".
msg() {
	local extra=""
	[ -z "${4:-}" ] || extra=",\"units\":$4"
	[ -z "${5:-}" ] || extra="$extra,\"item\":$5"
	echo "$2={\"v\":1,\"request\":\"$1\",\"order\":\"$2\",\"kind\":\"$3\"$extra}"
}

# publish KEY=VALUE... - produce to seckill.payments, in order, signed as
# the payment service signs (the key file kafka_start made).
publish() {
	"$SK_KAFKA" produce --bootstrap "$KAFKA_BOOTSTRAP" --topic seckill.payments \
		--timeout-ms 10000 --sign-key-file "$PAY_KEY" "$@" >>"$tmp/produce.log" 2>&1
}

# publish_unsigned KEY=VALUE... - the same without a signature: anyone who
# can write to the topic.
publish_unsigned() {
	"$SK_KAFKA" produce --bootstrap "$KAFKA_BOOTSTRAP" --topic seckill.payments \
		--timeout-ms 10000 "$@" >>"$tmp/produce.log" 2>&1
}

# pm KIND OUTCOME - the seckill_payments_total sample of KIND and OUTCOME.
pm() {
	local v
	v=$(metric "seckill_payments_total{kind=\"$1\",outcome=\"$2\"}")
	echo "${v:-0}"
}

# wait_pm KIND OUTCOME N - wait (30 s at most) until pm KIND OUTCOME is N.
wait_pm() {
	wait_metric "seckill_payments_total{kind=\"$1\",outcome=\"$2\"}" -eq "$3" 30
}

# state ORDER - the order's status in LMDB (seckillctl --json order show).
state() {
	ctl --json order show "$1" | itpy jsonq field - status
}

# states ORDER... - "state state ..." of the ORDERs.
states() {
	local o s=""
	for o in "$@"; do s="$s $(state "$o")"; done
	echo "${s# }"
}

# wait_state ORDER STATE SECONDS - wait until ORDER is STATE in LMDB.
wait_state() {
	local end=$((SECONDS + $3))
	while [ "$(state "$1")" != "$2" ]; do
		[ "$SECONDS" -lt "$end" ] || return 1
		sleep 0.2
	done
}

# pc FIELD-EXPR - a value of the events summary (payments_check.py).
pc() {
	json_get "$tmp/events.sum" "$1"
}

# ------------------------------------------------------------------ 0. options
# ctl_usage ARGS... - seckill-control's exit status and log for ARGS (the
# options are checked before anything starts).
ctl_usage() {
	local rc=0
	"$SK_CONTROL" -- --store "$tmp/nostore" "$@" >"$tmp/usage.log" 2>&1 || rc=$?
	echo "$rc $(grep -o 'msg="[^"]*"' "$tmp/usage.log" | head -n 1)"
}
expect_match "options: --kafka without a payments key file is refused" \
	"$(ctl_usage --kafka 127.0.0.1:9)" '^2 .*needs --payments-key-file'
expect_match "options: a request table shorter-lived than the topic is refused" \
	"$(ctl_usage --kafka 127.0.0.1:9 --payments-key-file /dev/null --payment-requests-max-age 86400)" \
	'^2 .*shorter than --kafka-payments-retention'
expect_match "options: ... a topic kept longer than the default table age too" \
	"$(ctl_usage --kafka 127.0.0.1:9 --payments-key-file /dev/null --kafka-payments-retention 1209600)" \
	'^2 .*shorter than --kafka-payments-retention'
check "options: the log names both ages" grep -q 'requests_max_age_s=604800 retention_s=1209600' \
	"$tmp/usage.log"

# ------------------------------------------------------------------ broker + sandbox
kafka_start seckill.orders seckill.events seckill.payments

cfg=$tmp/payments.ini
{
	durable_config
	cat <<-EOF

		[item.1]
		name = refunds
		total = 6
	EOF
} >"$cfg"
sbx_up --config "$cfg"
check "control plane consumes from $KAFKA_BOOTSTRAP" \
	grep -q "event=ready .*kafka=$KAFKA_BOOTSTRAP" "/run/$SK_SBX/control.log"
ctl activity add 2 --total 4 --pay-timeout 15 --name race >/dev/null || bad "activity add 2"
ctl activity add 3 --total 4 --limit 3 --name parts >/dev/null || bad "activity add 3"

# The consumer has joined its group and reads: a malformed probe is counted.
publish "probe=not a payment" || bad "publish the probe"
t=$SECONDS
check "consumer ready: the probe counted as malformed (60 s)" \
	wait_metric seckill_payments_malformed_total -eq 1 60
echo "consumer ready after $((SECONDS - t)) s"


# ------------------------------------------------------------------ 1. a sale
declare -a A B C N
for u in 1 2 3 4 5 6; do A[u]=$(buy_ok 1 $((100 + u))); done
for n in 1 2 3; do C[n]=$(buy_ok 3 301); done
expect_eq "sale: item 1 sold out" "$(buy 1 107)" "410 "
expect_eq "sale: item 3 user 301 at its limit" "$(buy 3 301 | cut -d' ' -f1)" 409
expect_eq "sale: every order confirmed in LMDB" \
	"$(states "${A[@]}" "${C[@]}")" "$(times 9 confirmed)"
# Item 2 last: its orders must be paid within their 15 s.
for u in 1 2 3 4; do B[u]=$(buy_ok 2 $((200 + u))); done

# ------------------------------------------------------------------ 2. payments
publish "$(msg pay-b1 "${B[1]}" paid)" "$(msg pay-b2 "${B[2]}" paid)" \
	"$(msg pay-a1 "${A[1]}" paid)" "$(msg pay-a2 "${A[2]}" paid)" \
	"$(msg pay-a3 "${A[3]}" paid)" "$(msg pay-a1 "${A[1]}" paid)" \
	"$(msg pay-a4 "${A[4]}" paid)" "$(msg pay-a5 "${A[5]}" paid)" \
	"$(msg pay-a2 "${A[2]}" paid)" "$(msg pay-a1-again "${A[1]}" paid)" \
	"${A[5]}=not json" "${A[5]}={\"v\":2,\"request\":\"x\",\"order\":\"${A[5]}\",\"kind\":\"paid\"}" \
	"$(msg pay-c1 "${C[1]}" paid)" "$(msg pay-c2 "${C[2]}" paid)" "$(msg pay-c3 "${C[3]}" paid)" ||
	bad "publish the payments"
check "payments: 10 paid, the last of the batch among them (30 s)" wait_pm paid "done" 10
expect_eq "payments: 1 already paid, 2 redeliveries, 2 malformed skipped (+ the probe)" \
	"$(pm paid already):$(metric seckill_payments_duplicates_total):$(metric seckill_payments_malformed_total)" \
	"1:2:3"
expect_eq "payments: states in LMDB" "$(states "${A[@]}" "${B[1]}" "${B[2]}" "${C[@]}")" \
	"paid paid paid paid paid confirmed paid paid paid paid paid"
expect_eq "payments: LMDB paid units of item 1" "$(item_field ledger.paid)" 5

# ------------------------------------------------------------------ 3. pay/timeout race
check "race: the unpaid orders of item 2 cancelled at their deadline (40 s)" \
	wait_state "${B[4]}" cancelled 40
check "race: ... both of them" wait_state "${B[3]}" cancelled 5
expect_eq "race: item 2 has the 2 units back" "$(item_field remaining 2)" 2
publish "$(msg pay-b3 "${B[3]}" paid)" "$(msg pay-b4 "${B[4]}" paid)" || bad "publish the late payments"
check "race: the late payments recorded as conflicts" wait_pm paid conflict 2
expect_eq "race: the orders stay cancelled, the paid ones paid" \
	"$(states "${B[@]}")" "paid paid cancelled cancelled"
N[1]=$(buy_ok 2 211)
N[2]=$(buy_ok 2 212)
expect_eq "race: new buyers get the 2 units, a third is sold out" \
	"${N[1]%%[0-9]*}${N[2]%%[0-9]*}$(buy 2 213)" "410 "
publish "$(msg pay-n1 "${N[1]}" paid)" "$(msg pay-n2 "${N[2]}" paid)" || bad "publish pay-n1, pay-n2"
check "race: the new buyers pay in time" wait_state "${N[2]}" paid 30

# ------------------------------------------------------------------ 4. refunds
publish "$(msg r-a1 "${A[1]}" refund)" "$(msg r-a1 "${A[1]}" refund)" \
	"$(msg r-a2-big "${A[2]}" refund 2)" "$(msg r-a2 "${A[2]}" refund 1 1)" \
	"$(msg r-a6 "${A[6]}" refund)" "$(msg r-b3 "${B[3]}" refund)" \
	"$(msg r-c1 "${C[1]}" refund 1)" || bad "publish the refunds"
check "refunds: the last of the batch applied (30 s)" wait_state "${C[1]}" refunded 30
expect_eq "refunds: 3 done" "$(pm refund "done")" 3
expect_eq "refunds: too many 1, wrong state 2 (unpaid, cancelled)" \
	"$(pm refund too_many):$(pm refund state)" "1:2"
expect_eq "refunds: 3 redeliveries in all" "$(metric seckill_payments_duplicates_total)" 3
expect_eq "refunds: 12 paid in all" "$(pm paid "done")" 12
expect_eq "refunds: states in LMDB" "$(states "${A[1]}" "${A[2]}" "${A[3]}" "${A[6]}" "${C[@]}")" \
	"refunded refunded paid confirmed refunded paid paid"
expect_eq "refunds: the arena's status of a refunded order" \
	"$(ctl --json order show "${A[1]}" | itpy jsonq field - arena_status)" refunded
expect_match "refunds: the dataplane's order poll says refunded" \
	"$(sbx_exec curl -s -m 5 "http://$SERVER/v1/orders/${A[1]}")" '"status":"refunded"'
ctl order show "${A[2]}" >"$tmp/show" || bad "order show"
cat "$tmp/show"
check "refunds: order show names the refunded units" grep -q "REFUNDED" "$tmp/show"
expect_eq "refunds: LMDB refunded units of the order" \
	"$(ctl --json order show "${A[2]}" | itpy jsonq field - refunded_units)" 1
expect_eq "refunds: item 1 has the 2 units back" "$(item_field remaining 1)" 2
again=$(buy 1 101)
expect_eq "refunds: the refunded limit-1 buyer buys again (a new order)" \
	"${again% *}:$([ "${again#* }" != "${A[1]}" ] && echo new)" "200:new"
expect_eq "refunds: a new buyer gets the other unit, a third is sold out" \
	"$(buy 1 108 | cut -d' ' -f1) $(buy 1 109)" "200 410 "
expect_eq "refunds: the limit-3 user buys one more, then is at the limit" \
	"$(buy 3 301 | cut -d' ' -f1) $(buy 3 301 | cut -d' ' -f1)" "200 409"

# An unsigned refund of a paid order: refused, never applied.
left=$(item_field remaining 1)
publish_unsigned "$(msg r-forged "${A[3]}" refund)" || bad "publish the unsigned refund"
check "unsigned: refused and counted (30 s)" \
	wait_metric 'seckill_payments_rejected_total{reason="unsigned"}' -eq 1 30
expect_eq "unsigned: the order stays paid, no unit back on sale, no refund counted" \
	"$(state "${A[3]}"):$(item_field remaining 1):$(pm refund "done")" "paid:$left:3"
check "unsigned: the refusal logged" grep -q 'reason=unsigned .*message refused' \
	"/run/$SK_SBX/control.log"

# ------------------------------------------------------------------ 5. LMDB, arena, export
for item in 1 2 3; do
	check "books: LMDB drained, item $item" wait_drained "$item"
done
check "books: reconcile" reconcile
expect_eq "books: item 1 ledger live, returned" \
	"$(item_field ledger.live 1):$(item_field ledger.returned 1)" "6:2"
expect_eq "books: item 2 ledger live, returned" \
	"$(item_field ledger.live 2):$(item_field ledger.returned 2)" "4:2"
expect_eq "books: item 3 ledger live, returned" \
	"$(item_field ledger.live 3):$(item_field ledger.returned 3)" "3:1"
expect_eq "books: units refunded back on sale" "$(metric seckill_units_refunded_total)" 3
expect_eq "books: no anomaly" "$(metric seckill_control_anomalies_total)" 0
check "export: backlog 0 (30 s)" wait_metric seckill_export_backlog -eq 0 30
kafka_consume seckill.events "$tmp/events.json" || bad "consume seckill.events"
itpy payments_check events "$tmp/events.json" >"$tmp/events.sum"
cat "$tmp/events.sum"
expect_eq "export: well-formed, keyed by order" "$(pc 'd["bad"]'):$(pc 'd["key_mismatch"]')" "0:0"
expect_eq "export: one refunded event per refunded line, with its request" \
	"$(pc "sorted(d['refunded'].items())")" \
	"$(python3 -c "import sys; print(sorted({sys.argv[1]: [[1, 1, 'r-a1']], sys.argv[2]: [[1, 1, 'r-a2']], sys.argv[3]: [[3, 1, 'r-c1']]}.items()))" "${A[1]}" "${A[2]}" "${C[1]}")"
expect_eq "export: one pay_conflict per late payment, with its request" \
	"$(pc "sorted(d['pay_conflict'].items())")" \
	"$(python3 -c "import sys; print(sorted({sys.argv[1]: [[2, 1, 'pay-b3']], sys.argv[2]: [[2, 1, 'pay-b4']]}.items()))" "${B[3]}" "${B[4]}")"
expect_eq "export: one pay_rejected event (partition, reason, key; nothing of the message)" \
	"$(pc "[(p, r, k, f) for p, o, r, k, f in d['pay_rejected']]")" \
	"[(0, 'unsigned', 'payments:0', ['offset', 'order', 'partition', 'reason', 'seq', 'time_ns', 'type', 'v'])]"
expect_eq "export: one paid event per paid order, with the first request" \
	"$(pc "sorted((o, r) for o, rs in d['paid'].items() for r in rs)")" \
	"$({
		for k in 1 2 3 4 5; do echo "${A[k]} pay-a$k"; done
		for k in 1 2; do echo "${B[k]} pay-b$k"; done
		for k in 1 2; do echo "${N[k]} pay-n$k"; done
		for k in 1 2 3; do echo "${C[k]} pay-c$k"; done
	} | python3 -c "import sys; print(sorted(tuple(l.split()) for l in sys.stdin))")"

# ------------------------------------------------------------------ 6. restart
"$SBX" control stop
check "restart: control plane started again" "$SBX" control start
publish "$(msg pay-a6 "${A[6]}" paid)" || bad "publish after the restart"
t=$SECONDS
check "restart: the new payment applied (60 s)" wait_state "${A[6]}" paid 60
echo "restart: the consumer rejoined its group and applied it in $((SECONDS - t)) s"
expect_eq "restart: counted once" "$(pm paid "done")" 1
expect_eq "restart: nothing before it applied or counted again (the refusal's offset was committed)" \
	"$(pm paid already):$(pm paid conflict):$(pm refund "done"):$(metric seckill_payments_duplicates_total):$(metric 'seckill_payments_rejected_total{reason="unsigned"}')" \
	"0:0:0:0:0"
check "restart: reconcile" reconcile

# ------------------------------------------------------------------ 7. MariaDB
check "mysql: mariadbd started" db_start
check "mysql: writer started, reading both topics from the start" writer_start
check "mysql: the last payment reached MariaDB (60 s)" \
	wait_sql seckill "SELECT state FROM orders WHERE id = ${A[6]}" paid 60
check "mysql: verify: LMDB and MariaDB equal per item (30 s)" wait_verify 30
expect_eq "mysql: orders by state" \
	"$(sql seckill "SELECT GROUP_CONCAT(CONCAT(state, ':', n) ORDER BY state) FROM
		(SELECT state, COUNT(*) AS n FROM orders GROUP BY state) s")" \
	"confirmed:3,paid:10,cancelled:2,refunded:3"
expect_eq "mysql: refunded units by item" \
	"$(sql seckill "SELECT GROUP_CONCAT(CONCAT(item_id, ':', r) ORDER BY item_id) FROM
		(SELECT item_id, SUM(refunded) AS r FROM order_lines GROUP BY item_id) s")" \
	"1:2,2:0,3:1"
expect_eq "mysql: the late payments recorded as conflicts" \
	"$(sql seckill "SELECT GROUP_CONCAT(request ORDER BY request) FROM order_events
		WHERE type = 'pay_conflict'")" "pay-b3,pay-b4"
expect_eq "mysql: per-user limits and names from the activity events (item 1 comes from the config: no name)" \
	"$(sql seckill "SELECT GROUP_CONCAT(CONCAT(id, ':', per_user_limit, ':', name) ORDER BY id)
		FROM items")" "1:1:,2:1:race,3:3:parts"
expect_eq "mysql: no guard refusal, nothing parked" \
	"$(wmetric 'seckill_mysql_guard_refusals_total{guard="stock"}'):$(wmetric 'seckill_mysql_guard_refusals_total{guard="user"}'):$(wmetric seckill_mysql_parked)" \
	"0:0:0"
writer_stop TERM
expect_eq "mysql: writer stops on SIGTERM with status 0" "$W_RC" 0
logs_check "$tmp/writer.log"

echo "payments test: $((SECONDS - T0)) s"
finish
