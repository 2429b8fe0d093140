#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# mysql.sh - seckill-mysql-writer (mysql-writer, docs/mysql.md) with
# Debian's MariaDB (mariadb-install-db + mariadbd in a temporary datadir,
# unix socket only, --skip-networking, stopped by PID), the seckill-kafka
# broker on 127.0.0.1 and the appliance's sandbox (store, ack = durable,
# auth off, control plane with --kafka):
#
#  1. hand-made messages on topics of their own into database hm: orders
#     before their item's activity and events before their order (parked,
#     then applied), the stock guard (an order beyond total waits for the
#     restock), the per-user guard (a second live order waits for the
#     first one's cancel), partial then full refunds, a refund above the
#     units and one of an unpaid order (refused), a pay_conflict, a
#     duplicate, an unknown type and malformed values (skipped);
#  2. a sale of W1 units to 2,000 users and 5 payments: MariaDB holds
#     exactly the winners' orders with their users, the 5 paid, and
#     "verify" finds LMDB and MariaDB equal;
#  3. duplicate delivery: a second writer in a new group reads both topics
#     from the beginning; every message is a duplicate, no table changes;
#  4. MariaDB killed (kill -9) while a second wave is being written and
#     started again: the writer retries, nothing lost or doubled, verify;
#  5. the writer killed (kill -9) while a third wave is being written and
#     started again in the same group: nothing lost or doubled, verify.
# Every wait is bounded and on a condition; every process is stopped by its
# PID on every exit path.
. "$(dirname "$0")/lib.sh"
require_env curl SK_CROWD SK_CONTROL SK_KAFKA SK_MYSQL_WRITER
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
W1=300 W2=150 W3=100
export SK_SBX_ADMIN_PORT=$((18000 + $$ % 1000))
# shellcheck disable=SC2034 # read by lib.sh's item_field and orders_in_store
ADMIN=http://127.0.0.1:$SK_SBX_ADMIN_PORT
MPORT=$((17000 + $$ % 1000))
SOCK=$tmp/db.sock
T0=$SECONDS

mysql_cleanup() {
	if [ "$FAILS" != 0 ]; then
		echo "--- writer log (last lines)"
		tail -n 20 "$tmp/writer.log" 2>/dev/null || true
		echo "--- mariadbd log (last lines)"
		tail -n 10 "$tmp/db.err" 2>/dev/null || true
	fi
	writer_stop KILL
	db_stop KILL
	kafka_down
	rm_tmp
}
at_exit mysql_cleanup

# orders_match FILE - MariaDB's (id, user) of seckill.orders are exactly the
# "user order" lines of FILE.
orders_match() {
	awk '{ print $2 "\t" $1 }' "$1" | sort >"$tmp/want.tsv"
	sql seckill "SELECT id, user_id FROM orders" | sort >"$tmp/got.tsv"
	diff "$tmp/want.tsv" "$tmp/got.tsv" >"$tmp/orders.diff" || {
		head -n 5 "$tmp/orders.diff"
		return 1
	}
}

# checksum - a checksum of every table the writer fills in database seckill.
checksum() {
	sql "${1:-seckill}" "CHECKSUM TABLE items, orders, order_lines, order_events, parked EXTENDED" |
		awk '{ printf "%s ", $2 }'
}

ctl() {
	"$SBX" ctl "$@"
}

crowd() {
	sbx_exec taskset -c 0 "$SK_CROWD" --server "$SERVER" --item 1 --conns 32 \
		--timeout-ms 8000 --max-seconds 40 "$@"
}

# ------------------------------------------------------------------ MariaDB + broker
check "mariadbd up on $SOCK" db_start
kafka_up "$tmp" seckill.orders seckill.events hm.orders hm.events || {
	cat "$tmp/kafka.log"
	bad "broker up"
	finish
	exit 1
}
ok "broker up: $KAFKA_BOOTSTRAP"

# ------------------------------------------------------------------ 1. hand-made messages
# In phases, each waited for, so that what is parked and why is certain.
c='"v":1,"type":"confirmed","units":1,"time_ns":1000'
l='"line":0,"item":7,"price":500'
e='"item":7,"units":1'
hm() {
	sql hm "$1"
}
check "hand-made: writer started (database hm, group hm)" \
	writer_start --database hm --group hm --orders-topic hm.orders --events-topic hm.events
