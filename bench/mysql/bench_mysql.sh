#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# bench_mysql.sh - the figures of seckill-mysql-writer (docs/mysql.md,
# docs/benchmarks.md), with Debian's MariaDB in a temporary datadir (unix
# socket) and the seckill-kafka broker on 127.0.0.1:
#
#  1. throughput: N confirmed orders (one line each) are put on
#     seckill.orders first, then one writer starts and writes them; orders/s
#     = N / (last written_ns - first written_ns), N / (the moment all N
#     rows are seen committed, polled every 0.2 s - first written_ns), and
#     the wall time from the writer's start (group join included);
#  2. lag during a sale (needs root and the sandbox, like the integration
#     tests; skipped otherwise): a crowd buys U units through the appliance
#     (ack = durable, control plane exporting to the broker) while the
#     writer runs; per order written_ns - confirmed_ns (confirmed_ns: the
#     LMDB commit after which the winner's 200 is sent), p50/p99/max.
#
#   bench/mysql/bench_mysql.sh [BUILD_DIR] [N] [U]     (defaults build 20000 2000)
BUILD=$(cd "${1:-build}" && pwd)
N=${2:-20000}
U=${3:-2000}
export SK_DATAPLANE=$BUILD/dataplane/seckill-dataplane
export SK_CROWD=$BUILD/tools/crowd/seckill-crowd
export SK_CONTROL=$BUILD/control/seckill-control
export SK_SECKILLCTL=$BUILD/seckillctl/seckillctl
export SK_KAFKA=$BUILD/tools/kafka/seckill-kafka
export SK_MYSQL_WRITER=$BUILD/mysql-writer/seckill-mysql-writer
# shellcheck source=../../tests/integration/lib.sh
. "$(dirname "$0")/../../tests/integration/lib.sh"
# shellcheck source=../../tests/integration/lib/kafka.sh
. "$IT_DIR/lib/kafka.sh"
# shellcheck source=../../tests/integration/lib/mariadb.sh
. "$IT_DIR/lib/mariadb.sh"
for t in "$SK_KAFKA" "$SK_MYSQL_WRITER"; do
	[ -x "$t" ] || {
		echo "$t: not built (ninja -C $BUILD)"
		exit 1
	}
done

tmp=$(mktemp -d)
SOCK=$tmp/db.sock
MPORT=$((17000 + $$ % 1000))
export SK_SBX_ADMIN_PORT=$((18000 + $$ % 1000))
bench_cleanup() {
	writer_stop KILL
	db_stop TERM
	kafka_down
	rm_tmp
}
at_exit bench_cleanup

# pct DB QUERY - p50, p99 and max (ms) of the one-column numbers (ns) QUERY prints.
pct() {
	sql "$1" "$2" | sort -n | awk 'function at(q, i) { i = int(NR * q + 0.5); return v[i < 1 ? 1 : i] }
		{ v[NR] = $1 }
		END {
			if (NR == 0) { print "no rows"; exit }
			printf "n %d, p50 %.1f ms, p99 %.1f ms, max %.1f ms\n", NR, at(0.50) / 1e6, at(0.99) / 1e6, v[NR] / 1e6
		}'
}

db_start || {
	echo "mariadbd did not start"
	exit 1
}
kafka_up "$tmp" seckill.orders seckill.events bench.orders bench.events || {
	echo "broker did not start"
	exit 1
}
echo "machine: $(nproc) cores, $(awk -F': ' '/model name/ { print $2; exit }' /proc/cpuinfo); $(date -u +%F)"
echo "MariaDB $(mariadbd --version | awk '{ print $3 }'), librdkafka mock broker"

# cpu_s PID - CPU seconds (user + system) of PID so far, 0.01 s steps.
cpu_s() {
	awk -v hz="$(getconf CLK_TCK)" '{ printf "%.2f", ($14 + $15) / hz }' "/proc/$1/stat"
}

