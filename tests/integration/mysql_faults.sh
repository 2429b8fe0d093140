#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# mysql_faults.sh - seckill-mysql-writer when MariaDB refuses to write, and
# a parked table of more than 10,000 rows (issue 26 items 9 and 10,
# docs/mysql.md "Faults" and "Parked for good"). Debian's MariaDB in a
# temporary datadir (scripts/lib/mariadb.sh), the seckill-kafka broker,
# hand-made messages on topics of their own; no appliance.
#
#  1. stall: a trigger on orders makes MariaDB answer 1114 (table full),
#     then 1836 (read-only), 1041 (out of memory), 1047 mid-stream: the
#     writer stalls and retries the same batch (seckill_mysql_stalled,
#     batch retries, one log line a second at most), skips nothing; a
#     second writer with --max-seconds 6 stops on time while stalled;
#     once lifted every order lands;
#  2. a message's own data (a CHECK constraint it breaks, 4025): parked
#     for good with reason sql, the orders after it flow; requeued by the
#     operator once the constraint is gone, it is applied;
#  3. 10,000 parked rows that stay blocked (payments of orders that never
#     come) ahead of 3 orders waiting for their item: the item arrives and
#     the 3 orders are applied (the retries page past the first 10,000);
#  4. with --park-final-seconds 1 only a row waiting for its item becomes
#     final (gauges, the counter, the log): the 10,000 payments (reason
#     order) stay retried, and one is applied by itself when its order
#     comes late; an order's later events wait behind its final row
#     (reason behind, not final), also when that row is a paid refused
#     for its data (sql), and the operator's requeue applies them all;
#  5. a message of another version ("v":2, a newer exporter) stalls the
#     writer (never skipped: its offset is not committed, a restarted
#     writer stalls on it again).
# Every wait is bounded and on a condition; every process is stopped by its
# PID on every exit path.
. "$(dirname "$0")/lib.sh"
[ "$(id -u)" = 0 ] || skip "needs root (mariadbd as root in a scratch datadir)"
require_tools curl SK_KAFKA SK_MYSQL_WRITER mariadbd mariadb-install-db mariadb mariadb-admin
# shellcheck source=lib/kafka.sh
. "$IT_DIR/lib/kafka.sh"
# shellcheck source=lib/mariadb.sh
. "$IT_DIR/lib/mariadb.sh"

tmp=$(mktemp -d)
MPORT=$((17000 + $$ % 1000))
SOCK=$tmp/db.sock
T0=$SECONDS
W2_PID=

faults_cleanup() {
	if [ "$FAILS" != 0 ]; then
		echo "--- writer log (last lines)"
		tail -n 20 "$tmp/writer.log" 2>/dev/null || true
		echo "--- mariadbd log (last lines)"
		tail -n 10 "$tmp/db.err" 2>/dev/null || true
	fi
	[ -z "$W2_PID" ] || stop_pid KILL "$W2_PID" || true
	writer_stop KILL
	db_stop KILL
	kafka_down
	rm_tmp
}
at_exit faults_cleanup

fs() {
	sql fs "$1"
}

# order SEQ ID USER ITEM - a confirmed order of one unit, as KEY=VALUE.
order() {
	printf '%s={"v":1,"type":"confirmed","units":1,"time_ns":1000,"seq":%s,"order":"%s","user":%s,"lines":[{"line":0,"item":%s,"price":500,"qty":1}]}' \
		"$2" "$1" "$2" "$3" "$4"
}

# activity SEQ ITEM TOTAL - an item's activity event, as KEY=VALUE.
activity() {
	printf 'item:%s={"v":1,"seq":%s,"type":"activity","order":null,"user":0,"item":%s,"units":%s,"time_ns":10,"name":"faults","price":500}' \
		"$2" "$1" "$2" "$3"
}

# wait_log PATTERN SECONDS - until the writer's log has PATTERN (grep -E).
wait_log() {
	local end=$((SECONDS + $2))
	while [ "$SECONDS" -lt "$end" ]; do
		grep -Eq "$1" "$tmp/writer.log" && return 0
		sleep 0.2
	done
	echo "wait_log: no '$1' in the writer's log"
	return 1
}