# A: three orders of item 7, whose activity is not there yet (the first
# waits for its item, the others behind it: the order barrier); two bad
# values (not JSON; seq 0 — a message of another "v" stalls the writer:
# mysql_faults.sh).
produce hm.orders \
	"1={$c,\"seq\":2,\"order\":\"1\",\"user\":11,\"lines\":[{$l,\"qty\":1}]}" \
	"2={$c,\"seq\":3,\"order\":\"2\",\"user\":12,\"lines\":[{$l,\"qty\":1}]}" \
	"3={$c,\"seq\":5,\"order\":\"3\",\"user\":13,\"lines\":[{$l,\"qty\":1}]}" \
	'x=not json' 'y={"v":1,"seq":0,"type":"confirmed"}' || bad "hand-made A: produce"
check "hand-made A: 3 orders parked: for their item, then behind the first (30 s)" \
	wait_sql hm "SELECT GROUP_CONCAT(CONCAT(seq, ':', reason) ORDER BY seq) FROM parked" \
	"2:item,3:behind,5:behind" 30
# B: the activity (total 3): the three orders are applied.
produce hm.events \
	'item:7={"v":1,"seq":1,"type":"activity","order":null,"user":0,"item":7,"units":3,"time_ns":10,"name":"hand made","price":500}' ||
	bad "hand-made B: produce"
check "hand-made B: the parked orders applied after the activity (30 s)" \
	wait_sql hm "SELECT CONCAT(COUNT(*), '/', (SELECT COUNT(*) FROM parked)) FROM orders" "3/0" 30
# C: user 12's second order (per-user guard: order 2 is live) and a 3-unit
# order (stock guard: 3 of 3 sold).
produce hm.orders \
	"4={$c,\"seq\":8,\"order\":\"4\",\"user\":12,\"lines\":[{$l,\"qty\":1}]}" \
	"5={\"v\":1,\"type\":\"confirmed\",\"units\":3,\"time_ns\":1,\"seq\":9,\"order\":\"5\",\"user\":15,\"lines\":[{$l,\"qty\":3}]}" ||
	bad "hand-made C: produce"
check "hand-made C: the guards park them (30 s)" \
	wait_sql hm "SELECT GROUP_CONCAT(CONCAT(seq, ':', reason) ORDER BY seq) FROM parked" \
	"8:user,9:stock" 30
check "hand-made C: guard refusals counted once final (stock, user; 30 s)" \
	wait_wmetric 'seckill_mysql_guard_refusals_total{guard="stock"}' 1 30
expect_eq "hand-made C: one each (stock, user)" \
	"$(wmetric 'seckill_mysql_guard_refusals_total{guard="stock"}'):$(wmetric 'seckill_mysql_guard_refusals_total{guard="user"}')" \
	"1:1"
# D: the events: pay 1, cancel 2 (frees user 12), restocks (free the stock),
# a cancel of the paid order 1 (refused), pay 5, refunds of 5 (1, then 5:
# above the units, refused, then 2: all refunded), a refund of the unpaid
# order 3 (refused), a pay_conflict, an unknown type, a pay of an order
# that never comes (parked for good).
produce hm.events \
	'1={"v":1,"seq":4,"type":"paid","order":"1","user":11,'"$e"',"time_ns":1100}' \
	'2={"v":1,"seq":6,"type":"cancelled","order":"2","user":12,'"$e"',"time_ns":1200}' \
	'item:7={"v":1,"seq":7,"type":"restocked","order":null,"user":0,"item":7,"units":1,"time_ns":1300}' \
	'1={"v":1,"seq":10,"type":"cancelled","order":"1","user":11,'"$e"',"time_ns":1400}' \
	'item:7={"v":1,"seq":11,"type":"restocked","order":null,"user":0,"item":7,"units":3,"time_ns":1500}' \
	'5={"v":1,"seq":12,"type":"paid","order":"5","user":15,"item":7,"units":3,"time_ns":1600}' \
	'5={"v":1,"seq":13,"type":"refunded","order":"5","user":15,"item":7,"units":1,"time_ns":1700,"request":"R1"}' \
	'5={"v":1,"seq":14,"type":"refunded","order":"5","user":15,"item":7,"units":5,"time_ns":1800,"request":"R2"}' \
	'5={"v":1,"seq":15,"type":"refunded","order":"5","user":15,"item":7,"units":2,"time_ns":1900,"request":"R3"}' \
	'3={"v":1,"seq":16,"type":"refunded","order":"3","user":13,"item":7,"units":1,"time_ns":2000,"request":"R4"}' \
	'2={"v":1,"seq":17,"type":"pay_conflict","order":"2","user":12,"item":7,"units":1,"time_ns":2100,"request":"P1"}' \
	'z={"v":1,"seq":18,"type":"teleported","order":"2"}' \
	'9={"v":1,"seq":19,"type":"paid","order":"999","user":1,"item":7,"units":1,"time_ns":2200}' ||
	bad "hand-made D: produce"