# ------------------------------------------------------------------ 1. throughput
# The item is written before the writer starts (not by an activity event on
# the other topic, which a first batch of orders may overtake: they would
# be parked and retried, and the figure would measure that).
"$SK_MYSQL_WRITER" migrate --socket "$SOCK" --database bench >/dev/null || exit 1
sql bench "INSERT INTO items (id, name, total, per_user_limit) VALUES (1, 'bench', 100000000, 1)" || exit 1
for ((b = 0; b < N; b += 2000)); do
	mapfile -t msgs < <(awk -v b="$b" -v n="$N" 'BEGIN {
		for (i = b + 1; i <= b + 2000 && i <= n; i++)
			printf "%d={\"v\":1,\"seq\":%d,\"type\":\"confirmed\",\"order\":\"%d\",\"user\":%d,\"units\":1,\"time_ns\":1,\"sold_ns\":1,\"client_ip\":\"198.18.0.2\",\"lines\":[{\"line\":0,\"item\":1,\"qty\":1,\"price\":99900}]}\n", i, i + 1, i, i
	}')
	"$SK_KAFKA" produce --bootstrap "$KAFKA_BOOTSTRAP" --topic bench.orders --timeout-ms 30000 \
		"${msgs[@]}" >/dev/null
done
echo "throughput: $N orders on bench.orders; one writer (--batch 1000) starts"
db_cpu0=$(cpu_s "$DB_PID")
t0=$(date +%s%N)
writer_start --database bench --group bench --orders-topic bench.orders --events-topic bench.events
wait_sql bench "SELECT COUNT(*) FROM orders" "$N" 600 || exit 1
t1=$(date +%s%N)
span=$(sql bench "SELECT MAX(written_ns) - MIN(written_ns) FROM orders")
first=$(sql bench "SELECT MIN(written_ns) FROM orders")
echo "throughput: $N orders written in $(((t1 - t0) / 1000000)) ms from the writer's start;" \
	"$(awk -v n="$N" -v s="$span" 'BEGIN { printf "%.0f orders/s", n / (s / 1e9) }') between the first and the last row" \
	"($(wmetric seckill_mysql_batches_total) transactions);" \
	"$(awk -v n="$N" -v s="$((t1 - first))" 'BEGIN { printf "%.0f orders/s", n / (s / 1e9) }') from the first row to all rows seen committed"
echo "throughput: CPU seconds: writer $(cpu_s "$W_PID"), mariadbd $(awk -v a="$(cpu_s "$DB_PID")" -v b="$db_cpu0" 'BEGIN { printf "%.2f", a - b }');" \
	"load average $(cut -d' ' -f1-3 /proc/loadavg)"
writer_stop TERM

# ------------------------------------------------------------------ 2. lag during a sale
if [ "$(id -u)" != 0 ] || [ ! -c /dev/net/tun ] || [ ! -x "$SK_DATAPLANE" ] || [ ! -x "$SK_CROWD" ]; then
	echo "lag: skipped (needs root, /dev/net/tun and the appliance built)"
	exit 0
fi
# --kafka needs the payments signing key (docs/kafka.md, "Signatures").
pay_key_file "$tmp/payments.key"
export SK_SBX_CONTROL_ARGS="--kafka $KAFKA_BOOTSTRAP --payments-key-file $tmp/payments.key"
cfg=$tmp/bench.ini
sale_config "$cfg" "$U"
sbx_up --config "$cfg" >/dev/null
writer_start
# The writer consumes once its group is joined: the item's activity event
# (exported when the control plane loaded the sale) is then in MariaDB.
wait_sql seckill "SELECT COUNT(*) FROM items WHERE id = 1" 1 60 || exit 1
sbx_exec taskset -c 0 "$SK_CROWD" --server "$SERVER" --item 1 --conns 64 --users $((U * 4)) \
	--attempts $((U * 5)) --seed 7 --timeout-ms 8000 --max-seconds 60 --expect-units "$U" \
	--orders "$tmp/orders" >"$tmp/crowd.out" 2>&1 || {
	tail -n 5 "$tmp/crowd.out"
	echo "lag: the crowd failed"
	exit 1
}
grep -E "req/s|elapsed|wins" "$tmp/crowd.out" | head -n 3 || true
wait_sql seckill "SELECT COUNT(*) FROM orders" "$U" 120 || exit 1
echo "lag (winner's LMDB commit, then its 200 -> its row written in MariaDB), $U orders:" \
	"$(pct seckill "SELECT written_ns - confirmed_ns FROM orders")"
echo "sale: the writer's last batch lag $(wmetric seckill_mysql_last_lag_seconds) s, $(wmetric seckill_mysql_batches_total) transactions"
