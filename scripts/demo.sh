#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
#
# demo.sh - a real flash sale on this machine, start to finish.
#
# Installs what is missing, builds, reserves hugepages, brings the sandbox
# up (the dataplane in a network namespace of its own, on one end of a veth
# pair through net_af_packet; the other end lives in the client namespace,
# addressed from 198.18.0.0/15), puts 1,000 units on
# sale a few seconds ahead with seckillctl activity add --gate (as an
# operator would: buyers need the gate claim that the shop's quiz puts in
# their token), fires a crowd of 50,000 users making
# 120,000 signed buy attempts at it from inside the namespace (a tenth of
# them skipped the quiz: 403 gate), and prints
# what happened. The push: a tenth of the winners follow their order's
# Server-Sent Events stream (seckill-crowd --follow), and after the sale one
# winner's stream is shown with curl -N while the demo pays the order
# (seckillctl order pay): confirmed -> paid, then the appliance closes it.
# The control plane (seckill-control) runs beside the
# dataplane: with ack = durable each winner is answered 200 once its order
# is on disk in LMDB, and the control plane exports every order to a Kafka
# broker (librdkafka's mock cluster, tools/kafka), from which the reference
# MySQL writer (seckill-mysql-writer) writes them into a MariaDB of its own
# (a temporary datadir, unix socket only).
#
# Act 2 (scripts/lib/demo_cluster.sh, docs/cluster.md): two appliances (two
# sandboxes, control planes as cluster members a and b) sell one item of
# 1,000 units out of one Redis pool (a redis-server of the demo on a unix
# socket in its temporary folder); crowds buy on both at once until it is
# sold out everywhere, a redis-cli subscribed to seckill:soldout shows the
# broadcast, and both appliances answer 410 after it. SK_DEMO_CLUSTER=0
# skips it. Then it takes everything down again: every process by its PID,
# the namespaces, the hugepage files.
#
#   ./scripts/demo.sh                 as root, on Debian 12
#   SK_DEMO_UNITS=5000 SK_DEMO_USERS=100000 SK_DEMO_ATTEMPTS=250000 ./scripts/demo.sh
#   SK_DEMO_GATE=70 SK_DEMO_FOLLOW=50 ./scripts/demo.sh   (% of the users who
#                                     passed the quiz; % of the winners following)
#
# Cores: the dataplane runs on core 1, the crowd and the control plane on core 0.
set -euo pipefail
. "$(dirname "$0")/lib/common.sh"
. "$(dirname "$0")/lib/mariadb.sh"
. "$(dirname "$0")/lib/demo_cluster.sh"
cd "$SK_ROOT"

UNITS=${SK_DEMO_UNITS:-1000}
USERS=${SK_DEMO_USERS:-50000}
ATTEMPTS=${SK_DEMO_ATTEMPTS:-120000}
CONNS=${SK_DEMO_CONNS:-128}
CLUSTER=${SK_DEMO_CLUSTER:-1}
START_IN=${SK_DEMO_START_IN:-6}
GATE=${SK_DEMO_GATE:-90}
FOLLOW=${SK_DEMO_FOLLOW:-10}
ITEM=1001
GUARD=1002
export SK_SBX=seckill-demo

sk_need_root
sk_install_pkgs "${SK_BUILD_PKGS[@]}" iproute2 iputils-ping curl python3 procps ethtool \
	mariadb-server mariadb-client redis-server redis-tools
sk_hugepages 1024

mkdir -p build
sk_log "building (release)"
sk_build build/release -Dbuildtype=debugoptimized
BIN=build/release/dataplane/seckill-dataplane
CROWD=build/release/tools/crowd/seckill-crowd
CTL=build/release/seckillctl/seckillctl
KAFKA=build/release/tools/kafka/seckill-kafka
SK_MYSQL_WRITER=build/release/mysql-writer/seckill-mysql-writer
TOKEN=build/release/tools/seckill-token
[[ -x $BIN && -x $CROWD && -x $CTL && -x $KAFKA && -x $SK_MYSQL_WRITER && -x $TOKEN ]] ||
	sk_die "build did not produce $BIN, $CROWD, $CTL, $KAFKA, $SK_MYSQL_WRITER and $TOKEN"