# wait_wmetric_eq NAME WANT SECONDS - until the writer's NAME is WANT.
wait_wmetric_eq() {
	local end=$((SECONDS + $3))
	while [ "$SECONDS" -lt "$end" ]; do
		[ "$(wmetric "$1")" = "$2" ] && return 0
		sleep 0.2
	done
	echo "wait_wmetric_eq: $1 is '$(wmetric "$1")', want $2"
	return 1
}

check "mariadbd up on $SOCK" db_start
kafka_up "$tmp" fs.orders fs.events fs2.orders fs2.events || {
	cat "$tmp/kafka.log"
	bad "broker up"
	finish
	exit 1
}
ok "broker up: $KAFKA_BOOTSTRAP"
W=(--database fs --group fs --orders-topic fs.orders --events-topic fs.events)

# ------------------------------------------------------------------ 1. stall
check "stall: writer started (database fs)" writer_start "${W[@]}" --batch 5
produce fs.events "$(activity 1 8 1000)" || bad "stall: produce the activity"
produce fs.orders "$(order 2 1 11 8)" "$(order 3 2 12 8)" "$(order 4 3 13 8)" ||
	bad "stall: produce orders 1..3"
check "stall: orders 1..3 written (30 s)" wait_sql fs "SELECT COUNT(*) FROM orders" 3 30
# The fault: every INSERT into orders fails with the errno in table fault.
fs "CREATE TABLE fault (errno INT NOT NULL)" || bad "stall: table fault"
mariadb --no-defaults --socket="$SOCK" -uroot fs <<'SQL' || bad "stall: trigger"
DELIMITER //
CREATE TRIGGER orders_fault BEFORE INSERT ON orders FOR EACH ROW
BEGIN
	DECLARE e INT DEFAULT NULL;
	SELECT MAX(errno) INTO e FROM fault;
	IF e IS NOT NULL THEN
		SIGNAL SQLSTATE 'HY000' SET MYSQL_ERRNO = e, MESSAGE_TEXT = 'injected fault';
	END IF;
END//
DELIMITER ;
SQL
fs "INSERT INTO fault VALUES (1114)" || bad "stall: fault 1114"
produce fs.orders "$(order 5 4 14 8)" "$(order 6 5 15 8)" "$(order 7 6 16 8)" \
	"$(order 8 7 17 8)" "$(order 9 8 18 8)" || bad "stall: produce orders 4..8"
check "stall: 1114 (table full) stalls the writer (20 s)" wait_wmetric_eq seckill_mysql_stalled 1 20
check "stall: the retry is logged with errno 1114 (20 s)" wait_log 'retrying.* errno=1114 ' 20
for e in 1836 1041 1047; do
	fs "UPDATE fault SET errno = $e" || bad "stall: fault $e"
	check "stall: errno $e keeps the writer retrying (20 s)" wait_log "retrying.* errno=$e " 20
done
expect_eq "stall: nothing written, skipped or parked meanwhile (orders, sql_error, malformed, parked)" \
	"$(fs "SELECT COUNT(*) FROM orders"):$(wmetric 'seckill_mysql_messages_total{result="sql_error"}'):$(wmetric 'seckill_mysql_messages_total{result="malformed"}'):$(fs "SELECT COUNT(*) FROM parked")" \
	"3:0:0:0"
retries=$(wmetric seckill_mysql_batch_retries_total)
check "stall: batches retried ($retries) and counted" test "${retries:-0}" -ge 4
lines=$(grep -c 'batch rolled back: retrying' "$tmp/writer.log" || true)
check "stall: at most one retry line a second ($lines lines for $retries retries)" \
	test "$lines" -le "$((SECONDS - T0 + 1))"
# --max-seconds while stalled: a second writer (another group) stalls on
# the same fault and still stops after 6 s.
t1=$SECONDS
"$SK_MYSQL_WRITER" run --socket "$SOCK" --bootstrap "$KAFKA_BOOTSTRAP" "${W[@]}" \
	--group fs-max --max-seconds 6 </dev/null >"$tmp/writer2.log" 2>&1 &
