#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# mysql_batch.sh - seckill-mysql-writer's runs of orders (docs/mysql.md,
# "Statements, runs and transactions"): consecutive confirmed orders of a
# batch are written with multi-row statements, and a run that does not
# land whole is rolled back to its savepoint and applied one by one.
# Debian's MariaDB in a temporary datadir (scripts/lib/mariadb.sh), the
# seckill-kafka broker, hand-made messages put on the topics before the
# writer starts (so that they come in one poll, one batch); no appliance.
#
#  1. one batch of 40 orders where one breaks a CHECK constraint (reason
#     sql) and one takes a per-user slot already taken (reason user): those
#     two are parked, the 38 others land, with their event rows, lines and
#     units sold;
#  2. (the parked rows deleted) a batch of 30 orders where the 15th fails
#     with 1114 (table full): the writer stalls and nothing of the batch is
#     committed (orders, events, lines, units); killed -9 while stalled and
#     started again once the fault is gone, it applies the 30 orders: their
#     offsets were never committed;
#  3. a batch of 20 orders of an item not written yet, then its activity:
#     the first is parked for its item and the 19 others behind it (the
#     order barrier), then the 20 are applied once the item comes;
#  4. every item event (removed, paused, extended, closed, restocked,
#     resumed) writes its columns.
# Every wait is bounded and on a condition; every process is stopped by its
# PID on every exit path.
. "$(dirname "$0")/lib.sh"
[ "$(id -u)" = 0 ] || skip "needs root (mariadbd as root in a scratch datadir)"
require_tools curl SK_KAFKA SK_MYSQL_WRITER SK_SECKILLCTL mariadbd mariadb-install-db mariadb mariadb-admin
# shellcheck source=lib/kafka.sh
. "$IT_DIR/lib/kafka.sh"
# shellcheck source=lib/mariadb.sh
. "$IT_DIR/lib/mariadb.sh"

tmp=$(mktemp -d)
MPORT=$((17000 + $$ % 1000))
SOCK=$tmp/db.sock
T0=$SECONDS

batch_cleanup() {
	mysql_fail_logs
	writer_stop KILL
	db_stop KILL
	kafka_down
	rm_tmp
}
at_exit batch_cleanup

mb() {
	sql mb "$1"
}

# orders FIRST LAST [USER_OF_ID=USER] - confirmed orders FIRST..LAST of one
# unit of item 8 (seq = 1000 + id, user = 100 + id unless given), as
# KEY=VALUE lines.
orders() {
	awk -v a="$1" -v b="$2" -v o="${3:-0=0}" -v item="${4:-8}" 'BEGIN {
		split(o, kv, "=")
		for (i = a; i <= b; i++) {
			u = (i == kv[1]) ? kv[2] : 100 + i
			printf "%d={\"v\":1,\"type\":\"confirmed\",\"units\":1,\"time_ns\":1000,\"seq\":%d,\"order\":\"%d\",\"user\":%d,\"client_ip\":\"198.18.0.9\",\"lines\":[{\"line\":0,\"item\":%d,\"price\":500,\"qty\":1}]}\n", i, 1000 + i, i, u, item
		}
	}'
}

# state - orders:order_events:order_lines:units sold of item 8:parked rows.
state() {
	mb "SELECT CONCAT_WS(':', (SELECT COUNT(*) FROM orders), (SELECT COUNT(*) FROM order_events),
		(SELECT COUNT(*) FROM order_lines), (SELECT sold FROM items WHERE id = 8),
		(SELECT COUNT(*) FROM parked))"
}

# The writer's settings in the appliance's file: migrate reads it alone,
# run gets the harness's socket, broker and metrics port as options too.
printf '[mysql]\nsocket = %s\ndatabase = mb\ngroup = mb\n[kafka]\norders_topic = mb.orders\nevents_topic = mb.events\n' \
	"$SOCK" >"$tmp/writer.ini"
W=(--config "$tmp/writer.ini")

check "mariadbd up on $SOCK" db_start
kafka_up "$tmp" mb.orders mb.events || {
	cat "$tmp/kafka.log"
	bad "broker up"
	finish
	exit 1
}
ok "broker up: $KAFKA_BOOTSTRAP"
check "config check --for mysql-writer: the writer's file is good" \
	"$SK_SECKILLCTL" config check "$tmp/writer.ini" --for mysql-writer
