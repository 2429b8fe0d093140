#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# monitoring.sh - the alert rules and the Grafana dashboard against the real
# exporters (docs/monitoring.md):
#
#  1. the sandbox with a store, ack = durable, auth off, the control plane
#     started with --kafka (seckill-kafka broker, so the export metrics are
#     there) and as the one member of a cluster on a redis-server of the
#     test (--redis, so the member's metrics are there; item 2 is a cluster
#     sale it leases), and seckill-mysql-writer --metrics-port with its
#     MariaDB unreachable (a unix socket nobody listens on: it serves
#     /metrics and retries the connection); the dataplane has an HTTPS
#     listener ([tls], a self-signed ECDSA certificate made here);
#  2. a sale of 20 units to 30 users (curl, X-User-Id): 20 x 200, 10 x 410;
#     the export backlog drains to 0; a reconcile run after the sale
#     reports item 1 fine; one request over HTTPS shows in the control
#     plane's TLS metrics (a full handshake, TLS 1.3, bytes both ways);
#  3. both /metrics scrapes pass promtool check metrics and the line format
#     check; every seckill_ metric the alert rules and the dashboard use is
#     exported, with the labels they match on (monitoring.py names), and a
#     scrape with one metric renamed fails that check;
#  4. Prometheus itself (Debian's prometheus, 127.0.0.1, 1 s scrapes and
#     evaluations, the repository's rule file): the appliance's alerts stay
#     silent while it is healthy, SeckillMysqlDatabaseDown turns pending
#     (the writer has no database); Redis killed: seckill_redis_up 0 and
#     SeckillRedisDown pending; the dataplane killed: seckill_dataplane_up
#     0 and SeckillDataplaneDown pending or firing.
# Every wait is bounded; the broker, the writer, Redis and Prometheus are
# stopped by their PIDs on every exit path.
. "$(dirname "$0")/lib.sh"
require_env curl promtool prometheus redis-server redis-cli SK_CONTROL SK_SECKILLCTL SK_KAFKA SK_MYSQL_WRITER
# shellcheck source=lib/durable.sh
. "$IT_DIR/lib/durable.sh"
# shellcheck source=lib/kafka.sh
. "$IT_DIR/lib/kafka.sh"
# shellcheck source=lib/redis.sh
. "$IT_DIR/lib/redis.sh"
python3 -c 'import yaml' 2>/dev/null || skip "needs python3-yaml"

tmp=$(mktemp -d)
KAFKA_PID=
WRITER_PID=
PROM_PID=
REDIS_PID=
RSOCK=$tmp/redis.sock
RULES=$REPO/config/prometheus/seckill-alerts.yml
DASHBOARD=$REPO/config/grafana/seckill.json

cleanup() {
	stop_wait "$PROM_PID"
	stop_wait "$WRITER_PID"
	redis_kill
	kafka_down
	rm_tmp
}
at_exit cleanup

export SK_SBX_ADMIN_PORT=$((20000 + $$ % 1000))
ADMIN=http://127.0.0.1:$SK_SBX_ADMIN_PORT
WRITER_PORT=$((21000 + $$ % 1000))
PROM_PORT=$((22000 + $$ % 1000))
PROM=http://127.0.0.1:$PROM_PORT

# wait_http URL SECONDS - until URL answers 2xx.
wait_http() {
	wait_for "$2" "$1 answers" curl -sf -o /dev/null "$1"
}

# alerts STATE - the names of Prometheus's alerts in STATE (pending,
# firing), one per line, sorted.
alerts() {
	curl -sf "$PROM/api/v1/alerts" >"$tmp/alerts.json" || return 1
	itpy jsonq get "$tmp/alerts.json" \
		"'\n'.join(sorted({a['labels']['alertname'] for a in d['data']['alerts'] if a['state'] == '$1'}))"
}

# active - the alerts pending or firing, one per line, sorted, unique.
active() {
	local p f
	p=$(alerts pending) && f=$(alerts firing) || return 1
	printf '%s\n%s\n' "$p" "$f" | grep . | sort -u
}

# wait_alert NAME SECONDS - until alert NAME is pending or firing. (The
# list goes to a variable first: grep -q stopping early would SIGPIPE its
# writer under pipefail.)
wait_alert() {
	local end=$((SECONDS + $2)) a
	while :; do
		a=$(active 2>/dev/null || true)
		grep -qx "$1" <<<"$a" && return 0
		[ "$SECONDS" -lt "$end" ] || return 1
		sleep 0.5
	done
}

# --------------------------------------------------------------- 1. set up
kafka_start seckill.orders seckill.events seckill.payments
openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -days 2 -subj /CN=shop.test \
	-addext subjectAltName=DNS:shop.test -keyout "$tmp/ec.key" -out "$tmp/ec.pem" 2>/dev/null
{
	durable_config
	printf '\n[item.1]\ntotal = 20\n[cluster]\nmember_id = 1\n'
	printf '\n[tls]\ncert = %s\nkey = %s\n' "$tmp/ec.pem" "$tmp/ec.key"
} >"$tmp/sale.ini"
check "redis-server up" redis_start
SK_SBX_CONTROL_ARGS="$SK_SBX_CONTROL_ARGS --redis unix:$RSOCK --cluster-member m --cluster-members m" \
	sbx_up --config "$tmp/sale.ini"
"$SBX" ctl activity add 2 --total 10 --cluster >"$tmp/add2.out" 2>&1 || cat "$tmp/add2.out"
check "the member leases cluster item 2" wait_metric 'seckill_cluster_held_units{item="2"}' -gt 0 20
check "its pool is not fenced" wait_metric 'seckill_cluster_fenced{item="2"}' -eq 0 20

