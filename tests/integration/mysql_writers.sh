#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# mysql_writers.sh - N seckill-mysql-writers in one consumer group
# (docs/mysql.md, "Several writers"): the broker's topics have 4 partitions
# (orders keyed by order id spread over them), two writers share them and
# one MariaDB (a temporary mariadbd, unix socket only):
#
#  1. a sale of W1 units to 2,000 users, started once the item's row is in
#     MariaDB: MariaDB holds exactly the winners' orders, both writers wrote
#     some of them (the partitions are shared), verify finds LMDB and
#     MariaDB equal;
#  2. 6 orders paid, 3 refunded (seckillctl), a restock of W2 units and a
#     second crowd that buys the W2 + 3 units; writer A is killed (kill -9)
#     while the wave is being written: B takes its partitions over (the
#     group's session timeout) and MariaDB ends equal to LMDB, nothing lost
#     or doubled, no guard refusal, nothing left parked;
#  3. A started again: it rejoins, whatever it reads again is a duplicate
#     (no table changes); both stop on SIGTERM with status 0.
# Every wait is bounded and on a condition; every process is stopped by its
# PID on every exit path. Each writer logs to $tmp/NAME/writer.log; on a
# failure both logs are printed.
. "$(dirname "$0")/lib.sh"
require_env curl SK_CROWD SK_CONTROL SK_KAFKA SK_MYSQL_WRITER
for t in mariadbd mariadb-install-db mariadb mariadb-admin; do
	command -v "$t" >/dev/null || skip "needs $t (Debian: mariadb-server, mariadb-client)"
done
# shellcheck source=lib/kafka.sh
. "$IT_DIR/lib/kafka.sh"
# shellcheck source=lib/mariadb.sh
. "$IT_DIR/lib/mariadb.sh"

tmp=$(mktemp -d)
W1=300 W2=100
export SK_SBX_ADMIN_PORT=$((15000 + $$ % 1000))
# shellcheck disable=SC2034 # read by lib.sh's item_field
ADMIN=http://127.0.0.1:$SK_SBX_ADMIN_PORT
SOCK=$tmp/db.sock
export SK_KAFKA_PARTITIONS=4
WA=''
WB=''
T0=$SECONDS

writers_cleanup() {
	if [ "$FAILS" != 0 ]; then
		writer_logs
	fi
	W_PID=$WA writer_stop KILL
	W_PID=$WB writer_stop KILL
	db_stop KILL
	kafka_down
	rm_tmp
}
at_exit writers_cleanup

# writer_logs - each writer's log: its assignment history (every assigned
# and revoked line, warnings, errors) and its last 40 lines.
writer_logs() {
	local w
	for w in A B; do
		[ -f "$tmp/$w/writer.log" ] || continue
		echo "--- writer $w: assignments, warnings, errors"
		grep -E 'msg=(assigned|revoked) |level=(warn|error|crit) ' "$tmp/$w/writer.log" |
			tail -n 60 || true
		echo "--- writer $w: last lines"
		tail -n 40 "$tmp/$w/writer.log"
	done
}

# moves NAME - how many assignment changes (assigned or revoked lines) writer
# NAME logged so far.
moves() {
	grep -cE 'msg=(assigned|revoked) ' "$tmp/$1/writer.log" || true
}

# port NAME - writer NAME's (A or B) metrics port on 127.0.0.1.
port() {
	case $1 in
	A) echo $((14000 + $$ % 1000)) ;;
	*) echo $((13000 + $$ % 1000)) ;;
	esac
}

# writer NAME - start writer NAME (A or B) in group "pair"; its PID in W$NAME,
# its log appended to $tmp/NAME/writer.log (writer_start logs to
# $tmp/writer.log: tmp is $tmp/NAME for that call only).
writer() {
	mkdir -p "$tmp/$1" || return 1
	MPORT=$(port "$1") tmp=$tmp/$1 writer_start --group pair --batch 50 || return 1
	printf -v "W$1" '%s' "$W_PID"
}