check "hand-made D: events 1..17 recorded, 19 parked (30 s)" \
	wait_sql hm "SELECT CONCAT(COUNT(*), '/', (SELECT GROUP_CONCAT(CONCAT(seq, ':', reason)) FROM parked)) FROM order_events" \
	"17/19:order" 30
expect_eq "hand-made D: orders and states" \
	"$(hm "SELECT GROUP_CONCAT(CONCAT(id, ':', state) ORDER BY id) FROM orders")" \
	"1:paid,2:cancelled,3:confirmed,4:confirmed,5:refunded"
# total 3, added 1 + 3; sold 1+1+1+1+3; returned 1 (cancel 2) + 1 + 2
# (refunds of 5); paid 1 (order 1) + 3 (order 5).
expect_eq "hand-made D: item 7 total/added/sold/returned/paid/name" \
	"$(hm "SELECT CONCAT_WS('/', total, added, sold, returned, paid, name) FROM items WHERE id = 7")" \
	"3/4/7/4/4/hand made"
expect_eq "hand-made D: refused events (cancel of a paid order, refund above the units, refund of an unpaid order)" \
	"$(hm "SELECT GROUP_CONCAT(seq ORDER BY seq) FROM order_events WHERE outcome = 'refused'")" \
	"10,14,16"
expect_eq "hand-made D: pay_conflict recorded, state unchanged" \
	"$(hm "SELECT CONCAT(e.outcome, '/', o.state) FROM order_events e JOIN orders o ON o.id = e.order_id WHERE e.seq = 17")" \
	"conflict/cancelled"
expect_eq "hand-made D: order 5's line refunded 3 of 3 and not live, order 2's not live" \
	"$(hm "SELECT GROUP_CONCAT(CONCAT(order_id, ':', refunded, '/', qty, '/', live) ORDER BY order_id) FROM order_lines WHERE order_id IN (2, 5)")" \
	"2:0/1/0,5:3/3/0"
# E: two messages again (a redelivery): nothing changes.
sum0=$(checksum hm)
produce hm.orders "3={$c,\"seq\":5,\"order\":\"3\",\"user\":13,\"lines\":[{$l,\"qty\":1}]}" ||
	bad "hand-made E: produce"
produce hm.events '5={"v":1,"seq":13,"type":"refunded","order":"5","user":15,"item":7,"units":1,"time_ns":1700,"request":"R1"}' ||
	bad "hand-made E: produce"
check "hand-made E: both seen as duplicates (30 s)" \
	wait_wmetric 'seckill_mysql_messages_total{result="duplicate"}' 2 30
expect_eq "hand-made E: no table changed" \
	"$(checksum hm)" "$sum0"
expect_eq "hand-made: malformed, unknown type, refund refusals, state conflicts, pay conflicts, parked" \
	"$(wmetric 'seckill_mysql_messages_total{result="malformed"}'):$(wmetric 'seckill_mysql_messages_total{result="unknown_type"}'):$(wmetric seckill_mysql_refund_refusals_total):$(wmetric seckill_mysql_state_conflicts_total):$(wmetric seckill_mysql_pay_conflicts_total):$(wmetric seckill_mysql_parked)" \
	"2:1:1:2:1:1"