check "schema applied (migrate --config, the file alone)" "$SK_MYSQL_WRITER" migrate --config "$tmp/writer.ini"
# An orders table made before IPv6 (client_ip VARCHAR(15)), with a row:
# migrate widens the column in place, keeps the row, and run again changes
# nothing.
mb "ALTER TABLE orders MODIFY COLUMN client_ip VARCHAR(15) NULL" || bad "narrow client_ip"
mb "INSERT INTO orders VALUES (999999, 1, 'confirmed', 1, 1, '198.18.0.7', 1, 1, 1, 1, 1)" ||
	bad "an old order row"
check "migrate widens an old client_ip" "$SK_MYSQL_WRITER" migrate --socket "$SOCK" --database mb
check "migrate again (idempotent)" "$SK_MYSQL_WRITER" migrate --socket "$SOCK" --database mb
expect_eq "client_ip widened for IPv6 text, the old row kept" \
	"$(mb "SELECT CONCAT_WS(':', (SELECT COLUMN_TYPE FROM information_schema.COLUMNS
		WHERE TABLE_SCHEMA = 'mb' AND TABLE_NAME = 'orders' AND COLUMN_NAME = 'client_ip'),
		(SELECT client_ip FROM orders WHERE id = 999999))")" \
	"varchar(45):198.18.0.7"
mb "DELETE FROM orders WHERE id = 999999" || bad "drop the old order row"
# The item is written by hand, so that the orders do not wait for an event
# of the other topic; orders with user 666 break a CHECK constraint.
mb "INSERT INTO items (id, name, total, per_user_limit) VALUES (8, 'batch', 1000, 1)" ||
	bad "item 8"
mb "ALTER TABLE orders ADD CONSTRAINT no_666 CHECK (user_id <> 666)" || bad "constraint"

# ------------------------------------------------------------------ 1. one bad row
# order 27's user is order 26's (126): the per-user guard refuses it
mapfile -t msgs < <(orders 1 40 13=666 | awk -F= '$1 == 27 { sub(/"user":127/, "\"user\":126") } 1')
produce mb.orders "${msgs[@]}" || bad "park: produce orders 1..40"
check "park: writer started" writer_start "${W[@]}"
check "park: 38 orders land (30 s)" wait_sql mb "SELECT COUNT(*) FROM orders" 38 30
check "park: 2 rows parked (10 s)" wait_sql mb "SELECT COUNT(*) FROM parked" 2 10
expect_eq "park: orders 13 and 27 are the ones missing" \
	"$(mb "SELECT COUNT(*) FROM orders WHERE id IN (13, 27)")" 0
expect_eq "park: the parked rows (seq, reason, final)" \
	"$(mb "SELECT GROUP_CONCAT(CONCAT_WS(':', seq, reason, final) ORDER BY seq) FROM parked")" \
	"1013:sql:1,1027:user:0"
expect_eq "park: orders:events:lines:sold:parked" "$(state)" "38:38:38:38:2"
expect_eq "park: the lines' one_per_user and the orders' client_ip" \
	"$(mb "SELECT CONCAT_WS(':', SUM(one_per_user), COUNT(DISTINCT client_ip), MIN(client_ip)) FROM order_lines JOIN orders ON orders.id = order_id")" \
	"38:1:198.18.0.9"
check "park: counted: 38 orders (10 s)" wait_wmetric seckill_mysql_orders_written_total 38 10
expect_eq "park: sql_error counted once" \
	"$(wmetric 'seckill_mysql_messages_total{result="sql_error"}')" 1
# the run that held them did not land whole: replayed one by one
check "park: a run replayed (10 s)" wait_wmetric seckill_mysql_runs_replayed_total 1 10
writer_stop TERM
expect_eq "park: writer stopped" "$W_RC" 0

# ------------------------------------------------------------------ 2. a stall mid-batch
# Runs are written only while nothing is parked (the order barrier): the
# operator deletes the two rows.
mb "DELETE FROM parked" || bad "stall: delete the parked rows"
mb "CREATE TABLE fault (id BIGINT UNSIGNED NOT NULL)" || bad "stall: table fault"
mariadb --no-defaults --socket="$SOCK" -uroot mb <<'SQL' || bad "stall: trigger"
DELIMITER //
CREATE TRIGGER orders_fault BEFORE INSERT ON orders FOR EACH ROW
BEGIN
	IF EXISTS (SELECT 1 FROM fault WHERE id = NEW.id) THEN
		SIGNAL SQLSTATE 'HY000' SET MYSQL_ERRNO = 1114, MESSAGE_TEXT = 'injected fault';
	END IF;