# wm NAME METRIC - a value of writer NAME's /metrics.
wm() {
	MPORT=$(port "$1") wmetric "$2"
}

# wait_assigned NA NB SECONDS - until writers A and B report NA and NB
# partitions assigned (seckill_mysql_partitions_assigned; B absent = 0).
wait_assigned() {
	local a b end=$((SECONDS + $3))
	while [ "$SECONDS" -lt "$end" ]; do
		a=$(wm A seckill_mysql_partitions_assigned)
		b=$([ -z "$WB" ] || wm B seckill_mysql_partitions_assigned)
		[ "${a:-0}:${b:-0}" = "$1:$2" ] && return 0
		sleep 0.2
	done
	echo "wait_assigned: A ${a:-?}, B ${b:-?}; want $1, $2"
	return 1
}

# wait_assigned_b N SECONDS - until writer B reports N partitions.
wait_assigned_b() {
	local b end=$((SECONDS + $2))
	while [ "$SECONDS" -lt "$end" ]; do
		b=$(wm B seckill_mysql_partitions_assigned)
		[ "${b:-0}" = "$1" ] && return 0
		sleep 0.2
	done
	echo "wait_assigned_b: B ${b:-?}; want $1"
	return 1
}

ctl() {
	"$SBX" ctl "$@"
}

crowd() {
	sbx_exec taskset -c 0 "$SK_CROWD" --server "$SERVER" --item 1 --conns 32 \
		--timeout-ms 8000 --max-seconds 40 "$@"
}

# ------------------------------------------------------------------ MariaDB, broker, writers
check "mariadbd up on $SOCK" db_start
kafka_start seckill.orders seckill.events seckill.payments
check "writer A started (group pair)" writer A
check "writer A owns all 8 partitions (30 s)" wait_assigned 8 0 30
check "writer B started (group pair)" writer B
# librdkafka's mock cluster answers a follower's SyncGroup that arrives
# after the leader's with "Invalid request": the follower rejoins and the
# group takes another round of session.timeout.ms - 1 s (9 s). About half
# the rounds go so: 120 s leave room for a dozen.
check "the group rebalanced: A and B own 4 partitions each (120 s)" wait_assigned 4 4 120

# ------------------------------------------------------------------ 1. a sale
cfg=$tmp/writers.ini
sale_config "$cfg" $W1
sbx_up --config "$cfg" >/dev/null
# The item's "activity" event (key item:1, one partition of seckill.events,
# so one writer's) reaches Kafka well under a second before the first order.
# An order consumed before its item's row is written is parked, the orders
# after it wait behind it, and whichever writer unparks them first writes
# them: the item's owner, right after the item (CI once saw A 0, B 300 so).
# An item is created well before its sale: so is this one.
check "sale: the item is in MariaDB (30 s)" \
	wait_sql seckill "SELECT COUNT(*) FROM items WHERE id = 1" 1 30
m0="$(moves A) $(moves B)"
rc=0
crowd --users 2000 --attempts 3000 --seed 7 --expect-units $W1 --orders "$tmp/o1" \
	>"$tmp/c1.out" 2>&1 || rc=$?
tail -n 1 "$tmp/c1.out"
expect_eq "sale: crowd checks pass" "$rc" 0
check "sale: MariaDB has the $W1 orders (60 s)" \
	wait_sql seckill "SELECT COUNT(*) FROM orders" $W1 60
expect_eq "sale: MariaDB's orders are the winners'" \
	"$(sql seckill "SELECT id, user_id FROM orders" | sort | md5sum)" \
	"$(awk '{ print $2 "\t" $1 }' "$tmp/o1" | sort | md5sum)"