"$SK_MYSQL_WRITER" run --socket "$tmp/no-mariadb.sock" --bootstrap "$KAFKA_BOOTSTRAP" \
	--metrics-port "$WRITER_PORT" </dev/null >/dev/null 2>"$tmp/writer.log" &
WRITER_PID=$!
check "the writer serves /metrics" wait_http "http://127.0.0.1:$WRITER_PORT/metrics" 10

# ----------------------------------------------------------------- 2. sale
codes=""
for u in $(seq 1 30); do
	codes+=$(sbx_exec curl -s -o /dev/null -w '%{http_code} ' -X POST -H "X-User-Id: $u" \
		"$URL/v1/seckill/1")
done
expect_eq "20 winners (200), 10 sold out (410)" \
	"$(tr ' ' '\n' <<<"$codes" | grep . | sort | uniq -c | awk '{printf "%s:%s ", $2, $1}')" "200:20 410:10 "
check "export backlog drains to 0" wait_metric seckill_export_backlog -eq 0 30
runs=$(metric 'seckill_reconcile_runs_total{result="ok"}')
check "a reconcile run after the sale" \
	wait_metric 'seckill_reconcile_runs_total{result="ok"}' -gt "${runs:-0}" 15
expect_eq "reconcile: item 1 fine" "$(metric 'seckill_reconcile_mismatch{item="1"}')" 0
expect_eq "reconcile: no store difference" \
	"$(metric 'seckill_reconcile_difference_units{item="1",check="store"}')" 0
expect_eq "dataplane up" "$(metric seckill_dataplane_up)" 1
expect_eq "one request over HTTPS" \
	"$(sbx_exec curl -sk --max-time 5 --tlsv1.3 -o /dev/null -w '%{http_code}' "https://$SERVER/healthz")" 200
check "its full handshake is in /metrics" wait_metric 'seckill_tls_handshakes_total{kind="full"}' -ge 1 10
check "... as TLS 1.3" wait_metric 'seckill_tls_versions_total{version="1.3"}' -ge 1 1
check "... with ciphertext bytes in" wait_metric 'seckill_tls_bytes_total{direction="in"}' -gt 0 1
check "... and out" wait_metric 'seckill_tls_bytes_total{direction="out"}' -gt 0 1
expect_eq "no handshake in progress" "$(metric seckill_tls_handshakes_inflight)" 0

# ------------------------------------------------------ 3. names and lint
curl -sf "$ADMIN/metrics" >"$tmp/control.txt"
curl -sf "http://127.0.0.1:$WRITER_PORT/metrics" >"$tmp/writer.txt"
check "control /metrics: line format" itpy metrics format "$tmp/control.txt"
# promtool_metrics FILE - promtool check metrics (naming and HELP lint) on FILE.
promtool_metrics() {
	promtool check metrics <"$1"
}
check "control /metrics: promtool check metrics" promtool_metrics "$tmp/control.txt"
check "writer /metrics: promtool check metrics" promtool_metrics "$tmp/writer.txt"
check "every metric of the rules and the dashboard is exported" \
	itpy monitoring names "$RULES" "$DASHBOARD" "$tmp/control.txt" "$tmp/writer.txt"
sed 's/^seckill_ring_capacity/seckill_ring_size/' "$tmp/control.txt" >"$tmp/renamed.txt"
if itpy monitoring names "$RULES" "$DASHBOARD" "$tmp/renamed.txt" "$tmp/writer.txt" >"$tmp/renamed.out"; then
	bad "a renamed metric is not noticed"
else
	expect_match "a renamed metric is noticed" "$(grep -m1 seckill_ring_capacity "$tmp/renamed.out")" \
		"metric seckill_ring_capacity is not exported"
fi

# ------------------------------------------------------------ 4. Prometheus
cat >"$tmp/prometheus.yml" <<EOF
global:
  scrape_interval: 1s
  evaluation_interval: 1s
rule_files:
  - $RULES
scrape_configs:
  - job_name: seckill-control
    static_configs:
      - targets: ["127.0.0.1:$SK_SBX_ADMIN_PORT"]
  - job_name: seckill-mysql-writer
    static_configs:
      - targets: ["127.0.0.1:$WRITER_PORT"]
EOF
check "promtool check config" promtool check config "$tmp/prometheus.yml"
prometheus --config.file="$tmp/prometheus.yml" --storage.tsdb.path="$tmp/prom" \
	--web.listen-address="127.0.0.1:$PROM_PORT" </dev/null >/dev/null 2>"$tmp/prometheus.log" &
PROM_PID=$!
check "Prometheus is ready" wait_http "$PROM/-/ready" 30
if wait_alert SeckillMysqlDatabaseDown 30; then
	ok "the writer's database alert turns pending"
else
	bad "the writer's database alert turns pending"
	cat "$tmp/alerts.json"
	curl -s "$PROM/api/v1/targets" | head -c 3000
	curl -s "$PROM/api/v1/rules" | head -c 3000
	tail -5 "$tmp/prometheus.log" "$tmp/writer.log"
fi
check "the rules were evaluated on the appliance's figures" \
	itpy monitoring evaluated "$PROM" seckill_dataplane_up 30
expect_eq "no alert of the healthy appliance" "$(active | grep -v '^SeckillMysql' | tr '\n' ' ')" ""

redis_kill
check "seckill_redis_up 0 once Redis is killed" wait_metric seckill_redis_up -eq 0 10
check "SeckillRedisDown pending or firing" wait_alert SeckillRedisDown 30

"$SBX" kill
check "seckill_dataplane_up 0 once the dataplane is killed" wait_metric seckill_dataplane_up -eq 0 10
check "SeckillDataplaneDown pending or firing" wait_alert SeckillDataplaneDown 30

finish