W2_PID=$!
rc=0
stop_wait=$((SECONDS + 30))
while kill -0 "$W2_PID" 2>/dev/null && [ "$SECONDS" -lt "$stop_wait" ]; do sleep 0.2; done
stop_pid KILL "$W2_PID" || rc=$?
W2_PID=
expect_eq "stall: a writer with --max-seconds 6 stops while stalled, status 0" "$rc" 0
check "stall: it stopped within 20 s ($((SECONDS - t1)) s)" test $((SECONDS - t1)) -le 20
check "stall: it stalled (a retry logged)" grep -q 'batch rolled back: retrying' "$tmp/writer2.log"
check "stall: it stopped on max-seconds" grep -q 'why=max-seconds' "$tmp/writer2.log"
fs "DROP TRIGGER orders_fault" || bad "stall: drop the trigger"
check "stall: once lifted, every order lands: 8 (30 s)" \
	wait_sql fs "SELECT GROUP_CONCAT(id ORDER BY id) FROM orders" "1,2,3,4,5,6,7,8" 30
check "stall: seckill_mysql_stalled back to 0 (10 s)" wait_wmetric_eq seckill_mysql_stalled 0 10
check "stall: the writer logged the commit after retries" grep -q 'batch committed after retries' "$tmp/writer.log"

# ------------------------------------------------------------------ 2. park sql
fs "ALTER TABLE orders ADD CONSTRAINT no_666 CHECK (user_id <> 666)" || bad "sql: constraint"
produce fs.orders "$(order 10 9 666 8)" "$(order 11 10 20 8)" || bad "sql: produce orders 9, 10"
check "sql: order 10 written after order 9 (30 s)" \
	wait_sql fs "SELECT COUNT(*) FROM orders WHERE id = 10" 1 30
expect_eq "sql: order 9 parked for good, reason sql (reason, final, refused)" \
	"$(fs "SELECT CONCAT_WS(':', seq, reason, final, refused) FROM parked")" "10:sql:1:1"
check "sql: counted as sql_error, gauges sql 1, final 1 (10 s)" \
	wait_wmetric_eq 'seckill_mysql_parked_rows{reason="sql"}' 1 10
expect_eq "sql: sql_error, parked_final, parked_for_good_total" \
	"$(wmetric 'seckill_mysql_messages_total{result="sql_error"}'):$(wmetric seckill_mysql_parked_final):$(wmetric seckill_mysql_parked_for_good_total)" \
	"1:1:1"
check "sql: logged with errno 4025" grep -q 'seq=10 .*errno=4025 ' "$tmp/writer.log"
fs "ALTER TABLE orders DROP CONSTRAINT no_666" || bad "sql: drop the constraint"
fs "UPDATE parked SET final = 0, refused = 0 WHERE reason = 'sql'" || bad "sql: requeue"
check "sql: requeued by the operator, order 9 is applied (30 s)" \
	wait_sql fs "SELECT CONCAT((SELECT COUNT(*) FROM orders WHERE id = 9), '/', COUNT(*)) FROM parked" "1/0" 30
writer_stop TERM
expect_eq "sql: writer stops on SIGTERM with status 0" "$W_RC" 0

# ------------------------------------------------------------------ 3. > 10,000 parked
# 10,000 payments of orders that never come, parked by an earlier run
# (seq 100001..110000), ahead of 3 orders of item 9 (no activity yet).
fs "INSERT INTO parked (seq, reason, payload, refused, parked_ns, type, order_id)
	SELECT 100000 + seq, 'order', CONCAT('{\"v\":1,\"seq\":', 100000 + seq, ',\"type\":\"paid\",\"order\":\"', 2000000 + seq, '\",\"user\":1,\"item\":9,\"units\":1,\"time_ns\":1}'),
	0, UNIX_TIMESTAMP() * 1000000000, 'paid', 2000000 + seq FROM seq_1_to_10000" ||
	bad "10k: insert 10,000 parked rows"
