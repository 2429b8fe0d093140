#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
#
# bench_conns.sh - what an open connection costs the dataplane (issue 10):
# the memory of a connection slot, and the cycles of the sold-out answer
# with 1k, 10k and 100k connections open at once (cache behaviour).
#
#   scripts/bench_conns.sh [--json] [--tls] [--conns LIST]
#                          [--baseline DATAPLANE] [--build DIR]
#
#   --conns LIST  comma-separated connection counts (default 1000,10000,100000)
#   --baseline B  also measure the dataplane binary B (an older build kept
#                 aside) at each count, before the build's: "N@base" next to
#                 "N" in the table
#   --json        one JSON object on stdout, else markdown tables
#   --tls         the connections speak TLS (the dataplane's [tls] port 443,
#                 an ECDSA P-256 certificate made with openssl here;
#                 max_handshakes and handshake_timeout_ms raised so that N
#                 handshakes at once are served, not refused): the window
#                 starts once /seckill/tls counted N handshakes, and the
#                 dataplane's RssAnon (OpenSSL's per-connection memory,
#                 outside the hugepages) is read before the loadgen starts
#                 and in the window: its growth over N is the bytes a TLS
#                 connection adds to its slot
#   --build D     as scripts/bench.sh
#
# Memory: the sandbox is started twice with the same config but
# tcp.max_conns (the lcore's connection table: every slot's TCP state, its
# receive and send buffers and the app's per-connection state are reserved
# at start, in hugepages) at 4,096 and at MAX (the largest count + 10 %);
# the rte_malloc heap in use (/eal/heap_info, Alloc_size) is read after
# each start, and the difference over the difference of slots is the bytes
# a slot costs. The table's memory does not grow with use: an open
# connection costs what its slot reserved.
#
# Cycles: with tcp.max_conns = MAX (tcp.max_conns_per_ip 0), for each count
# N, seckill-loadgen (cpu 0) opens N keep-alive connections over memif and
# keeps 512 sold-out buys (X-User-Id of distinct users, POST /v1/seckill/2
# of 0 units) in flight over them (--depth 1 --inflight 512, as the 64 x 8
# of scripts/bench.sh), each on the connection that waited longest: every
# request lands on a connection not touched for N requests. The
# window is taken after the telemetry shows N connections open (the
# handshakes are not in it) and lasts WINDOW s; busy cycles per request,
# requests per busy pass and the idle share are the telemetry's deltas.
#
# Needs root, 2 cpus, python3, about (MAX x 19 KiB + the loadgen's MAX x
# 9 KiB) of hugepages (SK_SBX_PAGES is raised to fit). Every run is bounded
# (timeout), processes are stopped by their PID, the sandbox goes down on
# exit. Addresses: 198.19.0.0/16 (memif).
set -euo pipefail

JSON=0 BUILD="" CONNS=1000,10000,100000 BASELINE="" TLS=0
while [ $# -gt 0 ]; do
	case $1 in
	--json) JSON=1; shift ;;
	--tls) TLS=1; shift ;;
	--conns) CONNS=${2:?--conns LIST}; shift 2 ;;
	--baseline) BASELINE=${2:?--baseline DATAPLANE}; shift 2 ;;
	--build) BUILD=${2:?--build DIR}; shift 2 ;;
	-h | --help)
		awk 'NR > 2 && /^#/ { sub(/^# ?/, ""); print; next } NR > 2 { exit }' "$0"
		exit 0
		;;
	*) echo "bench-conns: unknown option '$1' (see --help)" >&2; exit 2 ;;
	esac
done
[[ $CONNS =~ ^[0-9]+(,[0-9]+)*$ ]] || { echo "bench-conns: --conns: '$CONNS' is not a list of counts" >&2; exit 2; }

BENCH_NAME=bench-conns
. "$(dirname "${BASH_SOURCE[0]}")/lib/bench_lib.sh"
[ -z "$BASELINE" ] || [ -x "$BASELINE" ] || die "--baseline: not an executable: $BASELINE"
DP_NEW=$SK_DATAPLANE
LG_TLS=()
if [ "$TLS" = 1 ]; then
	[ -z "$BASELINE" ] || die "--tls: no --baseline (an older dataplane has no [tls])"
	tls_cert
	LG_TLS=(--tls --sni shop.test)
fi