export SK_DATAPLANE=$PWD/$BIN
export SK_SBX_ADMIN_PORT=${SK_DEMO_ADMIN_PORT:-8081}

work=$(mktemp -d /tmp/seckill-demo.XXXXXX)
tmp=$work SOCK=$work/mariadb.sock MPORT=${SK_DEMO_WRITER_PORT:-9105}
kafka_pid='' sse_pid=''
cleanup() {
	dc_cleanup
	if [ -n "$sse_pid" ]; then
		kill "$sse_pid" 2>/dev/null || true
		wait "$sse_pid" 2>/dev/null || true
	fi
	writer_stop TERM
	db_stop TERM
	scripts/sandbox.sh down >/dev/null 2>&1 || true
	if [ -n "$kafka_pid" ]; then
		kill "$kafka_pid" 2>/dev/null || true
		wait "$kafka_pid" 2>/dev/null || true
	fi
	rm -rf "$work"
}
trap cleanup EXIT
# bash runs no EXIT trap when a signal kills it: exit through it instead.
trap 'exit 143' TERM
trap 'exit 130' INT

# The Kafka broker the control plane exports orders to: librdkafka's mock
# cluster run as a process (Debian has no Kafka broker package), on
# 127.0.0.1 only.
"$KAFKA" broker --topic seckill.orders --topic seckill.events --ready-file "$work/kafka" \
	--max-seconds 1800 >/dev/null 2>"$work/kafka.log" &
kafka_pid=$!
for _ in $(seq 1 100); do
	[ -s "$work/kafka" ] && break
	sleep 0.1
done
[ -s "$work/kafka" ] || sk_die "the Kafka broker did not start: $(cat "$work/kafka.log")"
bootstrap=$(sed -n 's/^bootstrap=//p' "$work/kafka")
# The key the payment service signs seckill.payments with (docs/kafka.md,
# "Signatures"): the control plane refuses unsigned payments.
(umask 077 && echo "demo-1 $(head -c 32 /dev/urandom | od -An -tx1 | tr -d ' \n')" >"$work/payments.key")
export SK_SBX_CONTROL_ARGS="--kafka $bootstrap --payments-key-file $work/payments.key"
KAFKA_BOOTSTRAP=$bootstrap

# Downstream: MariaDB and the reference writer, consuming both topics.
sk_log "starting MariaDB (a temporary datadir, unix socket only) and seckill-mysql-writer"
db_start || sk_die "mariadbd did not start: $(tail -n 5 "$work/db.err" 2>/dev/null)"
writer_start --group seckill-demo || sk_die "seckill-mysql-writer did not start: $(tail -n 5 "$work/writer.log")"

# The shared secret of the token issuer (here: this script) and the front door.
head -c 32 /dev/urandom | od -An -tx1 | tr -d ' \n' >"$work/secret"
chmod 600 "$work/secret"

# The sandbox configuration plus the sale.
{
	cat config/sandbox.ini
	cat <<EOF

[seckill]
auth = on
secret_file = $work/secret
order_ring = 262144
store = $work/store
ack = durable
ack_wait_ms = 500

# The sale itself is created below the way an operator does it, with
# seckillctl activity add. A second item, open from the start, that nobody is entitled to: it shows
# a forged token refused while stock remains.
[item.$GUARD]
name = guard item
total = 5
start = +0
end = +600
EOF
} >"$work/demo.ini"

sk_log "starting the appliance (dataplane on core 1, control plane on core 0, network namespace $SK_SBX)"
up=$(scripts/sandbox.sh up --config "$work/demo.ini" --bin "$BIN" --lcores 1)
server=$(sed -n 's/.*server=\([0-9.]*\).*/\1/p' <<<"$up")
[ -n "$server" ] || sk_die "sandbox did not report its address: $up"