expect_eq "10k: 10,000 rows parked" "$(fs "SELECT COUNT(*) FROM parked")" 10000
check "10k: writer started again" writer_start "${W[@]}"
produce fs.orders "$(order 200001 11 31 9)" "$(order 200002 12 32 9)" "$(order 200003 13 33 9)" ||
	bad "10k: produce orders 11..13"
check "10k: the 3 orders parked beyond the first 10,000 rows (60 s)" \
	wait_sql fs "SELECT COUNT(*) FROM parked WHERE seq > 200000" 3 60
produce fs.events "$(activity 20 9 10)" || bad "10k: produce item 9's activity"
check "10k: the 3 orders beyond the first 10,000 parked rows are applied (120 s)" \
	wait_sql fs "SELECT CONCAT(COUNT(*), '/', (SELECT COUNT(*) FROM parked)) FROM orders WHERE id BETWEEN 11 AND 13" \
	"3/10000" 120
check "10k: seckill_mysql_parked_rows{reason=\"order\"} 10000 (10 s)" \
	wait_wmetric_eq 'seckill_mysql_parked_rows{reason="order"}' 10000 10
expect_eq "10k: none final yet (--park-final-seconds 300 by default)" \
	"$(fs "SELECT COUNT(*) FROM parked WHERE final = 1"):$(wmetric seckill_mysql_parked_final)" "0:0"
writer_stop TERM
expect_eq "10k: writer stopped" "$W_RC" 0

# ------------------------------------------------------------------ 4. final
# paid SEQ ORDER - a payment event, as KEY=VALUE.
paid() {
	printf '%s={"v":1,"seq":%s,"type":"paid","order":"%s","user":1,"item":8,"units":1,"time_ns":2000}' \
		"$2" "$1" "$2"
}
check "final: writer started with --park-final-seconds 1" \
	writer_start "${W[@]}" --park-final-seconds 1
produce fs.orders "$(order 400001 50 51 77)" || bad "final: produce order 50 of item 77"
check "final: order 50, whose item 77 never comes, becomes final once caught up (120 s)" \
	wait_sql fs "SELECT CONCAT_WS(':', reason, final, refused) FROM parked WHERE seq = 400001" \
	"item:1:1" 120
# Three more batches: each retries the 10,000 payments, caught up, long
# after --park-final-seconds.
b0=$(wmetric seckill_mysql_batches_total)
b_end=$((SECONDS + 120))
while [ "$(wmetric seckill_mysql_batches_total)" -lt $((b0 + 3)) ] && [ "$SECONDS" -lt "$b_end" ]; do
	sleep 0.2
done
check "final: 3 more batches retried the parked rows (120 s)" \
	test "$(wmetric seckill_mysql_batches_total)" -ge $((b0 + 3))
expect_eq "final: the 10,000 payments (reason order) stay retried: none final" \
	"$(fs "SELECT CONCAT(COUNT(*), '/', SUM(final)) FROM parked WHERE reason = 'order'")" "10000/0"
check "final: gauge seckill_mysql_parked_final 1 (10 s)" wait_wmetric_eq seckill_mysql_parked_final 1 10
expect_eq "final: counted once, by-reason gauge item 1" \
	"$(wmetric seckill_mysql_parked_for_good_total):$(wmetric 'seckill_mysql_parked_rows{reason="item"}')" "1:1"
check "final: logged with its reason" grep -q 'seq=400001 reason=item .*parked for good' "$tmp/writer.log"
# The order of the first payment comes late: the payment is applied by itself.
produce fs.orders "$(order 300000 2000001 41 9)" || bad "final: produce order 2000001"
check "final: order 2000001 comes late, its parked payment is applied, no requeue (60 s)" \
	wait_sql fs "SELECT CONCAT(state, '/', (SELECT COUNT(*) FROM parked WHERE reason = 'order')) FROM orders WHERE id = 2000001" \
	"paid/9999" 60
# Order 50's payment waits behind its final row; so does order 60's refund
# behind its payment that MariaDB refused (reason sql, final).
produce fs.orders "$(order 400010 60 61 8)" || bad "final: produce order 60"
check "final: order 60 written (30 s)" wait_sql fs "SELECT state FROM orders WHERE id = 60" confirmed 30
fs "ALTER TABLE orders ADD CONSTRAINT no_pay_60 CHECK (state <> 'paid' OR id <> 60)" ||
	bad "final: constraint no_pay_60"