a=$(wm A seckill_mysql_orders_written_total)
b=$(wm B seckill_mysql_orders_written_total)
for w in A B; do
	echo "sale: writer $w wrote $(wm $w seckill_mysql_orders_written_total) orders," \
		"parked $(wm $w 'seckill_mysql_messages_total{result="parked"}')," \
		"unparked $(wm $w seckill_mysql_unparked_total)," \
		"owns $(wm $w seckill_mysql_partitions_assigned) partitions"
done
echo "sale: assignment changes during the sale: A, B $m0 -> $(moves A) $(moves B)"
expect_eq "sale: both writers wrote orders, $W1 in all" \
	"$([ "${a:-0}" -gt 0 ] && [ "${b:-0}" -gt 0 ] && echo $((a + b)))" $W1
check "sale: verify (30 s)" wait_verify 30

# ------------------------------------------------------------------ 2. refunds, a wave, A killed
n=0
for id in $(head -n 6 "$tmp/o1" | awk '{ print $2 }'); do
	ctl order pay "$id" >/dev/null && n=$((n + 1))
done
expect_eq "wave: 6 orders paid" "$n" 6
n=0
for id in $(head -n 3 "$tmp/o1" | awk '{ print $2 }'); do
	ctl order refund "$id" --request "rf-$id" >/dev/null && n=$((n + 1))
done
expect_eq "wave: 3 of them refunded" "$n" 3
ctl stock add 1 $W2 --request-id 2 >/dev/null || bad "stock add 1 $W2"
crowd --users 1500 --user-base 20001 --seed 8 --expect-units $((W2 + 3)) \
	--orders "$tmp/o2" >"$tmp/c2.out" 2>&1 &
crowd_pid=$!
check "wave: its first orders reach MariaDB" \
	wait_sql seckill "SELECT COUNT(*) > $W1 FROM orders" 1 60
W_PID=$WA writer_stop KILL
WA=
check "wave: B owns all 8 partitions once A's session timed out (60 s)" \
	wait_assigned_b 8 60
rc=0
wait "$crowd_pid" || rc=$?
tail -n 1 "$tmp/c2.out"
expect_eq "wave: crowd checks pass" "$rc" 0
check "wave: B alone catches up: $((W1 + W2 + 3)) orders (90 s)" \
	wait_sql seckill "SELECT COUNT(*) FROM orders" $((W1 + W2 + 3)) 90
check "wave: states reach MariaDB: 3 paid, 3 refunded (30 s)" \
	wait_sql seckill "SELECT CONCAT(SUM(state = 'paid'), '/', SUM(state = 'refunded')) FROM orders" \
	"3/3" 30
check "wave: verify (30 s)" wait_verify 30
expect_eq "wave: no guard refusal, nothing parked" \
	"$(wm B 'seckill_mysql_guard_refusals_total{guard="stock"}'):$(wm B 'seckill_mysql_guard_refusals_total{guard="user"}'):$(sql seckill "SELECT COUNT(*) FROM parked")" \
	"0:0:0"

# ------------------------------------------------------------------ 3. A again
sum0=$(sql seckill "CHECKSUM TABLE items, orders, order_lines, order_events EXTENDED" | awk '{ printf "%s ", $2 }')
check "again: writer A started again" writer A
# /metrics answers before the connection is made: wait for it (bounded).
MPORT=$(port A) check "again: A is connected to MariaDB (10 s)" wait_wmetric seckill_mysql_db_up 1 10
check "again: verify" verify
expect_eq "again: no table changed" \
	"$(sql seckill "CHECKSUM TABLE items, orders, order_lines, order_events EXTENDED" | awk '{ printf "%s ", $2 }')" \
	"$sum0"
W_PID=$WA writer_stop TERM
WA=
expect_eq "again: A stops on SIGTERM with status 0" "$W_RC" 0
W_PID=$WB writer_stop TERM
WB=
expect_eq "again: B stops on SIGTERM with status 0" "$W_RC" 0

echo "mysql_writers test: $((SECONDS - T0)) s"
finish