sk_log "the operator creates the sale: seckillctl activity add $ITEM --total $UNITS ... --start +${START_IN}s --gate"
scripts/sandbox.sh ctl activity add "$ITEM" --total "$UNITS" --price 99900 --limit 1 \
	--name "demo phone" --start "+${START_IN}s" --end +600s --gate | head -n 1
before=$(scripts/sandbox.sh exec curl -s --max-time 5 "http://$server/v1/items/$ITEM")
sk_log "item before the sale: $before"

sk_log "the crowd: $USERS users ($GATE% passed the quiz), $ATTEMPTS signed attempts, $CONNS connections, from core 0; $FOLLOW% of the winners follow their order"
set +e
scripts/sandbox.sh exec "$CROWD" --server "$server" --item "$ITEM" --users "$USERS" \
	--attempts "$ATTEMPTS" --conns "$CONNS" --secret-file "$work/secret" --wait-start \
	--expect-units "$UNITS" --poll --max-seconds 120 --cpu 0 --json "$work/crowd.json" \
	--gate "$GATE" --follow "$FOLLOW" --follow-seconds 2 --orders "$work/orders.txt" \
	| tee "$work/crowd.txt"
crowd_rc=${PIPESTATUS[0]}
set -e

after=$(scripts/sandbox.sh exec curl -s --max-time 5 "http://$server/v1/items/$ITEM")
# The push, live: a winner follows its order's events with curl -N while the
# payment service (here: seckillctl order pay) records the payment; the
# dataplane pushes paid, then closes the stream. Every wait is bounded.
sse_user='' sse_order='' sse_rc=-1 paid="no winner to follow"
[ ! -s "$work/orders.txt" ] || read -r sse_user sse_order <"$work/orders.txt" || true
if [ -n "$sse_order" ]; then
	# The token goes to curl in a file (-H @file), not on its command line.
	(umask 077 && echo "Authorization: Bearer $("$TOKEN" --secret-file "$work/secret" \
		--sub "$sse_user" --item "$ITEM" --gate)" >"$work/sse.hdr")
	scripts/sandbox.sh exec curl -sN --max-time 10 -H "@$work/sse.hdr" \
		"http://$server/v1/orders/$sse_order/events" >"$work/sse.txt" 2>&1 &
	sse_pid=$!
	for _ in $(seq 1 50); do
		grep -q '^data:' "$work/sse.txt" && break
		sleep 0.1
	done
	paid=$(scripts/sandbox.sh ctl order pay "$sse_order" 2>&1) || true
	sse_rc=0
	wait "$sse_pid" || sse_rc=$?
	sse_pid=
fi
# A token signed with another secret, for an item that still has stock.
head -c 32 /dev/urandom | od -An -tx1 | tr -d ' \n' >"$work/wrong"
forged_tok=$("$TOKEN" --secret-file "$work/wrong" --sub 7 --item "$GUARD")
forged=$(scripts/sandbox.sh exec curl -s -o /dev/null -w '%{http_code}' --max-time 5 -X POST \
	-H "Authorization: Bearer $forged_tok" "http://$server/v1/seckill/$GUARD")
guard=$(scripts/sandbox.sh exec curl -s --max-time 5 "http://$server/v1/items/$GUARD")
# Durable: the store's live orders once the last group commit landed (bounded).
durable=0
for _ in $(seq 1 50); do
	durable=$(scripts/sandbox.sh ctl --json item "$ITEM" |
		python3 -c 'import json, sys; print(json.load(sys.stdin)["ledger"]["live"])') || durable=0
	[ "$durable" -ge "$UNITS" ] && break
	sleep 0.1