END//
DELIMITER ;
SQL
mb "INSERT INTO fault VALUES (55)" || bad "stall: fault on order 55"
mapfile -t msgs < <(orders 41 70)
produce mb.orders "${msgs[@]}" || bad "stall: produce orders 41..70"
check "stall: writer started" writer_start "${W[@]}"
check "stall: order 55 stalls the writer (20 s)" wait_wmetric seckill_mysql_stalled 1 20
check "stall: retried (20 s)" wait_wmetric seckill_mysql_batch_retries_total 2 20
expect_eq "stall: nothing of the batch committed (orders:events:lines:sold:parked)" \
	"$(state)" "38:38:38:38:0"
writer_stop KILL
mb "DROP TRIGGER orders_fault" || bad "stall: drop the trigger"
check "stall: started again" writer_start "${W[@]}"
check "stall: the 30 orders land: their offsets were not committed (30 s)" \
	wait_sql mb "SELECT COUNT(*) FROM orders WHERE id BETWEEN 41 AND 70" 30 30
expect_eq "stall: orders:events:lines:sold:parked" "$(state)" "68:68:68:68:0"
# nothing parked any more: the restarted writer wrote them as runs
check "stall: written as runs (10 s)" wait_wmetric seckill_mysql_runs_total 1 10
writer_stop TERM
expect_eq "stall: writer stopped" "$W_RC" 0

# ------------------------------------------------------------------ 3. an item not written
mapfile -t msgs < <(orders 71 90 0=0 9)
produce mb.orders "${msgs[@]}" || bad "item: produce orders 71..90 of item 9"
check "item: writer started" writer_start "${W[@]}"
check "item: the 20 orders parked (30 s)" wait_sql mb "SELECT COUNT(*) FROM parked" 20 30
expect_eq "item: the first for its item, the others behind it (the order barrier)" \
	"$(mb "SELECT GROUP_CONCAT(DISTINCT CONCAT_WS(':', reason, final) ORDER BY seq) FROM parked")" \
	"item:0,behind:0"
produce mb.events 'item:9={"v":1,"seq":2000,"type":"activity","order":null,"user":0,"item":9,"units":100,"time_ns":10,"name":"late"}' ||
	bad "item: produce item 9's activity"
check "item: then applied once the item comes (30 s)" \
	wait_sql mb "SELECT CONCAT_WS(':', COUNT(*), (SELECT sold FROM items WHERE id = 9)) FROM orders WHERE id BETWEEN 71 AND 90" "20:20" 30
check "item: the parked table is empty again (10 s)" wait_sql mb "SELECT COUNT(*) FROM parked" 0 10

# ------------------------------------------------------------------ 4. item events
ev() {
	printf 'item:8={"v":1,"seq":%s,"type":"%s","order":null,"user":0,"item":8,"units":%s,"time_ns":%s%s}' "$@"
}
produce mb.events "$(ev 3001 removed 5 3001 '')" "$(ev 3002 paused 0 3002 '')" \
	"$(ev 3003 extended 0 3003 ',"end_ns":99999')" "$(ev 3004 closed 0 3004 '')" \
	"$(ev 3005 restocked 7 3005 '')" || bad "items: produce item 8's events"
check "items: removed, paused, extended, closed, restocked written (30 s)" \
	wait_sql mb "SELECT CONCAT_WS(':', removed, paused_ns, end_ns, closed_ns, added, updated_ns) FROM items WHERE id = 8" \
	"5:3002:99999:3004:7:3005" 30
produce mb.events "$(ev 3006 resumed 0 3006 '')" || bad "items: produce the resume"
check "items: resumed (30 s)" \
	wait_sql mb "SELECT CONCAT_WS(':', IFNULL(paused_ns, 'null'), updated_ns) FROM items WHERE id = 8" "null:3006" 30
writer_stop TERM
expect_eq "item: writer stopped" "$W_RC" 0
check "logs: the writer's lines are logfmt" itpy logfmt_check --prog seckill-mysql-writer "$tmp/writer.log"
echo "mysql_batch test: $((SECONDS - T0)) s"
finish