WINDOW=5 # s of measurement per count
# The server's idle timeouts (before and after the first request): 60 s,
# but with TLS the loadgen, busy with its handshakes while it opens N
# connections, sends the first requests on them only minutes later.
IDLE_MS=60000
[ "$TLS" = 0 ] || IDLE_MS=600000
MAXN=0
for n in ${CONNS//,/ }; do
	{ [ "$n" -ge 1 ] && [ "$n" -le 1000000 ]; } || die "--conns: $n is not in 1..1000000"
	[ "$n" -gt "$MAXN" ] && MAXN=$n
done
MAX=$((MAXN + MAXN / 10 + 1024))
[ "$MAX" -gt 4096 ] || MAX=8192
# 2 MiB pages: the dataplane's tables (~19 KiB a slot, one table per port:
# the sandbox's veth port and its memif port), the loadgen's (~9 KiB a
# connection), and what the sandbox needs anyway
SK_SBX_PAGES=$((768 + (MAX * 50) / 2048))
export SK_SBX_PAGES

# config MAX_CONNS - the sandbox's config with a connection table of
# MAX_CONNS slots, no per-address cap, the idle timeouts IDLE_MS, and a
# sold-out item 2 (with --tls, the [tls] port).
config() {
	base_config tcp max_conns tcp max_conns_per_ip tcp idle_timeout_ms tcp idle_new_ms seckill dedup_slots
	cat <<-EOF

		[tcp]
		max_conns = $1
		max_conns_per_ip = 0
		idle_timeout_ms = $IDLE_MS
		idle_new_ms = $IDLE_MS

		[seckill]
		auth = off
		dedup_slots = 1049600

		[item.1]
		name = bench buys
		total = 1000
		dedup_slots = 1048576

		[item.2]
		name = bench sold out
		total = 0
		dedup_slots = 1024
	EOF
	[ "$TLS" = 1 ] || return 0
	cat <<-EOF

		[tls]
		port = 443
		cert = $tmp/ec.pem
		key = $tmp/ec.key
		max_handshakes = $1
		handshake_timeout_ms = 600000
	EOF
}

# rss_anon - the dataplane's anonymous resident memory, bytes (hugepages
# are not in it).
rss_anon() {
	awk '/^RssAnon:/ { print $2 * 1024 }' "/proc/$DP_PID/status"
}

# tls_wait N SECONDS - until /seckill/tls counted N handshakes (full and
# resumed), polled every 0.5 s for at most SECONDS (dies after).
tls_wait() {
	local i hs=0
	for ((i = 0; i < $2 * 2; i++)); do
		snap "$tmp/tls_wait.json" /seckill/tls
		hs=$(python3 -c 'import json, sys; j = json.load(open(sys.argv[1])); j = j.get("total", j); print(j["hs_full"] + j["hs_resumed"])' "$tmp/tls_wait.json")
		[ "$hs" -ge "$1" ] && return 0
		sleep 0.5
	done
	die "tls: $hs handshakes, not $1, within $2 s"
}

# heap FILE - bytes of rte_malloc heap 0 in use, from its snapshot.
heap() {
	python3 -c 'import json, sys; print(json.load(open(sys.argv[1]))["Alloc_size"])' "$1"
}

# --- memory per connection slot ---------------------------------------------
config 4096 >"$tmp/small.ini"
config "$MAX" >"$tmp/big.ini"
sbx_start "$tmp/small.ini"
snap "$tmp/heap_small.json" /eal/heap_info,0
sbx_stop
sbx_start "$tmp/big.ini"
snap "$tmp/heap_big.json" /eal/heap_info,0
HEAP_SMALL=$(heap "$tmp/heap_small.json")
HEAP_BIG=$(heap "$tmp/heap_big.json")
# every port has its own table on the lcore (tcp.max_conns slots each)
NPORTS=$(grep -c '^[[:space:]]*\[port[0-9]*\]' "/run/$SK_SBX/config.ini")
[ "$NPORTS" -ge 1 ] || die "no [portN] section in /run/$SK_SBX/config.ini"
PER_SLOT=$(((HEAP_BIG - HEAP_SMALL) / (MAX - 4096) / NPORTS))
log "heap in use: $HEAP_SMALL B with 4,096 slots, $HEAP_BIG B with $MAX, $NPORTS ports: $PER_SLOT B a slot"

# --- cycles per request against open connections ----------------------------
# measure SUFFIX - every count against the running sandbox's dataplane; the
# results as N$SUFFIX.
measure() {
	local n d dur t0 t1 rc rss0
	for n in ${CONNS//,/ }; do
		d=$RUN/$n$1
		mkdir -p "$d"
		echo "$n$1" >>"$RUN/order"
		# bounded: the opens (64 a pass) take well under a second per 100k
		# on this pair, the window WINDOW s, the rest is margin; a TLS
		# handshake costs the loadgen some 10^6 cycles: 500 a second
		dur=$((WINDOW + 10 + n / 20000))
		[ "$TLS" = 0 ] || dur=$((WINDOW + 10 + n / 500))
		rss0=$(rss_anon)
		lg_start "$d" $((dur + 60)) --mix buy=1 --item 2 --users 100000000 --conns "$n" \
			--depth 1 --inflight 512 --duration "$dur" --drain-ms 1000 "${LG_TLS[@]}"
		tele_wait total.conns_open "$n" $((dur - WINDOW - 2))
		[ "$TLS" = 0 ] || tls_wait "$n" $((dur - WINDOW - 2))
		t0=$EPOCHREALTIME
		snap "$d/t0.json"
		# a measurement window of WINDOW s (a benchmark's window, not a
		# test's wait: nothing is asserted on its length)
		sleep "$WINDOW"
		snap "$d/t1.json"
		t1=$EPOCHREALTIME
		echo "$rss0 $(rss_anon)" >"$d/rss"
		kill -0 "$CUR_PID" 2>/dev/null || die "$n conns: the loadgen ended inside the window ($(tail -3 "$d/log"))"
		rc=0
		lg_wait || rc=$?
		echo "$rc" >"$d/rc"
		echo "$t0 $t1" >"$d/window"
		log "$n$1 conns: $(sed -n 's/^  requests: //p' "$d/log" | head -1) (exit $rc)"
	done
}
sbx_stop # the memory's sandbox
if [ -n "$BASELINE" ]; then
	SK_DATAPLANE=$BASELINE
	sbx_start "$tmp/big.ini"
	measure @base
	sbx_stop
	SK_DATAPLANE=$DP_NEW
fi
sbx_start "$tmp/big.ini"
measure ""
sbx_stop

python3 "$HERE/lib/bench_conns_report.py" "$RUN" "$JSON" "$HEAP_SMALL" "$HEAP_BIG" "$MAX" "$NPORTS"