done
reconcile=$(scripts/sandbox.sh ctl reconcile 2>&1 | tail -n 1) || true
activities=$(scripts/sandbox.sh ctl activity list 2>&1) || true
# Exported: the control plane's export cursor catches up within a moment.
backlog=
for _ in $(seq 1 50); do
	backlog=$(scripts/sandbox.sh ctl metrics 2>/dev/null | sed -n 's/^seckill_export_backlog //p')
	[ "$backlog" = 0 ] && break
	sleep 0.1
done
exported=$("$KAFKA" consume --bootstrap "$bootstrap" --topic seckill.orders --from-beginning \
	--timeout-ms 2000 2>/dev/null | cut -f1 | sort -u | wc -l) || exported=0
# MariaDB: the writer follows Kafka within a moment (bounded wait).
rows=0
for _ in $(seq 1 150); do
	rows=$(sql seckill "SELECT COUNT(*) FROM orders o JOIN order_lines l ON l.order_id = o.id
		WHERE l.item_id = $ITEM" 2>/dev/null) || rows=0
	[ "$rows" -ge "$durable" ] && break
	sleep 0.2
done
if verify >/dev/null; then
	mysql_verify="verify: LMDB and MariaDB equal per item"
else
	mysql_verify="verify: DIFFERENCES (see seckill-mysql-writer verify)"
fi
mysql_item=$(sql seckill "SELECT CONCAT('total ', total + added, ', sold ', sold, ', returned ',
	returned) FROM items WHERE id = $ITEM" 2>/dev/null) || mysql_item="?"
metrics=$(scripts/sandbox.sh ctl metrics 2>/dev/null) || metrics=
requests=$(sed -n 's/^seckill_requests_total{outcome="\([a-z_]*\)"} \([1-9][0-9]*\)$/\1=\2/p' \
	<<<"$metrics" | tr '\n' ' ')
gated=$(sed -n 's/^seckill_requests_total{outcome="gate"} \([0-9]*\)$/\1/p' <<<"$metrics")

echo
echo "================ act 1: flash sale summary ================"
echo "item $ITEM before: $before"
echo "item $ITEM after:  $after"
echo "a forged token gets HTTP $forged; item $GUARD after it: $guard"
echo "durable in LMDB: $durable orders; $reconcile"
echo "exported to Kafka (seckill.orders at $bootstrap): $exported orders; export backlog ${backlog:-?} events"
echo "written to MariaDB by seckill-mysql-writer: $rows orders of item $ITEM (items row: $mysql_item); $mysql_verify"
echo "buy answers by outcome (the control plane's /metrics): $requests"
echo "activities (seckillctl activity list):"
# shellcheck disable=SC2001 # indents every line: no single ${var//}
sed 's/^/  /' <<<"$activities"
grep -E '^(attempts|winners|check|latency)' "$work/crowd.txt" || cat "$work/crowd.txt"
python3 scripts/lib/crowd_verdict.py "$work/crowd.json" "$UNITS"
python3 scripts/lib/crowd_verdict.py --gate "$work/crowd.json" "${gated:-?}"
python3 scripts/lib/crowd_verdict.py --follow "$work/crowd.json"
stream_ok=no
if [ -n "$sse_order" ]; then
	echo "one winner's stream (user $sse_user, curl -N .../v1/orders/$sse_order/events; meanwhile seckillctl: $paid):"
	python3 scripts/lib/crowd_verdict.py --stream "$work/sse.txt" "$sse_rc" && stream_ok=yes
else
	echo "one winner's stream: $paid"
fi
echo "==========================================================="

[ "$crowd_rc" -eq 0 ] || sk_die "the crowd's checks failed (exit $crowd_rc)"
[ "$stream_ok" = yes ] || sk_die "the winner's stream did not show its status, then paid, then the close"
[ "$CLUSTER" != 0 ] || exit 0

# Act 2 needs core 1 for its two dataplanes: act 1's appliance goes down.
scripts/sandbox.sh down >/dev/null
dc_act || sk_die "act 2's checks failed (see above)"
