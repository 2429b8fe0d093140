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
#  4. the 10,000 become final with --park-final-seconds 1 (gauges, the
#     counter); one requeued by the operator after its order came is
#     applied.
# Every wait is bounded and on a condition; every process is stopped by its
# PID on every exit path.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/mysql_lib.sh"
[ "$(id -u)" = 0 ] || skip "needs root (mariadbd as root in a scratch datadir)"
command -v curl >/dev/null || skip "needs curl"
[ -x "${SK_KAFKA:-}" ] || skip "SK_KAFKA is not an executable (run through meson test)"
[ -x "${SK_MYSQL_WRITER:-}" ] || skip "SK_MYSQL_WRITER is not an executable (run through meson test)"
for t in mariadbd mariadb-install-db mariadb mariadb-admin; do
	command -v "$t" >/dev/null || skip "needs $t (Debian: mariadb-server, mariadb-client)"
done

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

# produce TOPIC KEY=VALUE... - hand-made messages.
produce() {
	local topic=$1
	shift
	"$SK_KAFKA" produce --bootstrap "$KAFKA_BOOTSTRAP" --topic "$topic" "$@" >/dev/null
}

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
kafka_up "$tmp" fs.orders fs.events || {
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
check "final: writer started with --park-final-seconds 1" \
	writer_start "${W[@]}" --park-final-seconds 1
check "final: the 10,000 rows become final once caught up (120 s)" \
	wait_wmetric_eq seckill_mysql_parked_final 10000 120
expect_eq "final: in the table, the counter, the by-reason gauge" \
	"$(fs "SELECT COUNT(*) FROM parked WHERE final = 1 AND refused = 1"):$(wmetric seckill_mysql_parked_for_good_total):$(wmetric 'seckill_mysql_parked_rows{reason="order"}')" \
	"10000:10000:10000"
check "final: logged, summed up per batch" grep -q 'parked for good in one batch' "$tmp/writer.log"
# The order of the first payment comes after all; the operator requeues it.
produce fs.orders "$(order 300000 2000001 41 9)" || bad "final: produce order 2000001"
check "final: order 2000001 written (30 s)" \
	wait_sql fs "SELECT state FROM orders WHERE id = 2000001" confirmed 30
expect_eq "final: its final payment is not retried by itself" \
	"$(fs "SELECT final FROM parked WHERE order_id = 2000001")" 1
fs "UPDATE parked SET final = 0, refused = 0 WHERE order_id = 2000001" || bad "final: requeue"
check "final: requeued, the payment is applied (30 s)" \
	wait_sql fs "SELECT CONCAT(state, '/', (SELECT COUNT(*) FROM parked)) FROM orders WHERE id = 2000001" \
	"paid/9999" 30
writer_stop TERM
expect_eq "final: writer stopped" "$W_RC" 0
check "logs: the writer's lines are logfmt" itpy logfmt_check --prog seckill-mysql-writer "$tmp/writer.log"
echo "mysql_faults test: $((SECONDS - T0)) s"
finish