writer_stop TERM
expect_eq "hand-made: writer stops on SIGTERM with status 0" "$W_RC" 0

# ------------------------------------------------------------------ 2. a sale
pay_key_file "$tmp/payments.key"
export SK_SBX_CONTROL_ARGS="--kafka $KAFKA_BOOTSTRAP --payments-key-file $tmp/payments.key"
cfg=$tmp/mysql.ini
sale_config "$cfg" $W1
sbx_up --config "$cfg" >/dev/null
check "sale: writer started (database seckill)" writer_start
rc=0
crowd --users 2000 --attempts 3000 --seed 1 --expect-units $W1 \
	--json "$tmp/c1.json" --orders "$tmp/o1" >"$tmp/c1.out" 2>&1 || rc=$?
tail -n 3 "$tmp/c1.out"
expect_eq "sale: crowd checks pass" "$rc" 0
expect_eq "sale: $W1 winners" "$(wc -l <"$tmp/o1")" $W1
head -n 5 "$tmp/o1" | awk '{ print $2 }' >"$tmp/paid"
expect_eq "sale: 5 orders paid (seckillctl order pay)" "$(pay_orders 5 "$tmp/o1")" 5
check "sale: MariaDB has $W1 orders, 5 paid (60 s)" \
	wait_sql seckill "SELECT CONCAT(COUNT(*), '/', SUM(state = 'paid')) FROM orders" "$W1/5" 60
check "sale: MariaDB holds exactly the winners' orders and users" orders_match "$tmp/o1"
expect_eq "sale: the paid ones are the 5 paid" \
	"$(sql seckill "SELECT id FROM orders WHERE state = 'paid'" | sort | tr '\n' ' ')" \
	"$(sort "$tmp/paid" | tr '\n' ' ')"
check "sale: verify: LMDB and MariaDB equal" verify
expect_eq "sale: verify --json says equal, items row sold $W1 paid 5" \
	"$(json_get "$tmp/verify.json" '[d["equal"], d["items"][0]["mariadb"]["sold"], d["items"][0]["mariadb"]["paid"]]')" \
	"[True, $W1, 5]"
expect_eq "sale: no guard refusal, nothing parked" \
	"$(wmetric 'seckill_mysql_guard_refusals_total{guard="stock"}'):$(wmetric 'seckill_mysql_guard_refusals_total{guard="user"}'):$(wmetric seckill_mysql_parked)" \
	"0:0:0"

# ------------------------------------------------------------------ 3. duplicate delivery
sum0=$(checksum)
nmsg=$(sql seckill "SELECT COUNT(*) FROM order_events")
writer_stop TERM
expect_eq "dup: writer (group seckill-mysql-writer) stopped" "$W_RC" 0
check "dup: a writer in a new group reads everything again" writer_start --group dup1
check "dup: every message seen again is a duplicate (30 s)" \
	wait_wmetric 'seckill_mysql_messages_total{result="duplicate"}' "$nmsg" 30
expect_eq "dup: nothing applied by the new group" \
	"$(wmetric 'seckill_mysql_messages_total{result="applied"}')" 0
expect_eq "dup: every table unchanged" "$(checksum)" "$sum0"
writer_stop TERM
expect_eq "dup: writer stopped" "$W_RC" 0
check "dup: verify" verify

# wave_start TAG N UNITS USERS - restock UNITS (request id N), a crowd of
# USERS new users in the background (orders in $tmp/oN), and wait until
# its first orders are in MariaDB.
wave_start() {
	local before
	before=$(sql seckill "SELECT COUNT(*) FROM orders")
	ctl stock add 1 "$3" --request-id "$2" >/dev/null || bad "$1: stock add 1 $3"
	crowd --users "$4" --user-base $((10000 * $2 + 1)) --seed "$2" --expect-units "$3" \
		--orders "$tmp/o$(($2 + 1))" >"$tmp/c$2.out" 2>&1 &
	crowd_pid=$!
	check "$1: the wave reaches MariaDB" \
		wait_sql seckill "SELECT COUNT(*) > $before FROM orders" 1 60
}