produce fs.events "$(paid 400002 50)" "$(paid 400011 60)" \
	'60={"v":1,"seq":400012,"type":"refunded","order":"60","user":61,"item":8,"units":1,"time_ns":3000,"request":"F1"}' ||
	bad "final: produce the payments of 50, 60 and the refund of 60"
check "final: both later events wait behind a final row of their order, not final (30 s)" \
	wait_sql fs "SELECT GROUP_CONCAT(CONCAT_WS(':', seq, reason, final) ORDER BY seq) FROM parked WHERE order_id IN (50, 60)" \
	"400001:item:1,400002:behind:0,400011:sql:1,400012:behind:0" 30
expect_eq "final: order 60 unchanged, the refund not refused" \
	"$(fs "SELECT CONCAT(state, '/', (SELECT COUNT(*) FROM order_events WHERE outcome = 'refused')) FROM orders WHERE id = 60")" \
	"confirmed/0"
# The operator: item 77's activity produced, the constraint dropped, the
# final rows requeued: everything behind them follows.
produce fs.events "$(activity 400000 77 10)" || bad "final: produce item 77's activity"
check "final: item 77 written (30 s)" wait_sql fs "SELECT COUNT(*) FROM items WHERE id = 77" 1 30
fs "ALTER TABLE orders DROP CONSTRAINT no_pay_60" || bad "final: drop no_pay_60"
fs "UPDATE parked SET final = 0, refused = 0 WHERE final = 1" || bad "final: requeue"
check "final: requeued, order 50 paid, order 60 paid then refunded (60 s)" \
	wait_sql fs "SELECT CONCAT(GROUP_CONCAT(state ORDER BY id), '/', (SELECT COUNT(*) FROM parked WHERE order_id IN (50, 60))) FROM orders WHERE id IN (50, 60)" \
	"paid,refunded/0" 60
writer_stop TERM
expect_eq "final: writer stopped" "$W_RC" 0

# ------------------------------------------------------------------ 5. version
W5=(--database fs2 --group fs2 --orders-topic fs2.orders --events-topic fs2.events)
check "version: writer started (database fs2)" writer_start "${W5[@]}"
produce fs2.events "$(activity 1 8 100)" || bad "version: produce the activity"
produce fs2.orders "$(order 2 1 11 8)" || bad "version: produce order 1"
check "version: order 1 written (30 s)" wait_sql fs2 "SELECT COUNT(*) FROM orders" 1 30
produce fs2.orders "$(order 3 2 12 8 | sed 's/"v":1/"v":2/')" "$(order 4 3 13 8)" ||
	bad "version: produce order 2 (v 2) and order 3"
check "version: a \"v\":2 order stalls the writer (20 s)" wait_wmetric_eq seckill_mysql_stalled 1 20
check "version: the retry says why (20 s)" \
	wait_log 'retrying.* err="version 2, this writer reads 1: upgrade the writer" errno=0 ' 20
expect_eq "version: nothing skipped or written past it (malformed, unknown type, orders)" \
	"$(wmetric 'seckill_mysql_messages_total{result="malformed"}'):$(wmetric 'seckill_mysql_messages_total{result="unknown_type"}'):$(sql fs2 "SELECT COUNT(*) FROM orders")" \
	"0:0:1"
writer_stop TERM
expect_eq "version: a stalled writer stops on SIGTERM, status 0" "$W_RC" 0
check "version: started again, the same group" writer_start "${W5[@]}"
check "version: it stalls on the same message again: its offset was not committed (20 s)" \
	wait_wmetric_eq seckill_mysql_stalled 1 20
expect_eq "version: still 1 order" "$(sql fs2 "SELECT COUNT(*) FROM orders")" 1
writer_stop TERM
expect_eq "version: writer stopped" "$W_RC" 0
check "logs: the writer's lines are logfmt" itpy logfmt_check --prog seckill-mysql-writer "$tmp/writer.log"
echo "mysql_faults test: $((SECONDS - T0)) s"
finish