# wave_end TAG - the crowd of wave_start is done and its checks passed.
wave_end() {
	local rc=0
	wait "$crowd_pid" || rc=$?
	expect_eq "$1: the wave's crowd checks pass" "$rc" 0
}

# ------------------------------------------------------------------ 4. MariaDB kill -9
check "db kill: writer started again (first group)" writer_start --batch 20
wave_start "db kill" 1 $W2 1500
db_stop KILL
mid=$(sql seckill "SELECT 1" 2>/dev/null || echo down)
expect_eq "db kill: mariadbd killed (kill -9)" "$mid" down
wave_end "db kill"
# The stream goes on while MariaDB is down: 3 payments of wave 2.
expect_eq "db kill: 3 wave-2 orders paid while MariaDB is down" "$(pay_orders 3 "$tmp/o2")" 3
check "db kill: the writer rolled back and retries (30 s)" wait_wmetric seckill_mysql_batch_retries_total 1 30
check "db kill: mariadbd restarted on the same datadir" db_start
cat "$tmp/o1" "$tmp/o2" >"$tmp/o12"
check "db kill: MariaDB catches up: $((W1 + W2)) orders (60 s)" \
	wait_sql seckill "SELECT COUNT(*) FROM orders" $((W1 + W2)) 60
check "db kill: exactly the orders of both waves" orders_match "$tmp/o12"
check "db kill: the 8 paid orders are paid in MariaDB (30 s)" \
	wait_sql seckill "SELECT COUNT(*) FROM orders WHERE state = 'paid'" 8 30
check "db kill: verify" verify
echo "db kill: $(wmetric seckill_mysql_batch_retries_total) batch retries, $(wmetric seckill_mysql_db_connects_total) connections"

# ------------------------------------------------------------------ 5. writer kill -9
wave_start "writer kill" 2 $W3 1000
expect_eq "db kill: no guard refusal by this writer (waits: $(wmetric seckill_mysql_guard_waits_total))" \
	"$(wmetric 'seckill_mysql_guard_refusals_total{guard="stock"}'):$(wmetric 'seckill_mysql_guard_refusals_total{guard="user"}')" "0:0"
writer_stop KILL
expect_eq "writer kill: kill -9 of the writer" "$W_RC" 137
wave_end "writer kill"
expect_eq "writer kill: 2 wave-3 orders paid while the writer is down" "$(pay_orders 2 "$tmp/o3")" 2
check "writer kill: writer started again (same group)" writer_start --batch 20
cat "$tmp/o12" "$tmp/o3" >"$tmp/o123"
check "writer kill: MariaDB catches up: $((W1 + W2 + W3)) orders (60 s)" \
	wait_sql seckill "SELECT COUNT(*) FROM orders" $((W1 + W2 + W3)) 60
check "writer kill: exactly the orders of the three waves" orders_match "$tmp/o123"
check "writer kill: the restocks are in items.added" \
	wait_sql seckill "SELECT added FROM items WHERE id = 1" $((W2 + W3)) 30
# The dead member leaves the group after its 10 s session timeout.
check "writer kill: the 10 paid orders are paid in MariaDB (60 s)" \
	wait_sql seckill "SELECT COUNT(*) FROM orders WHERE state = 'paid'" 10 60
check "writer kill: verify" verify
expect_eq "no guard refusal over the three waves (restocks that came after their orders are waits), nothing parked" \
	"$(wmetric 'seckill_mysql_guard_refusals_total{guard="stock"}'):$(wmetric 'seckill_mysql_guard_refusals_total{guard="user"}'):$(wmetric seckill_mysql_parked)" \
	"0:0:0"
echo "guard waits (orders before their restock) since the last start: $(wmetric seckill_mysql_guard_waits_total)"
writer_stop TERM
expect_eq "writer kill: writer stopped" "$W_RC" 0
check "writer kill: the writer logged its stop" grep -q "prog=seckill-mysql-writer event=shutdown " "$tmp/writer.log"
logs_check "$tmp/writer.log"
echo "mysql test: $((SECONDS - T0)) s"
finish
